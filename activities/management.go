package activities

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
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

func (t *Tools) models(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
	cat := str(in, "category")
	var out []any
	for _, m := range Catalog {
		if cat == "" || cat == "all" || m.Category == cat {
			out = append(out, map[string]any{"name": m.Name, "provider": m.Provider, "category": m.Category, "dimensions": m.Dimensions,
				"contextTokens": m.Context, "pricePerMillionTokens": m.PricePerM, "description": m.Description})
		}
	}
	return map[string]any{"models": out, "pricesAsOf": CatalogDate}, nil, nil
}

func (t *Tools) collections(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
	store, err := t.Store(ctx)
	if err != nil {
		return nil, nil, err
	}
	db := t.database(in)
	cols, err := store.Collections(ctx, db)
	if err != nil {
		return nil, nil, err
	}
	list := make([]any, 0, len(cols))
	for _, c := range cols {
		if Reserved(c.Name) {
			continue
		}
		list = append(list, map[string]any{"name": c.Name, "documentCount": c.DocumentCount, "hasVectorIndex": c.HasVectorIndex,
			"embeddingField": c.EmbeddingField, "dimensions": c.Dimensions, "model": c.Model})
	}
	return map[string]any{"database": db, "collections": list}, nil, nil
}

// ingest chunks a text, embeds the chunks as documents and upserts them. Chunk ids derive from
// (collection, source, index, content), so a retry or replay overwrites instead of duplicating.
func (t *Tools) ingest(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
	coll, err := t.collection(in)
	if err != nil {
		return nil, nil, err
	}
	text := str(in, "text")
	source := str(in, "source")
	if source == "" {
		source = "inline:" + mongostore.ChunkID(coll, "", 0, text)[:12]
	}
	chunks, err := chunk.Split(text, str(in, "chunkStrategy"), num(in, "chunkSize", 512), num(in, "chunkOverlap", 50))
	if err != nil {
		return nil, nil, &InputError{Msg: err.Error()}
	}
	store, err := t.Store(ctx)
	if err != nil {
		return nil, nil, err
	}
	db := t.database(in)
	model := str(in, "model")
	if model == "" {
		if model, err = store.CollectionModel(ctx, db, coll); err != nil {
			return nil, nil, err
		}
	}
	stop := keepalive(ctx, 3*time.Second)
	defer stop()
	var tokens int64
	meta, _ := in["metadata"].(map[string]any)
	now := time.Now().UTC()
	const batch = 64
	for start := 0; start < len(chunks); start += batch {
		end := min(start+batch, len(chunks))
		heartbeat(ctx, end)
		emb, err := t.embedTexts(ctx, chunks[start:end], "document", model, 0)
		if err != nil {
			return nil, nil, err
		}
		model = emb.Model
		tokens += emb.Tokens
		docs := make([]mongostore.Chunk, 0, end-start)
		for i, c := range chunks[start:end] {
			idx := start + i
			docs = append(docs, mongostore.Chunk{ID: mongostore.ChunkID(coll, source, idx, c), Text: c, Source: source, ChunkIndex: idx,
				Metadata: meta, Model: emb.Model, Embedding: bson.NewVector(emb.Vectors[i]), CreatedAt: now, UpdatedAt: now})
		}
		if err := store.Upsert(ctx, db, coll, docs); err != nil {
			return nil, nil, err
		}
	}
	return map[string]any{"source": source, "chunksCreated": len(chunks), "collection": coll, "db": db, "model": model, "metadata": meta},
		&toolspec.Usage{EmbeddingTokens: tokens}, nil
}

// keepalive heartbeats every interval until stop is called, so a dead worker is noticed within
// the tool's heartbeat timeout even while one batch takes long.
func keepalive(ctx context.Context, every time.Duration) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { close(done) }
}

// heartbeat reports progress when running as an activity, so a dead worker is noticed quickly.
func heartbeat(ctx context.Context, done int) {
	if activity.IsActivity(ctx) {
		activity.RecordHeartbeat(ctx, done)
	}
}
