package rank

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
)

// Model is the name results carry wherever a ranking model is named.
const Model = "local-bm25-hybrid"

// The blend. Measured on the sample corpus (templates.Queries, 52 labelled questions, MRR in
// activities' TestRetrievalQuality): equal weights, a saturation of 1 and a title weight of 1
// rank best among the blends tried (similarity weight 0.3-0.7, saturation 0.5-2, title 0-1,
// BM25 divided by its maximum instead of saturated), and every blend beats reciprocal rank
// fusion, whose scores also say nothing about how relevant a document is.
const (
	// SimilarityWeight is the share of vector similarity in a score; the rest is keywords.
	SimilarityWeight = 0.5
	// saturation turns an unbounded BM25 score b into b/(b+saturation) in [0,1).
	saturation = 1.0
	// titleWeight is how much a query word in a candidate's source name counts next to one in
	// its text.
	titleWeight = 1.0
)

// Candidate is one document to score.
type Candidate struct {
	// Text is what the document says.
	Text string
	// Name is where it comes from (a file name, path or URL; may be empty): its words count as
	// a title, so "api/rate-limits.md" matches a question about rate limits.
	Name string
	// Similarity is the vector similarity of the document to the query (cosine, -1..1).
	Similarity float64
}

// Score is how relevant one candidate is.
type Score struct {
	// Relevance is SimilarityWeight·Similarity + (1-SimilarityWeight)·Keywords, in [0,1]; rank
	// by it.
	Relevance float64
	// Similarity is the candidate's vector similarity, clamped to [0,1].
	Similarity float64
	// Keywords is BM25 of the query over the candidates' texts and names, b/(b+1), in [0,1):
	// 0 when no query word occurs, near 1 when rare query words occur often.
	Keywords float64
}

// Fuse scores the candidates against the query: the one fusion behind search, query and the
// offline rerank. BM25's statistics come from the candidates themselves, so a candidate's score
// depends a little on the others; similarity is taken as given.
func Fuse(query string, cands []Candidate) ([]Score, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	texts := make([]string, len(cands))
	titles := make([]string, len(cands))
	for i, c := range cands {
		texts[i], titles[i] = c.Text, TitleWords(c.Name)
	}
	bm, err := bm25(query, texts, titles)
	if err != nil {
		return nil, err
	}
	out := make([]Score, len(cands))
	for i, c := range cands {
		b := bm[0][i] + titleWeight*bm[1][i]
		sim := min(max(c.Similarity, 0), 1)
		kw := b / (b + saturation)
		out[i] = Score{Relevance: SimilarityWeight*sim + (1-SimilarityWeight)*kw, Similarity: sim, Keywords: kw}
	}
	return out, nil
}

// Ranked returns candidate indexes by descending relevance (stable for ties).
func Ranked(scores []Score) []int {
	rel := make([]float64, len(scores))
	for i, s := range scores {
		rel[i] = s.Relevance
	}
	return Order(rel)
}

// TitleWords is a source name as words: "docs/api/rate-limits.md" -> "docs api rate limits".
func TitleWords(name string) string {
	name = strings.TrimSuffix(name, path.Ext(name))
	return strings.Join(strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }), " ")
}

func newMapping() mapping.IndexMapping {
	m := bleve.NewIndexMapping()
	m.ScoringModel = "bm25"
	m.DefaultAnalyzer = "en"
	return m
}

// BM25 scores each document against the query (0 where no term matches), using the documents
// themselves as the corpus statistics.
func BM25(query string, docs []string) ([]float64, error) {
	s, err := bm25(query, docs)
	if err != nil {
		return nil, err
	}
	return s[0], nil
}

// bm25 scores the query against each field of the documents (fields[f][i] is document i's
// field f), with one index for all fields.
func bm25(query string, fields ...[]string) ([][]float64, error) {
	idx, err := bleve.NewUsing("", newMapping(), scorch.Name, scorch.Name, nil)
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

// Order returns indexes by descending score (stable for ties).
func Order(scores []float64) []int {
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
	return idx
}
