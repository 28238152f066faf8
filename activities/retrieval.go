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
// vector-searches n candidates and ranks them by hybrid: results best first, not cut to a limit,
// with warnings when the search found nothing because the collection is empty.
func (t *Tools) retrieve(ctx context.Context, query, dbName, collection, model string, filter map[string]any, n int) ([]toolspec.Document, toolspec.ResultsMetadata, []string, int64, error) {
	var meta toolspec.ResultsMetadata
	start := time.Now()
	near, err := t.nearest(ctx, query, "query", dbName, collection, model, filter, n)
	if err != nil {
		return nil, meta, nil, 0, err
	}
	results, err := hybrid(query, near.hits, near.path)
	if err != nil {
		return nil, meta, nil, 0, err
	}
	took := time.Since(start).Milliseconds()
	meta = toolspec.ResultsMetadata{DB: near.db, Collection: near.coll, Model: near.model, SearchPath: near.path, Ranking: rank.Model, RetrievalTimeMs: &took}
	return results, meta, near.warnings, near.tokens, nil
}

// nearestHits is what nearest found.
type nearestHits struct {
	hits                  []mongostore.Hit
	path, db, coll, model string // the search path, where it searched, the embedding's model
	tokens                int64  // the embedding's, also when the search failed
	warnings              []string
}

// nearest embeds text as inputType with the collection's own model (unless model is given) and
// vector-searches n candidates, best first, with a warning when nothing was found because the
// collection is empty.
func (t *Tools) nearest(ctx context.Context, text, inputType, dbName, collection, model string, filter map[string]any, n int) (nearestHits, error) {
	var near nearestHits
	coll, err := t.collectionNamed(collection)
	if err != nil {
		return near, err
	}
	store, err := t.Store(ctx)
	if err != nil {
		return near, err
	}
	if filter != nil {
		if err := mongostore.ValidateFilter(filter); err != nil {
			return near, &InputError{Msg: err.Error()}
		}
	}
	db := t.databaseNamed(dbName)
	if model == "" {
		if model, err = store.CollectionModel(ctx, db, coll); err != nil {
			return near, err
		}
	}
	emb, err := t.embedTexts(ctx, []string{text}, inputType, model, 0)
	if err != nil {
		return near, err
	}
	near.tokens = emb.Tokens
	hits, path, err := store.Search(ctx, db, coll, emb.Vectors[0], n, filter)
	var de *mongostore.DimensionError
	if errors.As(err, &de) {
		return near, &InputError{Msg: err.Error()}
	}
	if err != nil {
		return near, err
	}
	near.hits, near.path, near.db, near.coll, near.model = hits, path, db, coll, emb.Model
	if len(hits) == 0 {
		if w := emptyCollectionWarning(ctx, store, db, coll); w != "" {
			near.warnings = []string{w}
		}
	}
	return near, nil
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
func hybrid(query string, hits []mongostore.Hit, path string) ([]toolspec.Document, error) {
	cands := make([]rank.Candidate, len(hits))
	for i, h := range hits {
		cands[i] = rank.Candidate{Text: h.Content, Name: h.Source, Similarity: similarity(path, h.Score)}
	}
	scores, err := rank.Fuse(query, cands)
	if err != nil {
		return nil, err
	}
	out := make([]toolspec.Document, 0, len(hits))
	for _, i := range rank.Ranked(scores) {
		h, sc := hits[i], scores[i]
		out = append(out, toolspec.Document{Source: h.Source, Content: h.Content, Score: sc.Relevance,
			Similarity: sc.Similarity, KeywordScore: sc.Keywords, Metadata: h.Metadata})
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

func init() {
	bind(toolspec.Search, (*Tools).search)
	bind(toolspec.Query, (*Tools).query)
	bind(toolspec.Rerank, (*Tools).rerank)
}

// search is hybrid retrieval: a wider vector search whose hits are ranked by hybrid, cut to limit.
func (t *Tools) search(ctx context.Context, in toolspec.SearchIn) (toolspec.Results, *toolspec.Usage, error) {
	results, meta, warnings, tokens, err := t.retrieve(ctx, in.Query, in.DB, in.Collection, in.Model, in.Filter, candidates(in.Limit))
	if err != nil {
		return toolspec.Results{}, nil, err
	}
	if len(results) > in.Limit {
		results = results[:in.Limit]
	}
	meta.ResultCount = len(results)
	return toolspec.Results{Query: in.Query, Results: results, Metadata: meta, Warnings: warnings}, &toolspec.Usage{EmbeddingTokens: tokens}, nil
}

// query is search, then (unless rerank is false) Voyage's reranker over the candidates when a
// key is configured. Offline the reranker would be the same fusion search already ranked by, so
// the results keep their order and rerankedScore repeats score.
func (t *Tools) query(ctx context.Context, in toolspec.QueryIn) (toolspec.Results, *toolspec.Usage, error) {
	limit := in.Limit
	results, meta, warnings, tokens, err := t.retrieve(ctx, in.Query, in.DB, in.Collection, in.Model, in.Filter, candidates(limit))
	if err != nil {
		return toolspec.Results{}, nil, err
	}
	usage := &toolspec.Usage{EmbeddingTokens: tokens}
	reranked := false
	switch {
	case in.Rerank && len(results) > 0 && t.voyage != nil:
		texts := make([]string, len(results))
		names := make([]string, len(results))
		for i, r := range results {
			texts[i], names[i] = r.Content, r.Source
		}
		r, err := t.rankTexts(ctx, in.Query, texts, names, in.RerankModel, limit)
		if err != nil {
			return toolspec.Results{}, nil, err
		}
		ranked := make([]toolspec.Document, 0, len(r.Results))
		for _, rk := range r.Results {
			d := results[rk.Index]
			d.Index, d.RerankedScore = &rk.Index, &rk.Score
			ranked = append(ranked, d)
		}
		sortReranked(ranked)
		results = ranked
		reranked, meta.RerankModel = true, r.Model
		usage.TotalTokens += r.Tokens
	case in.Rerank && len(results) > 0:
		for i := range results {
			score := results[i].Score
			results[i].RerankedScore = &score
		}
		reranked, meta.RerankModel = true, rank.Model
	}
	meta.Reranked = &reranked
	if len(results) > limit {
		results = results[:limit]
	}
	meta.ResultCount = len(results)
	return toolspec.Results{Query: in.Query, Results: results, Metadata: meta, Warnings: warnings}, usage, nil
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

// rankTexts orders texts by relevance to query, best first: with Voyage's reranker when a key is
// configured, otherwise offline with rank.Fuse (BM25 over the texts and their names blended with
// local-embedder similarity). names are the documents' sources ("" where they have none).
func (t *Tools) rankTexts(ctx context.Context, query string, texts, names []string, model string, limit int) (*provider.Ranking, error) {
	if t.voyage != nil && model != rank.Model {
		if model == "" {
			model = "rerank-2.5"
		}
		return t.voyage.Rerank(ctx, query, texts, model, limit)
	}
	return offlineRerank(query, texts, names, limit)
}

// sortReranked orders reranked documents by rerankedScore, best first, keeping ties in order.
func sortReranked(docs []toolspec.Document) {
	sort.SliceStable(docs, func(i, j int) bool { return *docs[i].RerankedScore > *docs[j].RerankedScore })
}

// rerank orders documents (strings or result objects), keeping each object's fields and adding
// index and rerankedScore in [0,1].
func (t *Tools) rerank(ctx context.Context, in toolspec.RerankIn) (toolspec.Results, *toolspec.Usage, error) {
	var docs []any
	switch d := in.Documents.(type) {
	case []any:
		docs = d
	case map[string]any:
		docs, _ = d["results"].([]any)
	}
	if len(docs) == 0 {
		return toolspec.Results{}, nil, &InputError{Msg: "documents is empty: pass texts, result objects, or a step output holding results"}
	}
	texts := make([]string, len(docs))
	names := make([]string, len(docs))
	for i, d := range docs {
		s, ok := docText(d)
		if !ok {
			return toolspec.Results{}, nil, &InputError{Msg: fmt.Sprintf("documents[%d] is neither text nor an object with content or text", i)}
		}
		texts[i] = s
		if m, ok := d.(map[string]any); ok {
			names[i], _ = m["source"].(string)
		}
	}
	r, err := t.rankTexts(ctx, in.Query, texts, names, in.Model, in.Limit)
	if err != nil {
		return toolspec.Results{}, nil, err
	}
	ranked := make([]toolspec.Document, 0, len(r.Results))
	for _, rk := range r.Results {
		fields, ok := docs[rk.Index].(map[string]any)
		if !ok {
			fields = map[string]any{"content": texts[rk.Index]}
		}
		ranked = append(ranked, toolspec.Document{Fields: fields, Index: &rk.Index, RerankedScore: &rk.Score})
	}
	sortReranked(ranked)
	return toolspec.Results{Query: in.Query, Results: ranked, Metadata: toolspec.ResultsMetadata{Model: r.Model, ResultCount: len(ranked)}},
		&toolspec.Usage{TotalTokens: r.Tokens}, nil
}
