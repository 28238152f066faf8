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
	return t.collectionNamed(str(in, "collection"))
}

// collectionNamed checks the collection a step names.
func (t *Tools) collectionNamed(c string) (string, error) {
	if c != "" {
		if Reserved(c) {
			return "", &InputError{Msg: fmt.Sprintf("collection %q: collections named %s* are weft's own (long-term memory, stored outputs) and are not searched, queried, ingested into or aggregated by tools: use recall for memory, or pick another collection name", c, reservedPrefix)}
		}
		return c, nil
	}
	return "", &InputError{Msg: `no collection: pass "collection" in the tool's arguments (in a workflow file, set it in the step's inputs or once in defaults.collection)`}
}

// candidates is how many vector-search hits are ranked for limit results: BM25 can only promote
// a document the vector search found.
func candidates(limit int) int { return max(limit*4, 20) }

// retrieve embeds the query with the collection's own model (unless the step names one),
// vector-searches n candidates and ranks them by hybrid: results best first, not cut to a limit.
func (t *Tools) retrieve(ctx context.Context, in map[string]any, n int) ([]any, map[string]any, int64, error) {
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
	hits, path, err := store.Search(ctx, db, coll, emb.Vectors[0], n, filter)
	var de *mongostore.DimensionError
	if errors.As(err, &de) {
		return nil, nil, 0, &InputError{Msg: err.Error()}
	}
	if err != nil {
		return nil, nil, 0, err
	}
	results, err := hybrid(str(in, "query"), hits, path)
	if err != nil {
		return nil, nil, 0, err
	}
	meta := map[string]any{"db": db, "collection": coll, "model": emb.Model, "searchPath": path, "ranking": rank.Model,
		"retrievalTimeMs": time.Since(start).Milliseconds()}
	if len(hits) == 0 {
		if w := emptyCollectionWarning(ctx, store, db, coll); w != "" {
			meta["warnings"] = []string{w}
		}
	}
	return results, meta, emb.Tokens, nil
}

// similarity is a hit's cosine similarity to the query whichever path found it: $vectorSearch
// reports (1+cosine)/2 (the index weft creates uses cosine), the exact search the cosine itself.
func similarity(path string, score float64) float64 {
	if path == mongostore.PathVectorSearch {
		return 2*score - 1
	}
	return score
}

// hybrid ranks a vector search's hits by rank.Fuse, the same fusion on both search paths and in
// the offline rerank: each result's score is its relevance in [0,1] (vector similarity blended
// with BM25 over the hits' texts and source names), and it carries both parts, similarity and
// keywordScore.
func hybrid(query string, hits []mongostore.Hit, path string) ([]any, error) {
	cands := make([]rank.Candidate, len(hits))
	for i, h := range hits {
		cands[i] = rank.Candidate{Text: h.Content, Name: h.Source, Similarity: similarity(path, h.Score)}
	}
	scores, err := rank.Fuse(query, cands)
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, len(hits))
	for _, i := range rank.Ranked(scores) {
		h, sc := hits[i], scores[i]
		out = append(out, map[string]any{"source": h.Source, "content": h.Content, "score": sc.Relevance,
			"similarity": sc.Similarity, "keywordScore": sc.Keywords, "metadata": h.Metadata})
	}
	return out, nil
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

// search is hybrid retrieval: a wider vector search whose hits are ranked by hybrid, cut to limit.
func (t *Tools) search(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
	limit := num(in, "limit", 10)
	results, meta, tokens, err := t.retrieve(ctx, in, candidates(limit))
	if err != nil {
		return nil, nil, err
	}
	if len(results) > limit {
		results = results[:limit]
	}
	meta["resultCount"] = len(results)
	return withWarnings(map[string]any{"query": str(in, "query"), "results": results, "metadata": meta}, meta), &toolspec.Usage{EmbeddingTokens: tokens}, nil
}

// query is search, then (unless rerank is false) Voyage's reranker over the candidates when a
// key is configured. Offline the reranker would be the same fusion search already ranked by, so
// the results keep their order and rerankedScore repeats score.
func (t *Tools) query(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
	limit := num(in, "limit", 5)
	rerank := true
	if b, ok := in["rerank"].(bool); ok {
		rerank = b
	}
	results, meta, tokens, err := t.retrieve(ctx, in, candidates(limit))
	if err != nil {
		return nil, nil, err
	}
	usage := &toolspec.Usage{EmbeddingTokens: tokens}
	meta["reranked"] = false
	switch {
	case rerank && len(results) > 0 && t.voyage != nil:
		ranked, model, rtokens, err := t.rerankDocs(ctx, str(in, "query"), results, "", limit)
		if err != nil {
			return nil, nil, err
		}
		results = ranked
		meta["reranked"], meta["rerankModel"] = true, model
		usage.TotalTokens += rtokens
	case rerank && len(results) > 0:
		for _, r := range results {
			m := r.(map[string]any)
			m["rerankedScore"] = m["score"]
		}
		meta["reranked"], meta["rerankModel"] = true, rank.Model
	}
	if len(results) > limit {
		results = results[:limit]
	}
	meta["resultCount"] = len(results)
	return withWarnings(map[string]any{"query": str(in, "query"), "results": results, "metadata": meta}, meta), usage, nil
}

// offlineRerank ranks documents by rank.Fuse, the fusion search uses, with local-embedder
// similarity (the documents may come from collections embedded by different models) and their
// source names where they have them.
func offlineRerank(query string, texts, names []string, limit int) (*provider.Ranking, error) {
	e, err := embedder.Load()
	if err != nil {
		return nil, err
	}
	q := e.Embed(query)
	cands := make([]rank.Candidate, len(texts))
	for i, t := range texts {
		cands[i] = rank.Candidate{Text: t, Name: names[i], Similarity: embedder.Cosine(q, e.Embed(t))}
	}
	scores, err := rank.Fuse(query, cands)
	if err != nil {
		return nil, err
	}
	out := &provider.Ranking{Model: rank.Model}
	for _, i := range rank.Ranked(scores) {
		out.Results = append(out.Results, provider.Ranked{Index: i, Score: scores[i].Relevance})
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
// adding rerankedScore in [0,1]: with Voyage's reranker when a key is configured, otherwise
// offline with rank.Fuse (BM25 over the documents and their sources blended with local-embedder
// similarity).
func (t *Tools) rerankDocs(ctx context.Context, query string, docs []any, model string, limit int) ([]any, string, int64, error) {
	texts := make([]string, len(docs))
	names := make([]string, len(docs))
	for i, d := range docs {
		s, ok := docText(d)
		if !ok {
			return nil, "", 0, &InputError{Msg: fmt.Sprintf("documents[%d] is neither text nor an object with content or text", i)}
		}
		texts[i] = s
		if m, ok := d.(map[string]any); ok {
			names[i], _ = m["source"].(string)
		}
	}
	var r *provider.Ranking
	var err error
	if t.voyage != nil && model != rank.Model {
		if model == "" {
			model = "rerank-2.5"
		}
		r, err = t.voyage.Rerank(ctx, query, texts, model, limit)
	} else {
		r, err = offlineRerank(query, texts, names, limit)
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
