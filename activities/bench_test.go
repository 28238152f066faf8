package activities_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/embedder"
	"github.com/weftworks/weft/activities/mongostore"
	"github.com/weftworks/weft/templates"
)

// BenchmarkIngestTool ingests a 5,000-character document (local embedder, embedded FerretDB) and
// reports chunks per second.
func BenchmarkIngestTool(b *testing.B) {
	tools := activities.NewTools(activities.Config{MongoDBURI: storeURI}).Handlers()
	var sb strings.Builder
	for sb.Len() < 5000 {
		for _, d := range templates.Corpus()["architecture"] {
			sb.WriteString(d.Text + "\n\n")
		}
	}
	text := sb.String()[:5000]
	chunks, n := 0, 0
	start := time.Now()
	for b.Loop() {
		out, _, err := tools["ingest"](context.Background(), map[string]any{"text": text, "source": fmt.Sprint("doc", n), "collection": "bench", "db": "bench", "chunkSize": 500.0, "chunkOverlap": 50.0})
		if err != nil {
			b.Fatal(err)
		}
		chunks += out.(map[string]any)["chunksCreated"].(int)
		n++
	}
	b.ReportMetric(float64(chunks)/time.Since(start).Seconds(), "chunks/s")
}

// BenchmarkQueryTool runs the query tool (embed, exact search, offline rerank) on the sample
// corpus in the embedded FerretDB and reports the median latency.
func BenchmarkQueryTool(b *testing.B) {
	benchRetrievalTool(b, "query", "benchq", map[string]any{"limit": 5.0})
}

// BenchmarkSearchTool runs the search tool (embed, exact search of 40 candidates, hybrid
// ranking) on the sample corpus in the embedded FerretDB and reports the median latency.
func BenchmarkSearchTool(b *testing.B) {
	benchRetrievalTool(b, "search", "benchs", nil)
}

// BenchmarkSearchCollection runs the search tool (embed, exact search of 40 candidates on the
// in-memory cache of the embedded FerretDB, hybrid ranking) on collections of 1,000, 10,000 and
// 100,000 chunks, each three sentences of the sample corpus embedded by the local embedder, with
// the sample questions in turn, and reports the median and p99 latency, and what the first search
// of the collection took (cold-ms: it reads every chunk from FerretDB into the cache) and an
// ingest of one note followed by a search (after-ingest-ms):
//
//	go test ./activities -run '^$' -bench SearchCollection -count 6
func BenchmarkSearchCollection(b *testing.B) {
	ctx := context.Background()
	store, err := mongostore.Open(ctx, storeURI)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close(ctx)
	e, err := embedder.Load()
	if err != nil {
		b.Fatal(err)
	}
	var sentences []string
	for _, coll := range []string{"api_docs", "architecture"} {
		for _, d := range templates.Corpus()[coll] {
			for _, s := range strings.SplitAfter(d.Text, ". ") {
				if s = strings.TrimSpace(s); s != "" {
					sentences = append(sentences, s)
				}
			}
		}
	}
	tools := activities.NewTools(activities.Config{MongoDBURI: storeURI}).Handlers()
	qs := templates.Queries()
	for _, n := range benchSizes() {
		coll := fmt.Sprintf("docs%d", n)
		r := rand.New(rand.NewPCG(uint64(n), 47))
		for start := 0; start < n; start += 500 {
			var batch []mongostore.Chunk
			for i := start; i < min(start+500, n); i++ {
				text := sentences[r.IntN(len(sentences))] + " " + sentences[r.IntN(len(sentences))] + " " + sentences[r.IntN(len(sentences))]
				src := fmt.Sprintf("doc-%d.md", i)
				batch = append(batch, mongostore.Chunk{ID: mongostore.ChunkID(coll, src, 0, text), Text: text, Source: src,
					Model: embedder.Model, Embedding: bson.NewVector(e.Embed(text))})
			}
			if err := store.Upsert(ctx, "benchsc", coll, batch); err != nil {
				b.Fatal(err)
			}
		}
		search := func(q string) (any, error) {
			out, _, err := tools["search"](ctx, map[string]any{"query": q, "collection": coll, "db": "benchsc"})
			return out, err
		}
		cold := time.Now()
		out, err := search(qs[0].Query) // loads the collection's cache
		coldMS := float64(time.Since(cold).Microseconds()) / 1000
		if err != nil {
			b.Fatal(err)
		}
		if meta := out.(map[string]any)["metadata"].(map[string]any); meta["searchPath"] != mongostore.PathExact {
			b.Fatalf("search took path %v, not the in-memory cache", meta["searchPath"])
		}
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			var lat []time.Duration
			i := 0
			for b.Loop() {
				t0 := time.Now()
				if _, err := search(qs[i%len(qs)].Query); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
				i++
			}
			sort.Slice(lat, func(a, c int) bool { return lat[a] < lat[c] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(coldMS, "cold-ms")
			// A search right after an ingest into the collection (the demo's pattern: add a
			// document, ask about it), ingest included.
			t0 := time.Now()
			if _, _, err := tools["ingest"](ctx, map[string]any{"text": fmt.Sprintf("A note added %d.", i), "source": "added.md", "collection": coll, "db": "benchsc"}); err != nil {
				b.Fatal(err)
			}
			if _, err := search(qs[0].Query); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(time.Since(t0).Microseconds())/1000, "after-ingest-ms")
		})
	}
}

// benchRetrievalTool ingests the api_docs sample corpus into db, then calls tool with the sample
// questions in turn (plus extra inputs) and reports the median latency.
func benchRetrievalTool(b *testing.B, tool, db string, extra map[string]any) {
	tools := activities.NewTools(activities.Config{MongoDBURI: storeURI}).Handlers()
	ctx := context.Background()
	for _, d := range templates.Corpus()["api_docs"] {
		if _, _, err := tools["ingest"](ctx, map[string]any{"text": d.Text, "source": d.Source, "collection": "api_docs", "db": db}); err != nil {
			b.Fatal(err)
		}
	}
	qs := templates.Queries()
	var lat []time.Duration
	i := 0
	for b.Loop() {
		in := map[string]any{"query": qs[i%len(qs)].Query, "collection": "api_docs", "db": db}
		for k, v := range extra {
			in[k] = v
		}
		t0 := time.Now()
		if _, _, err := tools[tool](ctx, in); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		i++
	}
	sort.Slice(lat, func(a, c int) bool { return lat[a] < lat[c] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
}

// benchSizes are BenchmarkSearchCollection's collection sizes: 1,000, 10,000 and 100,000 chunks,
// or those WEFT_BENCH_CHUNKS lists (comma-separated) to look at one.
func benchSizes() []int {
	list := os.Getenv("WEFT_BENCH_CHUNKS")
	if list == "" {
		return []int{1000, 10_000, 100_000}
	}
	var sizes []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			panic(fmt.Sprintf("WEFT_BENCH_CHUNKS=%q: give collection sizes as whole numbers, e.g. 1000,10000", list))
		}
		sizes = append(sizes, n)
	}
	return sizes
}
