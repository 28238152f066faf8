package activities_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/weftworks/weft/activities"
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
