package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/weftworks/weft/activities/chunk"
	"github.com/weftworks/weft/internal/docread"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/workflows/dsl"
)

// Ingest is `weft ingest` (and weft.Ingest): the files are read here, in the caller's process,
// and their texts are sent as a run's data (the definition never names a path); the run is a
// forEach of the batched ingest tool, durable on the worker whatever happens to the caller.
// Each document's content hash and chunking are kept in its chunks' metadata, so that a file
// whose hash is stored costs nothing the next time (no run, no embedding request), a changed
// one is ingested with replace (its old chunks go once the new ones are stored) and --prune
// removes the documents whose files are gone. Chunk ids derive from the collection, source,
// index and text, so a run repeated after a crash stores nothing twice.

// IngestStore is what Ingest reads and prunes of the knowledge store (activities.Tools: the
// store the worker writes to).
type IngestStore interface {
	// IngestedDocuments is the metadata of each stored source's first chunk(s).
	IngestedDocuments(ctx context.Context, db, coll string) (map[string][]map[string]any, error)
	// RemoveSources removes every chunk stored under the sources.
	RemoveSources(ctx context.Context, db, coll string, sources []string) (int64, error)
}

// IngestOptions say what to ingest and where.
type IngestOptions struct {
	// Paths are files, folders and globs (docread.Read).
	Paths []string
	// Read says which files to take (include, exclude) and how (the JSON field).
	Read docread.Options
	// DB and Collection are where the chunks go (DB "": the worker's WEFT_DB).
	DB, Collection string
	// Strategy splits the texts ("": markdown for Markdown files, recursive for the others);
	// ChunkSize and ChunkOverlap are in characters (both 0: 512 and 50).
	Strategy                string
	ChunkSize, ChunkOverlap int
	// Model embeds the chunks ("": the worker's default); EstimateModel is the model the
	// estimate prices (the one the worker would use) and PricePerMillion its price.
	Model, EstimateModel string
	PricePerMillion      float64
	// Prune removes the stored documents whose files are gone: those under a folder given, or a
	// file named, that no longer exist.
	Prune bool
	// DryRun reads and plans, and stores and removes nothing.
	DryRun bool
	// Store is where the stored hashes are read and pruned.
	Store IngestStore
	// Progress, when set, is told how far the runs are (documents done of total) about every
	// Interval (default 250ms) while they go.
	Progress func(IngestProgress)
	Interval time.Duration
}

// IngestProgress is how far an ingest's runs are.
type IngestProgress struct {
	Done, Total int
}

// IngestDocument is one file's outcome.
type IngestDocument struct {
	Source string `json:"source"`
	Kind   string `json:"kind"`
	// Status: new, changed, unchanged (its hash was stored: nothing sent), stored (after the
	// run: new or changed, and now in the store), failed (with Error).
	Status string `json:"status"`
	Chunks int    `json:"chunks"`
	Tokens int    `json:"estimatedTokens"`
	Error  string `json:"error,omitempty"`
}

// IngestReport is what Ingest did (or, dry, would do).
type IngestReport struct {
	DB         string `json:"db,omitempty"`
	Collection string `json:"collection"`
	DryRun     bool   `json:"dryRun"`
	// Files read; New, Changed and Unchanged of them; Failed: unreadable, or not stored by the run.
	Files     int `json:"files"`
	New       int `json:"new"`
	Changed   int `json:"changed"`
	Unchanged int `json:"unchanged"`
	Failed    int `json:"failed"`
	Skipped   int `json:"skipped" jsonschema:"files in the folders of no kind weft reads, hidden, or left out by include/exclude"`
	// Chunks and EstimatedTokens are what is sent (new and changed documents); EstimatedCostUSD
	// prices them at EstimateModel's list price.
	Chunks           int     `json:"chunks"`
	EstimatedTokens  int     `json:"estimatedTokens"`
	EstimatedCostUSD float64 `json:"estimatedCostUSD"`
	Model            string  `json:"model,omitempty"`
	// Pruned are the sources removed (or, dry, to remove); PrunedChunks their chunks.
	Pruned       []string `json:"pruned"`
	PrunedChunks int64    `json:"prunedChunks"`
	// Runs are the runs started (or followed: one still running with the same documents).
	Runs      []string          `json:"runs"`
	Usage     *Usage            `json:"usage,omitempty"`
	Documents []IngestDocument  `json:"documents"`
	Problems  []docread.Problem `json:"problems"`
	// RunError is a run's failure, when one failed (the documents it did not store are failed).
	RunError string `json:"runError,omitempty"`
}

// IngestDefinitionName is the workflow name of ingest runs.
const IngestDefinitionName = "weft-ingest"

// maxIngestRequestBytes is how much text one run carries: under MaxRequestBytes with room for
// the definition and the JSON around the texts. More is split over several runs, all started
// before any is waited on (each goes on if the caller stops).
const maxIngestRequestBytes = 1 << 20

// Ingest reads, compares with the store, starts the runs and waits for them (see IngestOptions).
// A file that cannot be read is in Problems, and the others go on; the error is for what stops
// the whole (no store, no Temporal, an invalid option).
func (c *Client) Ingest(ctx context.Context, o IngestOptions) (*IngestReport, error) {
	if o.Collection == "" {
		return nil, &InvalidError{Err: errors.New("ingest needs a collection: name one with --collection")}
	}
	if len(o.Paths) == 0 {
		return nil, &InvalidError{Err: errors.New("ingest needs files, folders or globs to read")}
	}
	if o.Store == nil {
		return nil, errors.New("ingest needs the knowledge store to compare with (IngestOptions.Store)")
	}
	if o.ChunkSize == 0 && o.ChunkOverlap == 0 {
		o.ChunkSize, o.ChunkOverlap = 512, 50
	}
	if o.Strategy != "" && !slices.Contains(chunk.Strategies, o.Strategy) {
		return nil, &InvalidError{Err: fmt.Errorf("chunk strategy %q: use one of %s", o.Strategy, strings.Join(chunk.Strategies, ", "))}
	}
	read := docread.Read(o.Paths, o.Read)
	rep := &IngestReport{DB: o.DB, Collection: o.Collection, DryRun: o.DryRun, Files: len(read.Documents), Skipped: read.Skipped,
		Problems: read.Problems, Pruned: []string{}, Runs: []string{}, Documents: []IngestDocument{}, Model: o.EstimateModel}
	if rep.Problems == nil {
		rep.Problems = []docread.Problem{}
	}
	rep.Failed = len(read.Problems)
	stored, err := o.Store.IngestedDocuments(ctx, o.DB, o.Collection)
	if err != nil {
		return nil, fmt.Errorf("reading what %s holds already: %w", o.Collection, err)
	}
	var send []map[string]any
	var sendIdx []int
	for _, d := range read.Documents {
		strategy := o.Strategy
		if strategy == "" {
			strategy = "recursive"
			if d.Kind == "markdown" {
				strategy = "markdown"
			}
		}
		chunking := fmt.Sprintf("%s/%d/%d/%s", strategy, o.ChunkSize, o.ChunkOverlap, o.Model)
		doc := IngestDocument{Source: d.Source, Kind: d.Kind}
		chunks, err := chunk.Split(d.Text, strategy, o.ChunkSize, o.ChunkOverlap)
		if err != nil {
			return nil, &InvalidError{Err: fmt.Errorf("chunking: %w", err)}
		}
		doc.Chunks = len(chunks)
		for _, ch := range chunks {
			doc.Tokens += (len(ch) + 3) / 4
		}
		switch metas := stored[d.Source]; {
		case len(metas) == 1 && metas[0]["contentHash"] == d.Hash && metas[0]["chunking"] == chunking:
			doc.Status = "unchanged"
			rep.Unchanged++
		default:
			doc.Status = "new"
			if len(metas) > 0 {
				doc.Status = "changed"
			}
			meta := map[string]any{"weftIngest": true, "path": d.Source, "kind": d.Kind, "contentHash": d.Hash, "chunking": chunking}
			if d.Language != "" {
				meta["language"] = d.Language
			}
			// only a stored source has old chunks to remove (removing scans the collection)
			send = append(send, map[string]any{"text": d.Text, "source": d.Source, "metadata": meta, "strategy": strategy, "replace": len(metas) > 0})
			sendIdx = append(sendIdx, len(rep.Documents))
			rep.Chunks += doc.Chunks
			rep.EstimatedTokens += doc.Tokens
		}
		rep.Documents = append(rep.Documents, doc)
	}
	for _, d := range rep.Documents {
		switch d.Status {
		case "new":
			rep.New++
		case "changed":
			rep.Changed++
		}
	}
	rep.EstimatedCostUSD = float64(rep.EstimatedTokens) / 1e6 * o.PricePerMillion
	if o.Prune {
		rep.Pruned = pruneCandidates(read, stored)
	}
	if o.DryRun {
		return rep, nil
	}
	if len(send) > 0 {
		if err := c.runIngest(ctx, o, send, rep); err != nil {
			return rep, err
		}
		// What the store holds now is what the runs stored, whatever they reported.
		after, err := o.Store.IngestedDocuments(ctx, o.DB, o.Collection)
		if err != nil {
			return rep, fmt.Errorf("reading what the runs stored in %s: %w", o.Collection, err)
		}
		for k, i := range sendIdx {
			d := &rep.Documents[i]
			metas := after[d.Source]
			if len(metas) == 1 && metas[0]["contentHash"] == send[k]["metadata"].(map[string]any)["contentHash"] {
				d.Status = "stored"
				continue
			}
			d.Status, d.Error = "failed", "not stored"
			if rep.RunError != "" {
				d.Error = "not stored: " + rep.RunError
			}
			rep.Failed++
		}
	}
	if len(rep.Pruned) > 0 {
		n, err := o.Store.RemoveSources(ctx, o.DB, o.Collection, rep.Pruned)
		if err != nil {
			return rep, err
		}
		rep.PrunedChunks = n
	}
	return rep, nil
}

// pruneCandidates are the stored sources under a folder read, or equal to a file named, whose
// files no longer exist (a file that exists but could not be read, or that include/exclude
// leave out, stays).
func pruneCandidates(read docread.Result, stored map[string][]map[string]any) []string {
	out := []string{}
	for src := range stored {
		in := slices.Contains(read.Files, src)
		for _, root := range read.Roots {
			if root == "." && !strings.HasPrefix(src, "/") && !strings.HasPrefix(src, "../") || strings.HasPrefix(src, strings.TrimSuffix(root, "/")+"/") {
				in = true
			}
		}
		if !in {
			continue
		}
		if _, err := os.Lstat(filepath.FromSlash(src)); errors.Is(err, fs.ErrNotExist) {
			out = append(out, src)
		}
	}
	sort.Strings(out)
	return out
}

// ingestDefinition is the run's definition: a forEach of the batched ingest over the documents
// given as its input, a changed document replacing what its source held.
func ingestDefinition(o IngestOptions) (*dsl.Workflow, error) {
	in := map[string]any{"text": "{{ item.text }}", "source": "{{ item.source }}", "metadata": "{{ item.metadata }}",
		"chunkStrategy": "{{ item.strategy }}", "chunkSize": o.ChunkSize, "chunkOverlap": o.ChunkOverlap,
		"collection": o.Collection, "replace": "{{ item.replace }}"}
	if o.DB != "" {
		in["db"] = o.DB
	}
	if o.Model != "" {
		in["model"] = o.Model
	}
	def := map[string]any{
		"name":        IngestDefinitionName,
		"description": "weft ingest: documents read by the CLI, chunked, embedded and upserted into " + o.Collection,
		"inputs":      map[string]any{"documents": map[string]any{"type": "array", "required": true}},
		"steps": []any{map[string]any{"id": "ingest", "name": "Ingest documents", "tool": "ingest",
			"forEach": "{{ inputs.documents }}", "concurrency": 4, "inputs": in}},
		"output": map[string]any{"documents": "{{ ingest.output.count }}"},
	}
	b, err := json.Marshal(def)
	if err != nil {
		return nil, err
	}
	w, err := dsl.Load(IngestDefinitionName+".json", b)
	if err != nil {
		return nil, &InvalidError{Err: err}
	}
	return w, nil
}

// ingestParts splits the documents into runs of at most maxIngestRequestBytes of JSON.
func ingestParts(docs []map[string]any) [][]any {
	var parts [][]any
	var cur []any
	size := 0
	for _, d := range docs {
		b, _ := json.Marshal(d)
		if len(cur) > 0 && size+len(b) > maxIngestRequestBytes {
			parts, cur, size = append(parts, cur), nil, 0
		}
		cur, size = append(cur, d), size+len(b)
	}
	if len(cur) > 0 {
		parts = append(parts, cur)
	}
	return parts
}

// runIngest starts a run per part (its id derives from the collection and the part's
// documents, so the same call again while it runs follows that run instead of starting
// another), then waits for each, telling Progress.
func (c *Client) runIngest(ctx context.Context, o IngestOptions, docs []map[string]any, rep *IngestReport) error {
	w, err := ingestDefinition(o)
	if err != nil {
		return err
	}
	parts := ingestParts(docs)
	runs := make([]*Run, len(parts))
	for i, part := range parts {
		b, _ := json.Marshal(part)
		h := sha256.Sum256(append([]byte(o.DB+"\x00"+o.Collection+"\x00"), b...))
		id := fmt.Sprintf("weft-ingest-%s-%s", dsl.Slug(o.Collection, "collection"), hex.EncodeToString(h[:6]))
		req, err := Request(w, StartOptions{Source: IngestDefinitionName, Inputs: map[string]any{"documents": part}, Origin: OriginClient})
		if err != nil {
			return err
		}
		run, err := c.StartRequest(ctx, IngestDefinitionName, id, req)
		var running *AlreadyRunningError
		if errors.As(err, &running) {
			run, err = &Run{ID: id, c: c, handle: c.t.GetWorkflow(ctx, id, "")}, nil
		}
		if err != nil {
			return err
		}
		runs[i] = run
		rep.Runs = append(rep.Runs, run.ID)
	}
	stop := make(chan struct{})
	defer close(stop)
	if o.Progress != nil {
		go c.ingestProgress(ctx, o, rep.Runs, len(docs), stop)
	}
	var usage Usage
	for _, run := range runs {
		res, err := run.Get(ctx)
		if ctx.Err() != nil {
			return fmt.Errorf("stopped waiting; the ingest goes on on the worker (weft status --follow %s): %w", run.ID, ctx.Err())
		}
		if err != nil {
			if rep.RunError == "" {
				rep.RunError = Cause(err)
			}
			continue
		}
		u := UsageOf(res.GetUsage())
		usage.PromptTokens += u.PromptTokens
		usage.CompletionTokens += u.CompletionTokens
		usage.ChatTokens += u.ChatTokens
		usage.EmbeddingTokens += u.EmbeddingTokens
		usage.Tokens += u.Tokens
		usage.CostUSD += u.CostUSD
		usage.Calls += u.Calls
	}
	rep.Usage = &usage
	if o.Progress != nil {
		o.Progress(IngestProgress{Done: len(docs), Total: len(docs)})
	}
	return nil
}

func (c *Client) ingestProgress(ctx context.Context, o IngestOptions, ids []string, total int, stop <-chan struct{}) {
	every := o.Interval
	if every <= 0 {
		every = 250 * time.Millisecond
	}
	t := time.NewTicker(every)
	defer t.Stop()
	last := 0
	o.Progress(IngestProgress{Done: 0, Total: total}) // at once: a run waiting for a worker answers no query
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		done := 0
		for _, id := range ids {
			qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			st, err := c.State(qctx, id)
			cancel()
			if err != nil {
				continue
			}
			done += itemsDone(st)
		}
		if done != last {
			last = done
			o.Progress(IngestProgress{Done: min(done, total), Total: total})
		}
	}
}

func itemsDone(st *weftv1.ExecutionState) int {
	for _, s := range st.GetSteps() {
		if s.GetId() == "ingest" {
			return int(s.GetItemsDone())
		}
	}
	return 0
}
