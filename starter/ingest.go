package starter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/internal/docread"
	"github.com/weftworks/weft/internal/english"
)

type ingestOptions struct {
	store                   storeFlags
	conn                    connFlags
	include, exclude        []string
	jsonField               string
	strategy                string
	chunkSize, chunkOverlap int
	model                   string
	prune, dryRun, asJSON   bool
}

func newIngestCommand() *cobra.Command {
	var o ingestOptions
	cmd := &cobra.Command{
		Use:   "ingest PATH... --collection C",
		Short: "Read files, folders and globs and ingest their text into a collection, durably and incrementally",
		Long: "Reads Markdown, text, reStructuredText, CSV, HTML (its text), PDF (its text layer), JSON and JSON Lines\n" +
			"(--json-field of each record) and source code here, and sends their text to the workers as the data of\n" +
			"one run (a forEach of the batched ingest tool): the run goes on if this command is stopped, and a\n" +
			"file whose content is already stored (by hash) costs no embedding request. A changed file replaces\n" +
			"its old chunks; --prune removes the documents whose files are gone. A file weft cannot read is named\n" +
			"with why, and the others go on. Exit status: 0 every file stored, 1 some could not be, 2 invalid input.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, args) },
	}
	o.store.register(cmd)
	o.conn.register(cmd)
	f := cmd.Flags()
	f.StringArrayVar(&o.include, "include", nil, "only files matching this pattern (a name such as *.md, or a path from the folder given with **; repeatable)")
	f.StringArrayVar(&o.exclude, "exclude", nil, "leave out files matching this pattern (as --include; repeatable)")
	f.StringVar(&o.jsonField, "json-field", "text", "the field of each JSON or JSON Lines record that holds its text")
	f.StringVar(&o.strategy, "chunk", "", "chunk strategy: fixed, sentence, paragraph, recursive or markdown (default: markdown for Markdown, recursive otherwise)")
	f.IntVar(&o.chunkSize, "chunk-size", 512, "chunk size in characters")
	f.IntVar(&o.chunkOverlap, "chunk-overlap", 50, "characters consecutive chunks share")
	f.StringVar(&o.model, "model", "", "embedding model (default: the worker's)")
	f.BoolVar(&o.prune, "prune", false, "remove the documents of the folders and files given whose files are gone")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the files, chunks, estimated tokens and cost, and store nothing")
	jsonFlag(cmd, &o.asJSON, "print the report as JSON")
	return cmd
}

func (o *ingestOptions) run(cmd *cobra.Command, args []string) error {
	if o.store.collection == "" {
		return invalid(errors.New("--collection is required: the collection the chunks go to"))
	}
	if o.chunkSize < 100 || o.chunkSize > 8000 {
		return invalid(fmt.Errorf("--chunk-size %d: use 100 to 8000 characters", o.chunkSize))
	}
	if o.chunkOverlap < 0 || o.chunkOverlap >= o.chunkSize {
		return invalid(fmt.Errorf("--chunk-overlap %d: use 0 to less than --chunk-size", o.chunkOverlap))
	}
	cfg := activities.ConfigFromEnv(envFromDev)
	cfg.MongoDBURI = o.store.uri
	tools := activities.NewTools(cfg)
	defer func() { _ = tools.CloseStore(context.WithoutCancel(cmd.Context())) }()
	model := tools.EmbeddingModel(o.model)
	price, _ := activities.PricePerMillion(model)
	opts := weftclient.IngestOptions{Paths: args, DB: o.store.db, Collection: o.store.collection,
		Read:     docread.Options{Include: o.include, Exclude: o.exclude, JSONField: o.jsonField},
		Strategy: o.strategy, ChunkSize: o.chunkSize, ChunkOverlap: o.chunkOverlap, Model: o.model,
		EstimateModel: model, PricePerMillion: price, Prune: o.prune, DryRun: o.dryRun, Store: tools}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	var c *weftclient.Client
	if !o.dryRun {
		var err error
		if c, err = o.conn.dial(ctx, nil); err != nil {
			return err
		}
		defer c.Close()
		if !o.asJSON {
			bar := &ingestBar{w: errOut, tty: isTerminal(errOut)}
			opts.Progress, opts.Interval = bar.show, 250*time.Millisecond
			if !bar.tty {
				opts.Interval = 2 * time.Second
			}
			defer bar.end()
		}
	}
	rep, err := c.Ingest(ctx, opts)
	if err != nil && rep == nil {
		return clientError(err)
	}
	if o.asJSON {
		if jerr := writeJSON(out, rep); jerr != nil {
			return jerr
		}
	} else {
		printIngest(out, errOut, rep)
	}
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(errOut, "weft: %v\n", err)
			return &ExitError{Code: ExitRunning, Silent: true}
		}
		return clientError(err)
	}
	if rep.Failed > 0 {
		return &ExitError{Code: ExitFailed, Silent: true}
	}
	return nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// ingestBar shows how far the runs are: a bar redrawn in place on a terminal, a plain line at
// each change otherwise.
type ingestBar struct {
	w     io.Writer
	tty   bool
	drawn bool
}

func (b *ingestBar) show(p weftclient.IngestProgress) {
	if p.Total == 0 {
		return
	}
	if !b.tty {
		fmt.Fprintf(b.w, "ingest: %d/%d documents\n", p.Done, p.Total)
		return
	}
	const width = 30
	n := p.Done * width / p.Total
	fmt.Fprintf(b.w, "\r[%s%s] %d/%d documents", strings.Repeat("#", n), strings.Repeat("-", width-n), p.Done, p.Total)
	b.drawn = true
}

func (b *ingestBar) end() {
	if b.drawn {
		fmt.Fprintln(b.w)
	}
}

func printIngest(out, errOut io.Writer, r *weftclient.IngestReport) {
	for _, p := range r.Problems {
		fmt.Fprintf(errOut, "✗ %s\n", p)
	}
	for _, d := range r.Documents {
		if d.Status == "failed" {
			fmt.Fprintf(errOut, "✗ %s: %s\n", d.Source, d.Error)
		}
	}
	where := r.Collection
	if r.DB != "" {
		where = r.DB + "." + r.Collection
	}
	send := r.New + r.Changed
	fmt.Fprintf(out, "Read %s", english.Count(r.Files, "file"))
	if r.Skipped > 0 {
		fmt.Fprintf(out, " (%d skipped)", r.Skipped)
	}
	fmt.Fprintf(out, ": %d new, %d changed, %d unchanged", r.New, r.Changed, r.Unchanged)
	if n := len(r.Problems); n > 0 {
		fmt.Fprintf(out, ", %d unreadable", n)
	}
	fmt.Fprintln(out, ".")
	cost := fmt.Sprintf("~%d tokens", r.EstimatedTokens)
	if r.Model != "" {
		cost += fmt.Sprintf(", ~$%.4f with %s", r.EstimatedCostUSD, r.Model)
	}
	verb := "Ingested"
	if r.DryRun {
		verb = "Would ingest"
	}
	if send > 0 {
		fmt.Fprintf(out, "%s %s into %s: %s (%s)", verb, english.Count(send, "document"), where, english.Count(r.Chunks, "chunk"), cost)
		if r.Usage != nil {
			fmt.Fprintf(out, "; used %s", r.Usage)
		}
		fmt.Fprintln(out, ".")
	} else {
		fmt.Fprintf(out, "Nothing to ingest into %s: no embedding request.\n", where)
	}
	if len(r.Runs) > 0 {
		fmt.Fprintf(out, "  %s: %s\n", english.Plural(len(r.Runs), "run"), strings.Join(r.Runs, ", "))
	}
	if len(r.Pruned) > 0 {
		verb = "Pruned"
		if r.DryRun {
			verb = "Would prune"
		}
		fmt.Fprintf(out, "%s %s whose files are gone", verb, english.Count(len(r.Pruned), "document"))
		if !r.DryRun {
			fmt.Fprintf(out, " (%s)", english.Count(int(r.PrunedChunks), "chunk"))
		}
		fmt.Fprintf(out, ": %s\n", strings.Join(r.Pruned, ", "))
	}
	if r.DryRun {
		fmt.Fprintln(out, "Dry run: nothing stored or removed.")
	}
}
