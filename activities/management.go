package activities

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/weftworks/weft/activities/chunk"
	"github.com/weftworks/weft/activities/mongostore"

	"github.com/weftworks/weft/activities/embedder"
	"github.com/weftworks/weft/activities/toolspec"
)

// Model is one catalog entry. Prices are list prices in USD per million tokens as published by
// the providers when the catalog was written (CatalogDate); check the provider before budgeting.
type Model struct {
	Name        string  `json:"name"`
	Provider    string  `json:"provider"`
	Category    string  `json:"category"` // embedding, rerank, generation
	Dimensions  []int   `json:"dimensions,omitempty"`
	Context     int     `json:"contextTokens"`
	PricePerM   float64 `json:"pricePerMillionTokens"`
	Description string  `json:"description"`
}

// CatalogDate is when the prices below were taken.
const CatalogDate = "2026-11"

// Catalog lists the models weft knows, cheapest embedding last-resort first.
var Catalog = []Model{
	{embedder.Model, "local", "embedding", []int{embedder.Dimensions}, 0, 0, "Offline SIF-weighted GloVe word vectors; no key, no network; weak next to trained encoders."},
	{"voyage-4-large", "voyage", "embedding", []int{1024, 256, 512, 2048}, 32000, 0.12, "Voyage's most accurate general-purpose embedding model."},
	{"voyage-4", "voyage", "embedding", []int{1024, 256, 512, 2048}, 32000, 0.06, "Balanced accuracy and cost; shares an embedding space with voyage-4-large and voyage-4-lite."},
	{"voyage-4-lite", "voyage", "embedding", []int{1024, 256, 512, 2048}, 32000, 0.02, "Fast and cheap; embed queries with it against documents embedded with voyage-4-large (asymmetric retrieval)."},
	{"voyage-code-3", "voyage", "embedding", []int{1024, 256, 512, 2048}, 32000, 0.18, "Tuned for source code."},
	{"text-embedding-3-small", "openai", "embedding", []int{1536}, 8191, 0.02, "OpenAI's small embedding model (OpenAI-compatible endpoint)."},
	{"text-embedding-3-large", "openai", "embedding", []int{3072}, 8191, 0.13, "OpenAI's large embedding model (OpenAI-compatible endpoint)."},
	{"rerank-2.5", "voyage", "rerank", nil, 32000, 0.05, "Voyage's accurate reranker."},
	{"rerank-2.5-lite", "voyage", "rerank", nil, 32000, 0.02, "Faster, cheaper reranker."},
	{"local-bm25-hybrid", "local", "rerank", nil, 0, 0, "Offline: BM25 (texts and source names) blended with vector similarity into a relevance in [0,1]; how search ranks, and the reranker without a Voyage key."},
}

func init() {
	bind(toolspec.Models, (*Tools).models)
	bind(toolspec.Collections, (*Tools).collections)
	bind(toolspec.Ingest, (*Tools).ingest)
	bindBatch(toolspec.Ingest, (*Tools).ingestBatch)
}

func (t *Tools) models(ctx context.Context, in toolspec.ModelsIn) (toolspec.ModelsOut, *toolspec.Usage, error) {
	out := []toolspec.CatalogModel{}
	for _, m := range Catalog {
		if in.Category == "all" || m.Category == in.Category {
			out = append(out, toolspec.CatalogModel{Name: m.Name, Provider: m.Provider, Category: m.Category, Dimensions: m.Dimensions,
				Context: m.Context, PricePerM: m.PricePerM, Description: m.Description})
		}
	}
	return toolspec.ModelsOut{Models: out, PricesAsOf: CatalogDate}, nil, nil
}

func (t *Tools) collections(ctx context.Context, in toolspec.CollectionsIn) (toolspec.CollectionsOut, *toolspec.Usage, error) {
	store, err := t.Store(ctx)
	if err != nil {
		return toolspec.CollectionsOut{}, nil, err
	}
	db := t.databaseNamed(in.DB)
	cols, err := store.Collections(ctx, db)
	if err != nil {
		return toolspec.CollectionsOut{}, nil, err
	}
	list := make([]toolspec.CollectionInfo, 0, len(cols))
	for _, c := range cols {
		if Reserved(c.Name) {
			continue
		}
		list = append(list, toolspec.CollectionInfo{Name: c.Name, DocumentCount: c.DocumentCount, HasVectorIndex: c.HasVectorIndex,
			EmbeddingField: c.EmbeddingField, Dimensions: c.Dimensions, Model: c.Model})
	}
	return toolspec.CollectionsOut{Database: db, Collections: list}, nil, nil
}

// ingest chunks a text, embeds the chunks as documents and upserts them. Chunk ids derive from
// (collection, source, index, content), so a retry or replay overwrites instead of duplicating.
func (t *Tools) ingest(ctx context.Context, in toolspec.IngestIn) (toolspec.IngestOut, *toolspec.Usage, error) {
	var none toolspec.IngestOut
	coll, source, err := t.ingestTarget(in)
	if err != nil {
		return none, nil, err
	}
	text := in.Text
	chunks, err := chunk.Split(text, in.ChunkStrategy, in.ChunkSize, in.ChunkOverlap)
	if err != nil {
		return none, nil, &InputError{Msg: err.Error()}
	}
	store, err := t.Store(ctx)
	if err != nil {
		return none, nil, err
	}
	db := t.databaseNamed(in.DB)
	model := in.Model
	meta := in.Metadata
	ids := make([]string, len(chunks))
	for i := range chunks {
		ids[i] = mongostore.ChunkID(coll, source, i, chunks[i])
	}
	model, tokens, err := t.embedAndStore(ctx, store, db, coll, model, chunks, func(i int) mongostore.Chunk {
		return mongostore.Chunk{ID: ids[i], Text: chunks[i], Source: source, ChunkIndex: i, Metadata: meta}
	})
	if err != nil {
		return none, nil, err
	}
	if in.Replace {
		if err := replaceSources(ctx, store, db, coll, []string{source}, ids); err != nil {
			return none, nil, err
		}
	}
	return toolspec.IngestOut{Source: source, ChunksCreated: len(chunks), Collection: coll, DB: db, Model: model, Metadata: meta},
		&toolspec.Usage{EmbeddingTokens: tokens}, nil
}

// ingestBatch ingests many items' texts at once: the chunks of every item that goes to the same
// database, collection and model are embedded together, 64 a request as one ingest sends its
// own, and upserted together, so a forEach over many short documents makes one request per 64
// chunks instead of at least one per document. Each item gets the output its own ingest would
// give; an item naming no collection, whose metadata cannot be stored or whose text cannot be
// split gets its own error and the others go on (AdaptBatch isolates an item whose chunk the
// provider refuses). Every chunk of the call is embedded before any is stored, so a call that
// fails stores nothing: splitting it to isolate a refused item never leaves part of that item
// behind. A call of one item is ingest itself (a large document is embedded and stored 64
// chunks at a time, not held whole).
func (t *Tools) ingestBatch(ctx context.Context, ins []toolspec.IngestIn) ([]toolspec.IngestOut, *toolspec.Usage, error) {
	if len(ins) == 1 {
		out, usage, err := t.ingest(ctx, ins[0])
		return []toolspec.IngestOut{out}, usage, err
	}
	type group struct{ db, coll, model string }
	var (
		order   []group
		members = map[group][]int{}
		chunks  = make([][]string, len(ins))
		outs    = make([]toolspec.IngestOut, len(ins))
		failed  itemErrors
	)
	fail := func(i int, err error) {
		if failed == nil {
			failed = itemErrors{}
		}
		failed[i] = err
	}
	for i, in := range ins {
		coll, source, err := t.ingestTarget(in)
		if err != nil {
			fail(i, err)
			continue
		}
		if chunks[i], err = chunk.Split(in.Text, in.ChunkStrategy, in.ChunkSize, in.ChunkOverlap); err != nil {
			fail(i, &InputError{Msg: err.Error()})
			continue
		}
		outs[i] = toolspec.IngestOut{Source: source, ChunksCreated: len(chunks[i]), Collection: coll, DB: t.databaseNamed(in.DB), Metadata: in.Metadata}
		g := group{outs[i].DB, coll, in.Model}
		if _, seen := members[g]; !seen {
			order = append(order, g)
		}
		members[g] = append(members[g], i)
	}
	if len(order) == 0 {
		return outs, nil, failed
	}
	store, err := t.Store(ctx)
	if err != nil {
		return nil, nil, err
	}
	// Embed every group's chunks first, then store them all.
	var usage *toolspec.Usage
	docs := make(map[group][]mongostore.Chunk, len(order))
	for _, g := range order {
		idx := members[g]
		var texts []string
		for _, i := range idx {
			texts = append(texts, chunks[i]...)
		}
		emb, err := t.embedChunks(ctx, store, g.db, g.coll, g.model, texts)
		if err != nil {
			if err := groupFailed(toolspec.Ingest.Spec, &failed, idx, len(order), err); err != nil {
				return nil, usage, err
			}
			continue
		}
		usage = sumUsage(usage, &toolspec.Usage{EmbeddingTokens: emb.Tokens})
		c := 0
		for _, i := range idx {
			outs[i].Model = emb.Model
			for k, text := range chunks[i] {
				docs[g] = append(docs[g], emb.chunk(c, mongostore.Chunk{ID: mongostore.ChunkID(g.coll, outs[i].Source, k, text), Text: text,
					Source: outs[i].Source, ChunkIndex: k, Metadata: ins[i].Metadata}))
				c++
			}
		}
	}
	for _, g := range order {
		if err := storeChunks(ctx, store, g.db, g.coll, docs[g]); err != nil {
			return nil, usage, err
		}
		var replace, ids []string
		for _, i := range members[g] {
			if ins[i].Replace && failed[i] == nil {
				replace = append(replace, outs[i].Source)
			}
		}
		if len(replace) == 0 {
			continue
		}
		for _, d := range docs[g] {
			ids = append(ids, d.ID)
		}
		if err := replaceSources(ctx, store, g.db, g.coll, replace, ids); err != nil {
			return nil, usage, err
		}
	}
	if failed != nil {
		return outs, usage, failed
	}
	return outs, usage, nil
}

// replaceSources removes the chunks of sources that are not among ids (those just written): what
// an ingest with replace leaves is the new text's chunks alone. The new chunks are stored first,
// so a search never finds a replaced source empty, and a retry deletes what an attempt cut off
// before its delete left behind.
func replaceSources(ctx context.Context, store *mongostore.Store, db, coll string, sources, ids []string) error {
	if ids == nil {
		ids = []string{}
	}
	if _, err := store.Delete(ctx, db, coll, map[string]any{"source": map[string]any{"$in": sources}, "_id": map[string]any{"$nin": ids}}); err != nil {
		return fmt.Errorf("removing the old chunks of %s from %s.%s (the new ones are stored; a retry removes them): %w", sources[0], db, coll, err)
	}
	return nil
}

// ingestTarget is the collection an ingest writes to and the source its chunks are stored
// under, or the item's own error: no collection, a reserved one, or metadata the store cannot
// keep.
func (t *Tools) ingestTarget(in toolspec.IngestIn) (coll, source string, err error) {
	if coll, err = t.collectionNamed(in.Collection); err != nil {
		return "", "", err
	}
	if err := storableMetadata(in.Metadata, "metadata"); err != nil {
		return "", "", err
	}
	source = in.Source
	if source == "" {
		source = "inline:" + mongostore.ChunkID(coll, "", 0, in.Text)[:12]
	}
	return coll, source, nil
}

// storableMetadata refuses metadata keys the store cannot keep or filter on: one starting with
// "$" or holding "." (metadata.filter reads "a.b" as a path), at any depth.
func storableMetadata(v any, at string) error {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if k == "" || strings.HasPrefix(k, "$") || strings.Contains(k, ".") {
				return &InputError{Msg: fmt.Sprintf("%s: key %q cannot be stored: a metadata key may not be empty, start with $ or hold a dot; rename it (a_b instead of a.b)", at, k)}
			}
			if err := storableMetadata(e, at+"."+k); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range v {
			if err := storableMetadata(e, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// keepalive heartbeats every interval, with details, until stop is called, so a dead worker is
// noticed within the tool's heartbeat timeout even while one batch takes long.
func keepalive(ctx context.Context, every time.Duration, details ...any) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx, details...)
			}
		}
	}()
	// once stop returns no heartbeat of keepalive's is in flight, so a heartbeat recorded after it
	// is the attempt's last
	return sync.OnceFunc(func() { close(done); <-exited })
}
