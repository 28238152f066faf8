package activities

import (
	"context"

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
	{"local-bm25-rrf", "local", "rerank", nil, 0, 0, "Offline: BM25 fused with vector similarity by reciprocal rank fusion (used without a Voyage key)."},
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
