package rank_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/rank"
	"github.com/weftworks/weft/templates"
)

// indexBM25 is the scorer rank used before it computed BM25 itself: a bleve index (in memory,
// scorch, English analyzer, BM25) of the documents built for each call and searched with a
// match query per field. It is the reference rank's scores must equal.
func indexBM25(query string, fields ...[]string) ([][]float64, error) {
	m := bleve.NewIndexMapping()
	m.ScoringModel = "bm25"
	m.DefaultAnalyzer = "en"
	idx, err := bleve.NewUsing("", m, scorch.Name, scorch.Name, nil)
	if err != nil {
		return nil, fmt.Errorf("bm25 index: %w", err)
	}
	defer idx.Close()
	n := len(fields[0])
	b := idx.NewBatch()
	for i := 0; i < n; i++ {
		doc := map[string]any{}
		for f := range fields {
			doc["f"+strconv.Itoa(f)] = fields[f][i]
		}
		if err := b.Index(strconv.Itoa(i), doc); err != nil {
			return nil, fmt.Errorf("bm25 index: %w", err)
		}
	}
	if err := idx.Batch(b); err != nil {
		return nil, fmt.Errorf("bm25 index: %w", err)
	}
	out := make([][]float64, len(fields))
	for f := range fields {
		out[f] = make([]float64, n)
		q := bleve.NewMatchQuery(query)
		q.SetField("f" + strconv.Itoa(f))
		res, err := idx.Search(bleve.NewSearchRequestOptions(q, n, 0, false))
		if err != nil {
			return nil, fmt.Errorf("bm25 search: %w", err)
		}
		for _, h := range res.Hits {
			if i, err := strconv.Atoi(h.ID); err == nil && i >= 0 && i < n {
				out[f][i] = h.Score
			}
		}
	}
	return out, nil
}

// indexFuse is rank.Fuse as it was, on indexBM25 (its blend, with titleWeight and saturation 1).
func indexFuse(query string, cands []rank.Candidate) ([]rank.Score, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	texts := make([]string, len(cands))
	titles := make([]string, len(cands))
	for i, c := range cands {
		texts[i], titles[i] = c.Text, rank.TitleWords(c.Name)
	}
	bm, err := indexBM25(query, texts, titles)
	if err != nil {
		return nil, err
	}
	out := make([]rank.Score, len(cands))
	for i, c := range cands {
		b := bm[0][i] + bm[1][i]
		sim := min(max(c.Similarity, 0), 1)
		kw := b / (b + 1)
		out[i] = rank.Score{Relevance: rank.SimilarityWeight*sim + (1-rank.SimilarityWeight)*kw, Similarity: sim, Keywords: kw}
	}
	return out, nil
}

// corpusCandidates is the sample corpus as candidates, with made-up similarities.
func corpusCandidates() []rank.Candidate {
	var out []rank.Candidate
	for _, coll := range []string{"api_docs", "architecture"} {
		for _, d := range templates.Corpus()[coll] {
			out = append(out, rank.Candidate{Text: d.Text, Name: d.Source, Similarity: float64(len(out)%7) / 7})
		}
	}
	return out
}

// TestFuseScoresAsTheIndexDid: on the sample corpus's labelled questions (over the whole corpus
// and over slices of it the size of a search's candidates) and on edge cases of the analysis and
// the formula, BM25 and Fuse give the scores and the order the per-call bleve index gave.
func TestFuseScoresAsTheIndexDid(t *testing.T) {
	corpus := corpusCandidates()
	long := strings.Repeat("retry retries retrying backoff ", 40) + "timeout"
	type tc struct {
		name  string
		query string
		cands []rank.Candidate
	}
	cases := []tc{
		{"a repeated query word counts twice", "rate rate limits", []rank.Candidate{
			{Text: "the rate limit is 300 requests per minute", Name: "api/rate-limits.md"},
			{Text: "rates of interest"}, {Text: "limits of the plan", Name: "billing.md"}, {Text: "nothing here"}}},
		{"stop words only", "the and of", []rank.Candidate{{Text: "the cat and the dog"}, {Text: "of mice"}}},
		{"no query word occurs", "kubernetes", []rank.Candidate{{Text: "cats"}, {Text: "dogs", Name: "pets.md"}}},
		{"empty texts and names", "cat", []rank.Candidate{{Text: ""}, {Text: "cat"}, {Text: "", Name: "cat.md"}, {}}},
		{"one candidate", "webhook signature", []rank.Candidate{{Text: "verify the webhook signature", Name: "hooks.md"}}},
		{"a word more than 64 times, and a long field", "retry timeout", []rank.Candidate{
			{Text: long}, {Text: "a timeout"}, {Text: "retry once"}, {Text: "other words entirely"}}},
		{"more than ten query words", "how do I page through the list of invoices and refunds with a cursor and a limit per page on the api",
			corpus},
		{"possessives, case and stems", "Customer's INVOICES", []rank.Candidate{
			{Text: "a customer's invoice"}, {Text: "Customers and invoicing"}, {Text: "CUSTOMER"}}},
		{"unicode words", "café naïve 東京", []rank.Candidate{{Text: "Café au lait"}, {Text: "naïve 東京 tower"}, {Text: "cafe"}}},
	}
	for _, q := range templates.Queries() {
		cases = append(cases, tc{"corpus: " + q.Query, q.Query, corpus},
			tc{"20 candidates: " + q.Query, q.Query, corpus[len(q.Query)%20 : len(q.Query)%20+20]})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, err := indexFuse(c.query, c.cands)
			require.NoError(t, err)
			got, err := rank.Fuse(c.query, c.cands)
			require.NoError(t, err)
			require.Len(t, got, len(want))
			for i := range want {
				require.InDelta(t, want[i].Keywords, got[i].Keywords, 1e-12, "candidate %d", i)
				require.InDelta(t, want[i].Relevance, got[i].Relevance, 1e-12, "candidate %d", i)
			}
			require.Equal(t, rank.Ranked(want), rank.Ranked(got))

			texts := make([]string, len(c.cands))
			for i, x := range c.cands {
				texts[i] = x.Text
			}
			wantBM, err := indexBM25(c.query, texts)
			require.NoError(t, err)
			gotBM, err := rank.BM25(c.query, texts)
			require.NoError(t, err)
			require.InDeltaSlice(t, wantBM[0], gotBM, 1e-12)
		})
	}
}

// BenchmarkFuse is rank.Fuse over n candidates from the sample corpus with its questions in
// turn: with the per-call bleve index it replaced (index), analysing every text (analyzer) and
// with the texts' analyses remembered from earlier calls, as a search over one collection has
// them (cached), in the same run:
//
//	go test -run '^$' -bench Fuse -count 6 ./activities/rank
func BenchmarkFuse(b *testing.B) {
	corpus := corpusCandidates()
	qs := templates.Queries()
	for _, n := range []int{20, 40, 100} {
		cands := make([]rank.Candidate, n)
		for i := range cands {
			cands[i] = corpus[i%len(corpus)]
		}
		for _, v := range []struct {
			name string
			fuse func(string, []rank.Candidate) ([]rank.Score, error)
		}{{"index", indexFuse}, {"analyzer", func(q string, c []rank.Candidate) ([]rank.Score, error) {
			rank.ForgetAnalyses()
			return rank.Fuse(q, c)
		}}, {"cached", rank.Fuse}} {
			b.Run(fmt.Sprintf("n=%d/%s", n, v.name), func(b *testing.B) {
				i := 0
				for b.Loop() {
					if _, err := v.fuse(qs[i%len(qs)].Query, cands); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}
