package activities_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/embedder"
	"github.com/weftworks/weft/activities/rank"
	"github.com/weftworks/weft/templates"
)

// TestRetrievalQuality measures the offline retrievers on the sample corpus (48 documents in
// two collections) with its 52 labelled queries: MRR and recall@5 of the local embedder, BM25
// and their fusion (rank.Fuse, which search, query and the offline rerank use). The thresholds
// sit below today's figures so that a regression fails.
func TestRetrievalQuality(t *testing.T) {
	var docs, sources []string
	for _, coll := range []string{"api_docs", "architecture"} {
		for _, d := range templates.Corpus()[coll] {
			docs = append(docs, d.Text)
			sources = append(sources, d.Source)
		}
	}
	queries := templates.Queries()
	require.GreaterOrEqual(t, len(docs), 40)
	require.GreaterOrEqual(t, len(queries), 50)
	e, err := embedder.Load()
	require.NoError(t, err)
	vecs := make([][]float32, len(docs))
	for i, d := range docs {
		vecs[i] = e.Embed(d)
	}
	type metric struct{ mrr, recall5 float64 }
	score := func(order func(q string) []int) metric {
		var m metric
		for _, q := range queries {
			for rank, i := range order(q.Query) {
				if sources[i] == q.Source {
					m.mrr += 1 / float64(rank+1)
					if rank < 5 {
						m.recall5++
					}
					break
				}
			}
		}
		n := float64(len(queries))
		return metric{m.mrr / n, m.recall5 / n}
	}
	similarity := func(q string) []float64 {
		qv := e.Embed(q)
		s := make([]float64, len(docs))
		for i := range docs {
			s[i] = embedder.Cosine(qv, vecs[i])
		}
		return s
	}
	local := score(func(q string) []int { return rank.Order(similarity(q)) })
	bm25 := score(func(q string) []int {
		s, err := rank.BM25(q, docs)
		require.NoError(t, err)
		return rank.Order(s)
	})
	hybrid := score(func(q string) []int {
		sim := similarity(q)
		cands := make([]rank.Candidate, len(docs))
		for i := range docs {
			cands[i] = rank.Candidate{Text: docs[i], Name: sources[i], Similarity: sim[i]}
		}
		s, err := rank.Fuse(q, cands)
		require.NoError(t, err)
		return rank.Ranked(s)
	})
	t.Logf("%d queries over %d documents", len(queries), len(docs))
	t.Logf("local embedder (%s):   MRR %.3f  recall@5 %.3f", embedder.Model, local.mrr, local.recall5)
	t.Logf("BM25 (bleve, en):                       MRR %.3f  recall@5 %.3f", bm25.mrr, bm25.recall5)
	t.Logf("hybrid (%s, rank.Fuse): MRR %.3f  recall@5 %.3f", rank.Model, hybrid.mrr, hybrid.recall5)
	require.GreaterOrEqual(t, local.mrr, 0.6)
	require.GreaterOrEqual(t, bm25.mrr, 0.8)
	require.GreaterOrEqual(t, hybrid.mrr, 0.92)
	require.GreaterOrEqual(t, hybrid.recall5, 0.95)
}
