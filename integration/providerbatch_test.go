package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/embedder"
	"github.com/weftworks/weft/activities/toolspec"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/internal/testkit/fakeembed"
	"github.com/weftworks/weft/worker"
	"github.com/weftworks/weft/workflows"
	"github.com/weftworks/weft/workflows/dsl"
)

// embedFanoutDef is a forEach of n embeds; batch "false" opts out of provider batches.
func embedFanoutDef(t testing.TB, n, concurrency int, model, batch string) *dsl.Workflow {
	opt := ""
	if batch != "" {
		opt = `"batch":` + batch + `,`
	}
	dims := ""
	if model != embedder.Model {
		dims = `,"dimensions":256`
	}
	w, err := dsl.Load("embeds.json", []byte(fmt.Sprintf(`{"name":"embeds","inputs":{"items":{"type":"array","required":true}},"steps":[
	  {"id":"each","tool":"embed","forEach":"{{ inputs.items }}",%s"concurrency":%d,"inputs":{"text":"{{ item }}","model":%q,"inputType":"document"%s}}],
	  "output":{"count":"{{ each.output.count }}","first":"{{ each.output.results[0].text }}","last":"{{ each.output.results[%d].text }}","dims":"{{ each.output.results[%d].dimensions }}"}}`, opt, concurrency, model, dims, n-1, n-1)))
	require.NoError(t, err)
	return w
}

// TestBatchedEmbeds: a forEach of 3,000 embeds against an OpenAI-compatible provider goes out
// in 24 requests of at most 128 inputs, with every output in its place (read through the
// references the store keeps), a history of a few events per request, and the same corpus
// again costs no request (the embedding cache). BenchmarkEmbedFanout measures 10,000 and more.
func TestBatchedEmbeds(t *testing.T) {
	const n = 3000
	f, err := fakeembed.Start(0)
	require.NoError(t, err)
	t.Cleanup(f.Close)
	queue := "batched-embeds"
	startWorkerWithConfig(t, queue, activities.Config{MongoDBURI: store.URI, OpenAIBaseURL: f.URL(), OpenAIAPIKey: "k"}, nil)
	c := dial(t)
	wc := weftclient.New(c, queue)
	t0 := time.Now()
	run, err := wc.Start(context.Background(), embedFanoutDef(t, n, 8, "text-embedding-3-small", ""), weftclient.StartOptions{Source: "embeds", Inputs: map[string]any{"items": fanoutItems(n)}})
	require.NoError(t, err)
	res, err := run.Get(context.Background())
	require.NoError(t, err)
	wall := time.Since(t0)
	out := res.Output.GetStructValue().AsMap()
	require.EqualValues(t, n, out["count"])
	require.Equal(t, "item 0", out["first"])
	require.Equal(t, fmt.Sprintf("item %d", n-1), out["last"], "outputs in item order, read through their references")
	require.EqualValues(t, 256, out["dims"])
	requests, inputs := f.Counts()
	require.Equal(t, (n+127)/128, requests, "one request per 128 items")
	require.Equal(t, n, inputs, "each text sent once")
	events := historyEvents(t, c, run.ID)
	require.Less(t, events, n/10, "history events: a few per request, not per item")
	st, err := wc.State(context.Background(), run.ID)
	require.NoError(t, err)
	for _, s := range st.Steps {
		if s.Id == "each" {
			require.Equal(t, int32(n), s.ItemsDone)
			require.EqualValues(t, requests, s.Usage.GetCalls(), "calls counted per request")
			require.Positive(t, s.Usage.GetEmbeddingTokens())
		}
	}
	t.Logf("%d embeds in %s: %.0f items/s, %d requests, %.3f history events per item", n, wall.Round(10*time.Millisecond), float64(n)/wall.Seconds(), requests, float64(events)/float64(n))

	// The same corpus again: the embedding cache answers, the provider is not asked.
	t0 = time.Now()
	run, err = wc.Start(context.Background(), embedFanoutDef(t, n, 8, "text-embedding-3-small", ""), weftclient.StartOptions{Source: "embeds", Inputs: map[string]any{"items": fanoutItems(n)}})
	require.NoError(t, err)
	res, err = run.Get(context.Background())
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("item %d", n-1), res.Output.GetStructValue().AsMap()["last"])
	again, _ := f.Counts()
	require.Equal(t, requests, again, "an unchanged corpus costs no provider request")
	t.Logf("again, from the embedding cache: %s, %d requests", time.Since(t0).Round(10*time.Millisecond), again-requests)
}

// TestBatchedLoopWithBadItems: a loop of 1,000 embeds of which 10 are too long for the model,
// against an OpenAI-compatible provider that refuses a whole request when one input is too
// long: the loop's requests are split until each refused item stands alone, the other 990 are
// embedded, and each refused item reports the provider's own message.
func TestBatchedLoopWithBadItems(t *testing.T) {
	const n = 1000
	f, err := fakeembed.Start(0)
	require.NoError(t, err)
	t.Cleanup(f.Close)
	f.MaxInputChars = 64
	queue := "batched-loop-bad-items"
	startWorkerWithConfig(t, queue, activities.Config{MongoDBURI: store.URI, OpenAIBaseURL: f.URL(), OpenAIAPIKey: "k", NoEmbedCache: true}, nil)
	wc := weftclient.New(dial(t), queue)
	items := fanoutItems(n)
	for i := 50; i < n; i += 100 {
		items[i] = strings.Repeat("too long ", 10) + fmt.Sprint(i)
	}
	run, err := wc.Start(context.Background(), embedLoopDef(t, n, 4, "text-embedding-3-small", ""), weftclient.StartOptions{Source: "embeds", Inputs: map[string]any{"items": items}})
	require.NoError(t, err)
	res, err := run.Get(context.Background())
	require.NoError(t, err)
	out := res.Output.GetStructValue().AsMap()
	require.EqualValues(t, n, out["count"])
	require.EqualValues(t, 10, out["errors"])
	first := out["firstError"].(map[string]any)
	require.EqualValues(t, 50, first["index"])
	require.Contains(t, first["error"], "maximum context length", "the provider's own message for the item")
	require.Nil(t, out["r50"], "a refused item's result is null")
	require.Equal(t, "item 51", out["r51"])
	requests, inputs := f.Counts()
	// 8 requests of 128 (the last 104); each holds one or two refused items, and isolating one
	// takes at most 2×7 more requests. Every good item is embedded once in the request that
	// succeeds, but is sent again in each refused request that held it.
	require.Less(t, requests, 8+10*14+1, "the refused requests are split, not the whole loop re-sent per item")
	require.Greater(t, inputs, n, "refused requests are sent again in halves")
	st, err := wc.State(context.Background(), run.ID)
	require.NoError(t, err)
	require.Equal(t, int32(n), st.Steps[0].ItemsDone)
	t.Logf("loop of %d embeds with 10 refused: %d requests, %d inputs sent", n, requests, inputs)
}

// embedLoopDef is a loop of n embeds (which collects its items' errors); batch "false" opts out
// of provider batches.
func embedLoopDef(t testing.TB, n, concurrency int, model, batch string) *dsl.Workflow {
	opt := ""
	if batch != "" {
		opt = `"batch":` + batch + `,`
	}
	w, err := dsl.Load("embeds.json", []byte(fmt.Sprintf(`{"name":"embeds","inputs":{"items":{"type":"array","required":true}},"steps":[
	  {"id":"each","tool":"loop",%s"inputs":{"items":"{{ inputs.items }}","as":"item","concurrency":%d,"maxIterations":%d,
	    "step":{"tool":"embed","inputs":{"text":"{{ item }}","model":%q,"inputType":"document","dimensions":256}}}}],
	  "output":{"count":"{{ each.output.iterations }}","errors":"{{ len(each.output.errors) }}","firstError":"{{ each.output.errors[0] }}",
	    "r50":"{{ each.output.results[50] }}","r51":"{{ each.output.results[51].text }}"}}`, opt, concurrency, n, model)))
	require.NoError(t, err)
	return w
}

// TestBatchRetryKeepsFinishedItems: a forEach over a tool whose handler a program replaced runs
// its items in batches that call the handler once per item; when one item fails for a passing
// reason, the batch's retry calls the handler for that item only. The finished items' results
// travel in the failed attempt's last heartbeat, which the SDK sends with the failure.
func TestBatchRetryKeepsFinishedItems(t *testing.T) {
	const n = 6
	items := fanoutItems(n)
	var mu sync.Mutex
	calls := map[string]int{}
	embed := func(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
		text, _ := in["text"].(string)
		mu.Lock()
		calls[text]++
		first := calls[text] == 1
		mu.Unlock()
		if text == items[3] && first {
			return nil, nil, errors.New("the provider is briefly down") // retryable: the batch's attempt fails
		}
		return map[string]any{"text": text, "model": "m", "dimensions": 2, "vector": []float32{1, 0}}, &toolspec.Usage{EmbeddingTokens: 1}, nil
	}
	queue := "batch-retry-keeps"
	startWorkerWithConfig(t, queue, activities.Config{}, map[string]activities.Handler{"embed": embed})
	wc := weftclient.New(dial(t), queue)
	run, err := wc.Start(context.Background(), embedFanoutDef(t, n, 8, "text-embedding-3-small", ""), weftclient.StartOptions{Source: "embeds", Inputs: map[string]any{"items": items}})
	require.NoError(t, err)
	res, err := run.Get(context.Background())
	require.NoError(t, err)
	out := res.Output.GetStructValue().AsMap()
	require.EqualValues(t, n, out["count"])
	require.Equal(t, items[0], out["first"])
	require.Equal(t, items[n-1], out["last"])
	mu.Lock()
	defer mu.Unlock()
	for i, it := range items {
		want := 1
		if i == 3 {
			want = 2
		}
		require.Equal(t, want, calls[it.(string)], "calls of the handler for item %d", i)
	}
}

// TestBatchRetrySendsOnlyUnfinishedItems: the built-in embed without the embedding cache (no
// store): a request refused for one too-long item is split in halves; when a later request of
// the split fails with a 500, the retry sends only the items not yet embedded.
func TestBatchRetrySendsOnlyUnfinishedItems(t *testing.T) {
	f, err := fakeembed.Start(0)
	require.NoError(t, err)
	t.Cleanup(f.Close)
	f.MaxInputChars = 20
	f.FailWhen(func(n int) bool { return n == 3 })
	items := fanoutItems(8)
	items[5] = "an item longer than the fake takes"
	queue := "batch-retry-unfinished"
	startWorkerWithConfig(t, queue, activities.Config{OpenAIBaseURL: f.URL(), OpenAIAPIKey: "k"}, nil)
	wc := weftclient.New(dial(t), queue)
	def, err := dsl.Load("embeds.json", []byte(`{"name":"embeds","inputs":{"items":{"type":"array","required":true}},"steps":[
	  {"id":"each","tool":"loop","inputs":{"items":"{{ inputs.items }}","as":"item","concurrency":8,
	    "step":{"tool":"embed","inputs":{"text":"{{ item }}","model":"text-embedding-3-small","dimensions":256}}}}],
	  "output":{"count":"{{ each.output.iterations }}","errors":"{{ len(each.output.errors) }}","firstError":"{{ each.output.errors[0] }}"}}`))
	require.NoError(t, err)
	run, err := wc.Start(context.Background(), def, weftclient.StartOptions{Source: "embeds", Inputs: map[string]any{"items": items}})
	require.NoError(t, err)
	res, err := run.Get(context.Background())
	require.NoError(t, err)
	out := res.Output.GetStructValue().AsMap()
	require.EqualValues(t, 8, out["count"])
	require.EqualValues(t, 1, out["errors"], "the long item reports its own error: %v", out["firstError"])
	requests, inputs := f.Counts()
	// attempt 1: [0-7] refused (400), [0-3] embedded, [4-7] fails (500);
	// attempt 2: [4-7] refused, [4 5] refused, [4] embedded, [5] refused, [6 7] embedded.
	// Without the checkpoint attempt 2 starts again from [0-7]: 10 requests, 38 inputs.
	require.Equal(t, 8, requests)
	require.Equal(t, 26, inputs)
}

// BenchmarkEmbedFanout: a forEach of embeds (concurrency 32) batched into provider requests,
// against the same forEach one activity per item ("batch": false) and a hand-written workflow
// scheduling one embed activity per item, side by side on the same server and worker, with the
// offline embedder and with an OpenAI-compatible fake answering each request in 20 ms.
// provider=fake-20ms-fail1% fails 1% of requests with a 500 (retried). provider=fake-20ms-bad1%
// makes 1% of the items too long for the model, so the provider refuses every request that holds
// one: the step is a loop (which collects its items' errors, where a forEach stops at the first),
// batched and "batch": false, and the hand-written workflow counts its failures the same way.
// WEFT_FANOUT_ITEMS sets the items (default 10,000; the bad1% row needs at most 10,000, a loop's
// limit); WEFT_FANOUT_PER_ITEM=0 leaves the per-item layouts out (for 100,000).
//
//	go test ./integration -run '^$' -bench EmbedFanout -benchtime 1x
func BenchmarkEmbedFanout(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("WEFT_FANOUT_ITEMS")); err == nil && v > 0 {
		n = v
	}
	perItem := os.Getenv("WEFT_FANOUT_PER_ITEM") != "0"
	c := dial(b)
	// fake-20ms-floats: a server that ignores encoding_format and answers JSON numbers (the
	// client asks for base64 first, then numbers).
	for _, provider := range []string{"local", "fake-20ms", "fake-20ms-floats", "fake-20ms-fail1%", "fake-20ms-bad1%"} {
		bad := provider == "fake-20ms-bad1%"
		if bad && n > workflows.MaxLoopIterations {
			continue
		}
		b.Run(fmt.Sprintf("items=%d/provider=%s", n, provider), func(b *testing.B) {
			// The cache off: every layout embeds every item (TestBatchedEmbeds
			// measures the cache).
			cfg := activities.Config{MongoDBURI: store.URI, NoEmbedCache: true}
			model := embedder.Model
			var f *fakeembed.Server
			if provider != "local" {
				var err error
				f, err = fakeembed.Start(20 * time.Millisecond)
				require.NoError(b, err)
				defer f.Close()
				if provider == "fake-20ms-fail1%" {
					f.FailWhen(func(n int) bool { return n%100 == 50 })
				}
				f.IgnoreEncodingFormat = provider == "fake-20ms-floats"
				cfg.OpenAIBaseURL, cfg.OpenAIAPIKey, model = f.URL(), "k", "text-embedding-3-small"
			}
			queue := "bench-embeds-" + provider
			w, err := worker.New(c, worker.Options{TaskQueue: queue, Config: cfg})
			require.NoError(b, err)
			w.RegisterWorkflowWithOptions(handFanout, workflow.RegisterOptions{Name: "handFanout"})
			require.NoError(b, w.Start())
			defer w.Stop()
			wc := weftclient.New(c, queue)
			items := fanoutItems(n)
			wantErrors := 0
			if bad {
				// Items 50, 150, ...: longer than the fake takes.
				f.MaxInputChars = 64
				for i := 50; i < n; i += 100 {
					items[i] = strings.Repeat("too long ", 10) + fmt.Sprint(i)
					wantErrors++
				}
			}
			inputs := make([]map[string]any, n)
			for i, it := range items {
				inputs[i] = map[string]any{"text": it, "model": model, "inputType": "document"}
				if model != embedder.Model {
					inputs[i]["dimensions"] = 256
				}
			}
			requests := func() int {
				if f == nil {
					return 0
				}
				r, _ := f.Counts()
				return r
			}
			weft := func(batch string) (time.Duration, int, int) {
				r0 := requests()
				t0 := time.Now()
				def := embedFanoutDef(b, n, 32, model, batch)
				if bad {
					def = embedLoopDef(b, n, 32, model, batch)
				}
				run, err := wc.Start(context.Background(), def, weftclient.StartOptions{Source: "embeds", Inputs: map[string]any{"items": items}})
				require.NoError(b, err)
				res, err := run.Get(context.Background())
				require.NoError(b, err)
				wall := time.Since(t0)
				out := res.Output.GetStructValue().AsMap()
				require.EqualValues(b, n, out["count"])
				if bad {
					require.EqualValues(b, wantErrors, out["errors"], "each refused item reports its own error; the first: %v", out["firstError"])
				}
				return wall, requests() - r0, historyEvents(b, c, run.ID)
			}
			hand := func() (time.Duration, int, int) {
				r0 := requests()
				t0 := time.Now()
				hr, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: fmt.Sprintf("hand-embeds-%d", time.Now().UnixNano()), TaskQueue: queue}, "handFanout", "embed", inputs, 32)
				require.NoError(b, err)
				var done int
				require.NoError(b, hr.Get(context.Background(), &done))
				require.Equal(b, n-wantErrors, done)
				wall := time.Since(t0)
				return wall, requests() - r0, historyEvents(b, c, hr.GetID())
			}
			type figure struct {
				name string
				run  func() (time.Duration, int, int)
			}
			figures := []figure{{"batched", func() (time.Duration, int, int) { return weft("") }}}
			if perItem {
				figures = append(figures, figure{"per-item", func() (time.Duration, int, int) { return weft("false") }}, figure{"hand", hand})
			}
			walls := map[string][]float64{}
			for i := 0; b.Loop(); i++ {
				order := slices.Clone(figures)
				if i%2 == 1 {
					slices.Reverse(order)
				}
				for _, fg := range order {
					wall, reqs, events := fg.run()
					walls[fg.name] = append(walls[fg.name], wall.Seconds())
					b.ReportMetric(float64(reqs), fg.name+"-requests")
					b.ReportMetric(float64(events)/float64(n), fg.name+"-events/item")
				}
			}
			for _, fg := range figures {
				b.ReportMetric(float64(n)/median(walls[fg.name]), fg.name+"-items/s")
			}
			if perItem {
				b.ReportMetric(median(walls["per-item"])/median(walls["batched"]), "speedup-vs-per-item")
				b.ReportMetric(median(walls["hand"])/median(walls["batched"]), "speedup-vs-hand")
			}
		})
	}
}

// TestBatchedIngest: a forEach of 300 short documents into a collection sends their chunks to
// the provider 64 a request, a few documents a call, instead of a request per document, and
// stores exactly what one ingest per document ("batch": false) stores: the same chunk count in
// each collection and the same output for every document, in order.
func TestBatchedIngest(t *testing.T) {
	const n = 300
	f, err := fakeembed.Start(0)
	require.NoError(t, err)
	t.Cleanup(f.Close)
	queue := "batched-ingest"
	// the cache off: both layouts send every chunk, so their requests compare
	startWorkerWithConfig(t, queue, activities.Config{MongoDBURI: store.URI, OpenAIBaseURL: f.URL(), OpenAIAPIKey: "k", NoEmbedCache: true}, nil)
	wc := weftclient.New(dial(t), queue)
	docs := make([]any, n)
	for i := range docs {
		docs[i] = map[string]any{"source": fmt.Sprintf("doc-%d.md", i),
			"text": fmt.Sprintf("Document %d says how retries work and why they are safe to repeat. Its second sentence is about reviews, approvals and topic %d of eleven.", i, i%11)}
	}
	mc, err := mongo.Connect(options.Client().ApplyURI(store.URI))
	require.NoError(t, err)
	t.Cleanup(func() { _ = mc.Disconnect(context.Background()) })
	ingest := func(db, batch string) (outputs []any, requests int, wall time.Duration, stored int64) {
		opt := ""
		if batch != "" {
			opt = `"batch":` + batch + `,`
		}
		def, err := dsl.Load("ingest.json", []byte(fmt.Sprintf(`{"name":"ingest","inputs":{"docs":{"type":"array","required":true}},"steps":[
		  {"id":"each","tool":"ingest","forEach":"{{ inputs.docs }}",%s"concurrency":4,"inputs":{"text":"{{ item.text }}","source":"{{ item.source }}",
		    "db":%q,"collection":"docs","model":"text-embedding-3-small","chunkSize":100,"chunkOverlap":0,"metadata":{"i":"{{ index }}"}}}],
		  "output":{"results":"{{ each.output.results }}"}}`, opt, db)))
		require.NoError(t, err)
		r0, _ := f.Counts()
		t0 := time.Now()
		run, err := wc.Start(context.Background(), def, weftclient.StartOptions{Source: "ingest", Inputs: map[string]any{"docs": docs}})
		require.NoError(t, err)
		res, err := run.Get(context.Background())
		require.NoError(t, err)
		wall = time.Since(t0)
		r1, _ := f.Counts()
		stored, err = mc.Database(db).Collection("docs").CountDocuments(context.Background(), bson.D{})
		require.NoError(t, err)
		return res.Output.GetStructValue().AsMap()["results"].([]any), r1 - r0, wall, stored
	}
	batched, batchedRequests, batchedWall, batchedStored := ingest("batched_ingest_a", "")
	perItem, perItemRequests, perItemWall, perItemStored := ingest("batched_ingest_b", "false")
	require.Len(t, batched, n)
	for i := range batched {
		b, p := batched[i].(map[string]any), perItem[i].(map[string]any)
		require.Equal(t, fmt.Sprintf("doc-%d.md", i), b["source"], "outputs in document order")
		require.Equal(t, p["chunksCreated"], b["chunksCreated"], "document %d", i)
		require.Equal(t, p["metadata"], b["metadata"])
		require.Equal(t, "batched_ingest_a", b["db"])
	}
	require.Equal(t, perItemStored, batchedStored, "the same chunks stored")
	require.GreaterOrEqual(t, perItemRequests, n, "one request or more per document, one at a time")
	require.LessOrEqual(t, batchedRequests, int(batchedStored+63)/64+(n+63)/64, "chunks 64 a request (a call's last request may be short)")
	t.Logf("%d documents, %d chunks: batched %d requests in %s (%.0f docs/s); one ingest each %d requests in %s (%.0f docs/s)",
		n, batchedStored, batchedRequests, batchedWall.Round(10*time.Millisecond), n/batchedWall.Seconds(),
		perItemRequests, perItemWall.Round(10*time.Millisecond), n/perItemWall.Seconds())
}
