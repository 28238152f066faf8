package activities

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/weftworks/weft/activities/embedder"
	"github.com/weftworks/weft/activities/mongostore"
	"github.com/weftworks/weft/activities/provider"
	"github.com/weftworks/weft/activities/rank"
	"github.com/weftworks/weft/activities/toolspec"
)

// reservedPrefix marks weft's own collections (weft_memory: what agents remembered, by scope;
// weft_blobs: claim-checked outputs): search, query, ingest and aggregate do not reach them, so
// a workflow or an agent reads memory only through recall, in its own scope (docs/security.md).
const reservedPrefix = "weft_"

// Reserved reports whether a collection is weft's own.
func Reserved(collection string) bool { return strings.HasPrefix(collection, reservedPrefix) }

func (t *Tools) collection(in map[string]any) (string, error) {
	if c := str(in, "collection"); c != "" {
		if Reserved(c) {
			return "", &InputError{Msg: fmt.Sprintf("collection %q: collections named %s* are weft's own (long-term memory, stored outputs) and are not searched, queried, ingested into or aggregated by tools: use recall for memory, or pick another collection name", c, reservedPrefix)}
		}
		return c, nil
	}
	return "", &InputError{Msg: "no collection: set inputs.collection or defaults.collection in the workflow"}
}

// searchHits embeds the query with the collection's own model (unless the step names one) and
// searches.
func (t *Tools) searchHits(ctx context.Context, in map[string]any, limit int) ([]mongostore.Hit, map[string]any, int64, error) {
	start := time.Now()
	coll, err := t.collection(in)
	if err != nil {
		return nil, nil, 0, err
	}
	store, err := t.Store(ctx)
	if err != nil {
		return nil, nil, 0, err
	}
	if f, ok := in["filter"].(map[string]any); ok {
		if err := mongostore.ValidateFilter(f); err != nil {
			return nil, nil, 0, &InputError{Msg: err.Error()}
		}
	}
	db := t.database(in)
	model := str(in, "model")
	if model == "" {
		if model, err = store.CollectionModel(ctx, db, coll); err != nil {
			return nil, nil, 0, err
		}
	}
	emb, err := t.embedTexts(ctx, []string{str(in, "query")}, "query", model, 0)
	if err != nil {
		return nil, nil, 0, err
	}
	filter, _ := in["filter"].(map[string]any)
	hits, path, err := store.Search(ctx, db, coll, emb.Vectors[0], limit, filter)
	var de *mongostore.DimensionError
	if errors.As(err, &de) {
		return nil, nil, 0, &InputError{Msg: err.Error()}
	}
	if err != nil {
		return nil, nil, 0, err
	}
	meta := map[string]any{"db": db, "collection": coll, "model": emb.Model, "searchPath": path, "retrievalTimeMs": time.Since(start).Milliseconds()}
	if len(hits) == 0 {
		if w := emptyCollectionWarning(ctx, store, db, coll); w != "" {
			meta["warnings"] = []string{w}
		}
	}
	return hits, meta, emb.Tokens, nil
}

// emptyCollectionWarning says so when a search found nothing because the collection holds
// nothing: the usual cause is a wrong db or collection name, which would otherwise look like an
// honest "no results".
func emptyCollectionWarning(ctx context.Context, store *mongostore.Store, db, coll string) string {
	n, err := store.Count(ctx, db, coll)
	if err != nil || n > 0 {
		return ""
	}
	msg := fmt.Sprintf("collection %q in db %q has no documents", coll, db)
	if others, err := store.NonEmpty(ctx, 8); err == nil && len(others) > 0 {
		msg += "; collections with documents: " + strings.Join(others, ", ")
	} else {
		msg += "; ingest into it first (weft run batch-ingest), or check the db and collection names"
	}
	return msg
}

// withWarnings copies the search's warnings to the top of a tool's output, where the worker
// lifts them into the step's warnings.
func withWarnings(out map[string]any, meta map[string]any) map[string]any {
	if w, ok := meta["warnings"]; ok {
		out["warnings"] = w
		delete(meta, "warnings")
	}
	return out
}

func hitList(hits []mongostore.Hit) []any {
	out := make([]any, len(hits))
	for i, h := range hits {
		out[i] = map[string]any{"source": h.Source, "content": h.Content, "score": h.Score, "metadata": h.Metadata}
	}
	return out
}

func (t *Tools) search(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
	hits, meta, tokens, err := t.searchHits(ctx, in, num(in, "limit", 10))
	if err != nil {
		return nil, nil, err
	}
	meta["resultCount"] = len(hits)
	return withWarnings(map[string]any{"query": str(in, "query"), "results": hitList(hits), "metadata": meta}, meta), &toolspec.Usage{EmbeddingTokens: tokens}, nil
}

// query is two-stage retrieval: a wider vector search, then rerank to limit.
func (t *Tools) query(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
	limit := num(in, "limit", 5)
	rerank := true
	if b, ok := in["rerank"].(bool); ok {
		rerank = b
	}
	candidates := limit
	if rerank {
		candidates = max(limit*4, 20)
	}
	hits, meta, tokens, err := t.searchHits(ctx, in, candidates)
	if err != nil {
		return nil, nil, err
	}
	results := hitList(hits)
	usage := &toolspec.Usage{EmbeddingTokens: tokens}
	meta["reranked"] = false
	if rerank && len(results) > 0 {
		ranked, model, rtokens, err := t.rerankDocs(ctx, str(in, "query"), results, "", limit)
		if err != nil {
			return nil, nil, err
		}
		results = ranked
		meta["reranked"], meta["rerankModel"] = true, model
		usage.TotalTokens += rtokens
	}
	if len(results) > limit {
		results = results[:limit]
	}
	meta["resultCount"] = len(results)
	return withWarnings(map[string]any{"query": str(in, "query"), "results": results, "metadata": meta}, meta), usage, nil
}

// offlineRerank fuses BM25 with local-embedder similarity.
func offlineRerank(query string, texts []string, limit int) (*provider.Ranking, error) {
	e, err := embedder.Load()
	if err != nil {
		return nil, err
	}
	q := e.Embed(query)
	sim := make([]float64, len(texts))
	for i, t := range texts {
		sim[i] = embedder.Cosine(q, e.Embed(t))
	}
	fused, err := rank.Hybrid(query, texts, sim)
	if err != nil {
		return nil, err
	}
	out := &provider.Ranking{Model: rank.Model}
	for _, i := range rank.Order(fused) {
		out.Results = append(out.Results, provider.Ranked{Index: i, Score: fused[i]})
	}
	if limit > 0 && len(out.Results) > limit {
		out.Results = out.Results[:limit]
	}
	return out, nil
}

// docText is the text a reranker reads for a document: a string, or a result's content/text.
func docText(d any) (string, bool) {
	switch x := d.(type) {
	case string:
		return x, true
	case map[string]any:
		for _, k := range []string{"content", "text"} {
			if s, ok := x[k].(string); ok {
				return s, true
			}
		}
	}
	return "", false
}

// rerankDocs orders documents (strings or result objects), keeping each object's fields and
// adding rerankedScore: with Voyage's reranker when a key is configured, otherwise offline with
// BM25 fused with local-embedder similarity (rank.Model).
func (t *Tools) rerankDocs(ctx context.Context, query string, docs []any, model string, limit int) ([]any, string, int64, error) {
	texts := make([]string, len(docs))
	for i, d := range docs {
		s, ok := docText(d)
		if !ok {
			return nil, "", 0, &InputError{Msg: fmt.Sprintf("documents[%d] is neither text nor an object with content or text", i)}
		}
		texts[i] = s
	}
	var r *provider.Ranking
	var err error
	if t.voyage != nil && model != rank.Model {
		if model == "" {
			model = "rerank-2.5"
		}
		r, err = t.voyage.Rerank(ctx, query, texts, model, limit)
	} else {
		r, err = offlineRerank(query, texts, limit)
	}
	if err != nil {
		return nil, "", 0, err
	}
	out := make([]any, 0, len(r.Results))
	for _, rk := range r.Results {
		item := map[string]any{}
		if m, ok := docs[rk.Index].(map[string]any); ok {
			for k, v := range m {
				item[k] = v
			}
		} else {
			item["content"] = texts[rk.Index]
		}
		item["index"] = rk.Index
		item["rerankedScore"] = rk.Score
		out = append(out, item)
	}
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].(map[string]any)["rerankedScore"].(float64) > out[j].(map[string]any)["rerankedScore"].(float64)
	})
	return out, r.Model, r.Tokens, nil
}

func (t *Tools) rerank(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
	var docs []any
	switch d := in["documents"].(type) {
	case []any:
		docs = d
	case map[string]any:
		docs, _ = d["results"].([]any)
	}
	if len(docs) == 0 {
		return nil, nil, &InputError{Msg: "documents is empty: pass texts, result objects, or a step output holding results"}
	}
	ranked, model, tokens, err := t.rerankDocs(ctx, str(in, "query"), docs, str(in, "model"), num(in, "limit", 0))
	if err != nil {
		return nil, nil, err
	}
	return map[string]any{"query": str(in, "query"), "results": ranked, "metadata": map[string]any{"model": model, "resultCount": len(ranked)}},
		&toolspec.Usage{TotalTokens: tokens}, nil
}
