// Package rank is weft's offline reranker, used when no Voyage key is configured: BM25 from
// bleve (English analyzer with stemming, scored over the candidate set) fused with embedding
// similarity by reciprocal rank fusion. No Temporal imports.
package rank

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
)

// Model is the name results carry.
const Model = "local-bm25-rrf"

// RRFK is the reciprocal rank fusion constant (the usual 60).
const RRFK = 60

func newMapping() mapping.IndexMapping {
	m := bleve.NewIndexMapping()
	m.ScoringModel = "bm25"
	m.DefaultAnalyzer = "en"
	return m
}

// BM25 scores each document against the query (0 where no term matches), using the documents
// themselves as the corpus statistics.
func BM25(query string, docs []string) ([]float64, error) {
	idx, err := bleve.NewUsing("", newMapping(), scorch.Name, scorch.Name, nil)
	if err != nil {
		return nil, fmt.Errorf("bm25 index: %w", err)
	}
	defer idx.Close()
	b := idx.NewBatch()
	for i, d := range docs {
		if err := b.Index(strconv.Itoa(i), map[string]any{"text": d}); err != nil {
			return nil, err
		}
	}
	if err := idx.Batch(b); err != nil {
		return nil, err
	}
	q := bleve.NewMatchQuery(query)
	q.SetField("text")
	req := bleve.NewSearchRequestOptions(q, len(docs), 0, false)
	res, err := idx.Search(req)
	if err != nil {
		return nil, fmt.Errorf("bm25 search: %w", err)
	}
	scores := make([]float64, len(docs))
	for _, h := range res.Hits {
		i, err := strconv.Atoi(h.ID)
		if err == nil && i >= 0 && i < len(docs) {
			scores[i] = h.Score
		}
	}
	return scores, nil
}

// Order returns document indexes by descending score (stable for ties).
func Order(scores []float64) []int {
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
	return idx
}

// RRF fuses several orderings of the same documents: score(d) = Σ 1/(k + rank(d)).
func RRF(n int, orderings ...[]int) []float64 {
	out := make([]float64, n)
	for _, ord := range orderings {
		for rank, d := range ord {
			out[d] += 1 / float64(RRFK+rank+1)
		}
	}
	return out
}

// Hybrid ranks documents by BM25 fused with the given similarity scores.
func Hybrid(query string, docs []string, similarity []float64) ([]float64, error) {
	bm, err := BM25(query, docs)
	if err != nil {
		return nil, err
	}
	return RRF(len(docs), Order(bm), Order(similarity)), nil
}
