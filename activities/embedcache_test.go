package activities_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/embedder"
	"github.com/weftworks/weft/activities/mongostore"
	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/internal/testkit/fakeembed"
)

// recordingProvider is the OpenAI-compatible fake (internal/testkit/fakeembed) behind a proxy that
// records the inputs of every request, so a test can say exactly what was sent.
type recordingProvider struct {
	fake *fakeembed.Server
	url  string

	mu   sync.Mutex
	sent [][]string
}

func startRecordingProvider(t *testing.T) *recordingProvider {
	t.Helper()
	f, err := fakeembed.Start(0)
	require.NoError(t, err)
	t.Cleanup(f.Close)
	p := &recordingProvider{fake: f}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		var req struct {
			Input []string `json:"input"`
		}
		require.NoError(t, json.Unmarshal(body, &req))
		p.mu.Lock()
		p.sent = append(p.sent, req.Input)
		p.mu.Unlock()
		resp, err := http.Post(f.URL()+"/embeddings", "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL + "/v1"
	return p
}

// take returns the inputs of the requests since the last take.
func (p *recordingProvider) take() [][]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.sent
	p.sent = nil
	return s
}

func cacheCount(t *testing.T, db string) int64 {
	t.Helper()
	s, err := mongostore.Open(context.Background(), storeURI)
	require.NoError(t, err)
	defer s.Close(context.Background())
	n, err := s.Count(context.Background(), db, mongostore.EmbeddingCacheCollection)
	require.NoError(t, err)
	return n
}

// TestEmbedCache: embedTexts, through which every tool embeds, looks every text of a call up in
// the store at once, sends only the distinct misses in one request (in input order), returns the
// vectors in input order with the tokens of what was really embedded, and keys the cache by
// model, input type and dimensions as well as the text.
func TestEmbedCache(t *testing.T) {
	ctx := context.Background()
	p := startRecordingProvider(t)
	const model = "text-embedding-3-small"
	tools := activities.NewTools(activities.Config{OpenAIBaseURL: p.url, OpenAIAPIKey: "k", EmbeddingModel: model,
		MongoDBURI: storeURI, Database: "embcache_t1"})
	// the same provider without a cache: what each call must return
	reference := activities.NewTools(activities.Config{OpenAIBaseURL: p.fake.URL(), OpenAIAPIKey: "k", EmbeddingModel: model})

	a := []string{"alpha", "beta", "gamma", "delta", "epsilon"}
	steps := []struct {
		name      string
		texts     []string
		inputType string
		model     string
		dims      int
		wantSent  [][]string
	}{
		{"all miss: one request", a, "document", "", 0, [][]string{a}},
		{"the same call again: no request", a, "document", "", 0, nil},
		{"the model named as the default is the same key", a[:2], "document", model, 0, nil},
		{"partial overlap: only the misses, in order", []string{"gamma", "zeta", "alpha", "eta"}, "document", "", 0, [][]string{{"zeta", "eta"}}},
		{"a text twice in a call is embedded once", []string{"theta", "beta", "theta"}, "document", "", 0, [][]string{{"theta"}}},
		{"another model misses", a[:2], "document", "text-embedding-3-large", 0, [][]string{a[:2]}},
		{"other dimensions miss", a[:2], "document", "", 256, [][]string{a[:2]}},
		{"another input type misses", a[:2], "query", "", 0, [][]string{a[:2]}},
		{"and each of those is cached too", a[:2], "query", "", 0, nil},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			got, err := tools.EmbedTexts(ctx, s.texts, s.inputType, s.model, s.dims)
			require.NoError(t, err)
			require.Equal(t, s.wantSent, p.take(), "what the provider was sent")

			want, err := reference.EmbedTexts(ctx, s.texts, s.inputType, s.model, s.dims)
			require.NoError(t, err)
			require.Equal(t, want.Vectors, got.Vectors, "the vectors, in input order")
			require.Equal(t, want.Model, got.Model)
			var wantTokens int64
			for _, sent := range s.wantSent {
				e, err := reference.EmbedTexts(ctx, sent, s.inputType, s.model, s.dims)
				require.NoError(t, err)
				wantTokens += e.Tokens
			}
			require.Equal(t, wantTokens, got.Tokens, "tokens count only what was embedded")
		})
	}
}

// TestEmbedCacheSkipped: the local embedder, a worker without a store and WEFT_EMBED_CACHE=off
// embed every time, as without a cache, and write nothing to it.
func TestEmbedCacheSkipped(t *testing.T) {
	ctx := context.Background()
	require.True(t, activities.ConfigFromEnv(func(k string) string { return map[string]string{"WEFT_EMBED_CACHE": "off"}[k] }).NoEmbedCache)
	require.False(t, activities.ConfigFromEnv(func(string) string { return "" }).NoEmbedCache)

	p := startRecordingProvider(t)
	texts := []string{"one", "two"}
	cases := []struct {
		name         string
		cfg          activities.Config
		model        string
		wantRequests int
	}{
		{"local embedder", activities.Config{MongoDBURI: storeURI, Database: "embcache_local"}, embedder.Model, 0},
		{"no store", activities.Config{OpenAIBaseURL: p.url, OpenAIAPIKey: "k", Database: "embcache_nostore"}, "text-embedding-3-small", 2},
		{"WEFT_EMBED_CACHE=off", activities.Config{OpenAIBaseURL: p.url, OpenAIAPIKey: "k", MongoDBURI: storeURI, Database: "embcache_off", NoEmbedCache: true}, "text-embedding-3-small", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tools := activities.NewTools(c.cfg)
			for range 2 {
				got, err := tools.EmbedTexts(ctx, texts, "document", c.model, 0)
				require.NoError(t, err)
				require.Len(t, got.Vectors, 2)
				require.Positive(t, got.Tokens)
			}
			require.Len(t, p.take(), c.wantRequests)
			require.Zero(t, cacheCount(t, c.cfg.Database))
		})
	}
}

// TestEmbedCacheStoreUnavailable: a store that does not answer never fails an embedding: the
// texts are embedded and the step says the cache was not used; later calls leave the store alone
// for a while instead of each waiting for it.
func TestEmbedCacheStoreUnavailable(t *testing.T) {
	defer activities.SetEmbedCacheTimeout(300 * time.Millisecond)()
	p := startRecordingProvider(t)
	cfg := activities.Config{OpenAIBaseURL: p.url, OpenAIAPIKey: "k", EmbeddingModel: "text-embedding-3-small",
		MongoDBURI: "mongodb://127.0.0.1:1/"}

	tools := activities.NewTools(cfg)
	for i, want := range []string{"embedding cache unavailable", "embedding cache skipped"} {
		ctx, warnings := activities.CollectWarnings(context.Background())
		got, err := tools.EmbedTexts(ctx, []string{"a", "b"}, "document", "", 0)
		require.NoError(t, err, "call %d", i+1)
		require.Len(t, got.Vectors, 2)
		require.Positive(t, got.Tokens)
		require.Len(t, warnings(), 1)
		require.Contains(t, warnings()[0], want)
		require.Equal(t, [][]string{{"a", "b"}}, p.take())
	}

	// the warning reaches the step's warnings
	res, err := run(t, cfg, "embed", map[string]any{"text": "durable"})
	require.NoError(t, err)
	require.Len(t, res.Warnings, 1)
	require.Contains(t, res.Warnings[0], "embedding cache unavailable")
	require.Contains(t, res.Warnings[0], "WEFT_EMBED_CACHE=off")
}

// TestEmbedCacheFigures embeds 100 texts twice against the fake provider answering in 20 ms,
// once in one call and once in calls of 64 (as ingest and code_index do, the last call short):
// the first pass sends one request a call, the second none and no tokens, with the same vectors.
// It logs each pass's requests and wall time; BenchmarkEmbedCache (make bench) measures them for
// 1,000 texts, which took this test 56 s under -race.
func TestEmbedCacheFigures(t *testing.T) {
	// figures, not the timeout: a loaded machine under -race once took over the 10 s a cache
	// write may take, and the second pass then missed (TestEmbedCacheStoreUnavailable tests the bound)
	t.Cleanup(activities.SetEmbedCacheTimeout(2 * time.Minute))
	f, err := fakeembed.Start(20 * time.Millisecond)
	require.NoError(t, err)
	t.Cleanup(f.Close)
	texts := corpusTexts(100)
	for _, batch := range []int{100, 64} {
		passes := embedTwice(t, f, texts, batch, fmt.Sprintf("embcache_fig%d", batch))
		for i, p := range passes {
			t.Logf("%d texts in calls of %d, pass %d: %d provider requests, %d tokens, %v", len(texts), batch, i+1, p.requests, p.tokens, p.took.Round(time.Millisecond))
		}
		require.Len(t, passes[0].vectors, len(texts))
		require.Equal(t, (len(texts)+batch-1)/batch, passes[0].requests)
		require.Positive(t, passes[0].tokens)
		require.Zero(t, passes[1].requests, "an unchanged corpus costs no provider call")
		require.Zero(t, passes[1].tokens)
		require.Equal(t, passes[0].vectors, passes[1].vectors)
	}
}

// BenchmarkEmbedCache: 1,000 unchanged texts embedded twice into a fresh database each round,
// in one call and in calls of 64, against the fake provider answering in 20 ms; it reports the
// wall time of the first pass (every text to the provider and into the cache) and of the second
// (every text from the cache), and the second pass's provider requests (0).
//
//	go test ./activities -run '^$' -bench EmbedCache -benchtime 3x
func BenchmarkEmbedCache(b *testing.B) {
	defer activities.SetEmbedCacheTimeout(2 * time.Minute)()
	f, err := fakeembed.Start(20 * time.Millisecond)
	require.NoError(b, err)
	defer f.Close()
	texts := corpusTexts(1000)
	for _, batch := range []int{1000, 64} {
		b.Run(fmt.Sprintf("calls-of-%d", batch), func(b *testing.B) {
			var first, second time.Duration
			var again, round int
			for b.Loop() {
				passes := embedTwice(b, f, texts, batch, fmt.Sprintf("embcache_bench%d_%d_%d", batch, round, time.Now().UnixNano()%1e6))
				first, second, again = first+passes[0].took, second+passes[1].took, again+passes[1].requests
				round++
			}
			b.ReportMetric(float64(first.Milliseconds())/float64(round), "ms/first-pass")
			b.ReportMetric(float64(second.Milliseconds())/float64(round), "ms/second-pass")
			b.ReportMetric(float64(again)/float64(round), "second-pass-requests")
		})
	}
}

// corpusTexts is n distinct texts, the same each time.
func corpusTexts(n int) []string {
	texts := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprintf("chunk %d of a corpus that did not change between two ingests", i)
	}
	return texts
}

// embedPass is what one pass over a corpus cost and gave.
type embedPass struct {
	requests int
	tokens   int64
	took     time.Duration
	vectors  [][]float32
}

// embedTwice embeds texts twice, in calls of batch, with the embedding cache in database db of
// the package's store, and reports each pass.
func embedTwice(tb testing.TB, f *fakeembed.Server, texts []string, batch int, db string) [2]embedPass {
	ctx := context.Background()
	tools := activities.NewTools(activities.Config{OpenAIBaseURL: f.URL(), OpenAIAPIKey: "k", EmbeddingModel: "text-embedding-3-small",
		MongoDBURI: storeURI, Database: db})
	var passes [2]embedPass
	for i := range passes {
		r0, _ := f.Counts()
		start := time.Now()
		p := &passes[i]
		for s := 0; s < len(texts); s += batch {
			e, err := tools.EmbedTexts(ctx, texts[s:min(s+batch, len(texts))], "document", "", 0)
			require.NoError(tb, err)
			p.vectors = append(p.vectors, e.Vectors...)
			p.tokens += e.Tokens
		}
		p.took = time.Since(start)
		r1, _ := f.Counts()
		p.requests = r1 - r0
	}
	return passes
}

// TestEmbedBatchCountsProviderRequests: a batch's Requests (the step's usage calls) counts the
// requests the provider was sent, so a batch the embedding cache answers wholly counts none.
func TestEmbedBatchCountsProviderRequests(t *testing.T) {
	p := startRecordingProvider(t)
	tools := activities.NewTools(activities.Config{OpenAIBaseURL: p.url, OpenAIAPIKey: "k", EmbeddingModel: "text-embedding-3-small",
		MongoDBURI: storeURI, Database: "embcache_requests"})
	run := activities.BatchActivity(toolspec.Embed.Spec, tools.BatchHandlers()["embed"])
	items := []map[string]any{{"text": "one"}, {"text": "two"}, {"text": "three"}}
	for _, want := range []int{1, 0} {
		out, err := run(context.Background(), toolspec.BatchIn{Items: items})
		require.NoError(t, err)
		require.Len(t, p.take(), want)
		require.Equal(t, want, out.Requests)
	}
}
