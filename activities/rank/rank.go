package rank

import (
	"fmt"
	"math"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"

	blanalysis "github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
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

// analyzer is the analysis a bleve index mapping with the English default analyzer applies to a
// text field (unicode words, possessives dropped, lower case, English stop words removed, Porter
// stems): the tokens an index of the candidates would hold.
var analyzer = sync.OnceValues(func() (blanalysis.Analyzer, error) {
	m := mapping.NewIndexMapping()
	m.DefaultAnalyzer = en.AnalyzerName
	if a := m.AnalyzerNamed(m.DefaultAnalyzer); a != nil {
		return a, nil
	}
	return nil, fmt.Errorf("bm25: bleve has no analyzer %q", en.AnalyzerName)
})

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
// field f), with the statistics of each field over the documents.
//
// The scores are those of a bleve index of the documents (scorch, ScoringModel "bm25") searched
// with a match query on the field, computed without building one: the query's tokens are each
// a term query of a disjunction, so a repeated token counts twice; a term's idf is
// ln(1+(N-n+0.5)/(n+0.5)) over the N documents, n of which hold it; its weight in a document
// holding it f times in a field of L tokens is idf·√f·k1/(√f+k1·(1-b+b·L/avgL)) (bleve's k1 and
// b), with L as its float32 norm gives it back, times idf/‖idf‖ (the disjunction's query norm over
// every token); and a document's score is the sum over its matching tokens times the share of the
// query's tokens it matches. avgL is bleve's: the field's distinct terms over N, rounded up.
// TestFuseScoresAsTheIndexDid holds these to the index's scores. The one difference: the index
// mapped a text that is nothing but a date ("2024-05-01") as a date, without words; here its
// words count.
func bm25(query string, fields ...[]string) ([][]float64, error) {
	an, err := analyzer()
	if err != nil {
		return nil, err
	}
	n := len(fields[0])
	out := make([][]float64, len(fields))
	for f := range out {
		out[f] = make([]float64, n)
	}
	qtoks := an.Analyze([]byte(query))
	if len(qtoks) == 0 || n == 0 {
		return out, nil
	}
	// terms are the query's distinct terms; qterm[k] is token k's among them.
	var terms []string
	qterm := make([]int, len(qtoks))
	for k, t := range qtoks {
		j := slices.Index(terms, string(t.Term))
		if j < 0 {
			j = len(terms)
			terms = append(terms, string(t.Term))
		}
		qterm[k] = j
	}
	m := len(terms)
	freq := make([]int, n*m) // freq[i*m+j]: occurrences of term j in document i's field
	df := make([]int, m)
	idf := make([]float64, m)
	docs := make([]*analysis, n)
	for f := range fields {
		clear(freq)
		clear(df)
		analyses.get(an, fields[f], docs)
		total := 0
		for _, d := range docs {
			total += len(d.terms)
		}
		distinct := make(map[string]struct{}, total/2)
		for i, d := range docs {
			for _, t := range d.terms {
				distinct[t] = struct{}{}
			}
			for j, t := range terms {
				if c := d.count(t); c > 0 {
					freq[i*m+j] = c
					df[j]++
				}
			}
		}
		avgLen := math.Ceil(float64(len(distinct)) / float64(n))
		if avgLen == 0 {
			continue // no document has a word in this field
		}
		for j := range idf {
			idf[j] = math.Log(1 + (float64(n)-float64(df[j])+0.5)/(float64(df[j])+0.5))
		}
		var sumSq float64
		for _, j := range qterm {
			sumSq += idf[j] * idf[j]
		}
		norm := 1 / math.Sqrt(sumSq)
		for i, d := range docs {
			row := freq[i*m : (i+1)*m]
			fieldNorm := float64(float32(1 / math.Sqrt(float64(d.length))))
			fieldLen := 1 / (fieldNorm * fieldNorm)
			var sum float64
			matched := 0
			for _, j := range qterm {
				if row[j] == 0 {
					continue
				}
				tf := math.Sqrt(float64(row[j]))
				s := idf[j] * (tf * search.BM25_k1) / (tf + search.BM25_k1*(1-search.BM25_b+(search.BM25_b*fieldLen/avgLen)))
				if w := idf[j] * norm; w != 1 {
					s *= w
				}
				sum += s
				matched++
			}
			out[f][i] = sum * (float64(matched) / float64(len(qterm)))
		}
	}
	return out, nil
}

// analysis is a text's tokens as BM25 needs them: how many, and its distinct terms (sorted) with
// how often each occurs.
type analysis struct {
	length int
	terms  []string
	counts []int
}

func analyse(an blanalysis.Analyzer, text string) *analysis {
	toks := an.Analyze([]byte(text))
	all := make([]string, len(toks))
	for i, t := range toks {
		all[i] = string(t.Term)
	}
	slices.Sort(all)
	a := &analysis{length: len(toks)}
	for i, t := range all {
		if i > 0 && t == all[i-1] {
			a.counts[len(a.counts)-1]++
			continue
		}
		a.terms = append(a.terms, t)
		a.counts = append(a.counts, 1)
	}
	return a
}

// count is how often term occurs in the text.
func (a *analysis) count(term string) int {
	if i, ok := slices.BinarySearch(a.terms, term); ok {
		return a.counts[i]
	}
	return 0
}

// size is about what the analysis of text holds in memory, in bytes.
func (a *analysis) size(text string) int {
	n := len(text) + 96
	for _, t := range a.terms {
		n += len(t) + 24
	}
	return n
}

// analysisCache remembers the analyses of recent texts: a search ranks the chunks of the same
// collection again and again, and analysing them is most of what BM25 costs. It holds two
// generations of at most maxSize bytes each and drops the older when the newer is full.
type analysisCache struct {
	mu        sync.Mutex
	cur, old  map[string]*analysis
	size, max int
}

// analyses is the cache bm25 analyses through.
var analyses = &analysisCache{max: 8 << 20}

// get sets out[i] to the analysis of texts[i], analysing the texts it does not remember.
func (c *analysisCache) get(an blanalysis.Analyzer, texts []string, out []*analysis) {
	var missing []int
	c.mu.Lock()
	for i, t := range texts {
		a, ok := c.cur[t]
		if !ok {
			if a, ok = c.old[t]; ok {
				c.put(t, a)
			}
		}
		if !ok {
			missing = append(missing, i)
		}
		out[i] = a
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return
	}
	for _, i := range missing {
		out[i] = analyse(an, texts[i])
	}
	c.mu.Lock()
	for _, i := range missing {
		c.put(texts[i], out[i])
	}
	c.mu.Unlock()
}

// put remembers a text's analysis (c.mu held).
func (c *analysisCache) put(text string, a *analysis) {
	if _, ok := c.cur[text]; ok {
		return
	}
	sz := a.size(text)
	if c.cur == nil || c.size+sz > c.max {
		c.old, c.cur, c.size = c.cur, map[string]*analysis{}, 0
	}
	c.cur[text] = a
	c.size += sz
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
