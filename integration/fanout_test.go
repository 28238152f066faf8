package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/toolspec"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/worker"
	"github.com/weftworks/weft/workflows"
	"github.com/weftworks/weft/workflows/dsl"
)

// BatchThresholdForTests is where a forEach starts to run in batches.
const BatchThresholdForTests = workflows.BatchThreshold

func fanoutHandlers() map[string]activities.Handler {
	return map[string]activities.Handler{"chunk": func(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
		return map[string]any{"chunks": []any{in["text"]}, "count": 1}, nil, nil
	}}
}

func fanoutDef(n, concurrency int) *dsl.Workflow {
	w, err := dsl.Load("fanout.json", []byte(fmt.Sprintf(`{"name":"fanout","inputs":{"items":{"type":"array","required":true}},"steps":[
	  {"id":"each","tool":"chunk","forEach":"{{ inputs.items }}","concurrency":%d,"inputs":{"text":"{{ item }}"}}],
	  "output":{"count":"{{ each.output.count }}","last":"{{ each.output.results[%d].chunks[0] }}"}}`, concurrency, n-1)))
	if err != nil {
		panic(err)
	}
	return w
}

func fanoutItems(n int) []any {
	items := make([]any, n)
	for i := range items {
		items[i] = fmt.Sprintf("item %d", i)
	}
	return items
}

// historyEvents counts the events of a run and of the child runs it started.
func historyEvents(t testing.TB, c client.Client, id string) int {
	n := 0
	it := c.GetWorkflowHistory(context.Background(), id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		n++
		if a := ev.GetChildWorkflowExecutionStartedEventAttributes(); a != nil {
			n += historyEvents(t, c, a.GetWorkflowExecution().GetWorkflowId())
		}
	}
	return n
}

// TestForEachOf50000Items: a forEach over 50,000 items (35,000 beyond where one history would
// end) completes with every output in order, and the run's state shows the progress meanwhile.
// WEFT_FANOUT_ITEMS=100000 runs it at 100,000.
func TestForEachOf50000Items(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 50,000 activities")
	}
	c := dial(t)
	queue := "fanout-50k"
	startWorker(t, c, queue, fanoutHandlers())
	wc := weftclient.New(c, queue)
	n := 50000
	if v, err := strconv.Atoi(os.Getenv("WEFT_FANOUT_ITEMS")); err == nil && v > BatchThresholdForTests {
		n = v
	}
	start := time.Now()
	run, err := wc.Start(context.Background(), fanoutDef(n, 32), weftclient.StartOptions{Source: "fanout", Inputs: map[string]any{"items": fanoutItems(n)}})
	require.NoError(t, err)
	sawProgress := false
	require.Eventually(t, func() bool {
		st, err := wc.State(context.Background(), run.ID)
		if err != nil || len(st.Steps) == 0 {
			return false
		}
		s := st.Steps[0]
		sawProgress = sawProgress || (int(s.ItemsTotal) == n && s.ItemsDone > 0 && int(s.ItemsDone) < n)
		return s.Status == "completed"
	}, 10*time.Minute, 500*time.Millisecond)
	res, err := run.Get(context.Background())
	require.NoError(t, err)
	wall := time.Since(start)
	out := res.Output.GetStructValue().AsMap()
	require.EqualValues(t, n, out["count"])
	require.Equal(t, fmt.Sprintf("item %d", n-1), out["last"], "outputs in item order")
	require.True(t, sawProgress, "the state showed done/total while it ran")
	events := historyEvents(t, c, run.ID)
	t.Logf("%d items in %s: %.0f items/s, %.2f history events per item (%d in all, the parent's and its batches')",
		n, wall.Round(100*time.Millisecond), float64(n)/wall.Seconds(), float64(events)/float64(n), events)
	require.Less(t, historyLength(t, c, run.ID), 1000, "the parent's own history stays small")
}

// handFanout is the hand-written counterpart of the weft forEach: one workflow that schedules an
// activity of tool per item's inputs, concurrency at a time, and returns how many succeeded (an
// item that fails does not stop the others, as a weft loop collects its items' errors).
func handFanout(ctx workflow.Context, tool string, inputs []map[string]any, concurrency int) (int, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	running, done := 0, 0
	for _, in := range inputs {
		if err := workflow.Await(ctx, func() bool { return running < concurrency }); err != nil {
			return 0, err
		}
		running++
		workflow.Go(ctx, func(ctx workflow.Context) {
			var r toolspec.Result
			if err := workflow.ExecuteActivity(ctx, tool, in).Get(ctx, &r); err == nil {
				done++
			}
			running--
		})
	}
	if err := workflow.Await(ctx, func() bool { return running == 0 }); err != nil {
		return 0, err
	}
	return done, nil
}

// BenchmarkFanout10k: a forEach of 10,000 items with concurrency 32 (which weft runs in batch
// child workflows) against a hand-written workflow scheduling the same 10,000 activities with
// the same concurrency in one history, side by side on the same embedded server and worker, in
// alternating order. activity=instant is bound by this machine's CPU; activity=20ms by the
// concurrency, as calls to a provider are, which is where a batch layout that leaves part of
// the concurrency unused shows.
//
//	go test ./integration -run '^$' -bench Fanout10k -benchtime 2x
func BenchmarkFanout10k(b *testing.B) {
	c := dial(b)
	for _, tc := range []struct {
		n     int
		delay time.Duration
	}{{10000, 0}, {10000, 20 * time.Millisecond}, {5000, 200 * time.Millisecond}} {
		n, delay := tc.n, tc.delay
		items := fanoutItems(n)
		inputs := make([]map[string]any, n)
		for i, it := range items {
			inputs[i] = map[string]any{"text": it}
		}
		def := fanoutDef(n, 32)
		name := fmt.Sprintf("items=%d/activity=instant", n)
		if delay > 0 {
			name = fmt.Sprintf("items=%d/activity=%s", n, delay)
		}
		b.Run(name, func(b *testing.B) {
			queue := fmt.Sprintf("bench-fanout-%d-%d", n, delay.Milliseconds())
			w, err := worker.New(c, worker.Options{TaskQueue: queue, Handlers: map[string]activities.Handler{"chunk": func(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
				if delay > 0 {
					select {
					case <-time.After(delay):
					case <-ctx.Done():
						return nil, nil, ctx.Err()
					}
				}
				return map[string]any{"chunks": []any{in["text"]}, "count": 1}, nil, nil
			}}})
			require.NoError(b, err)
			w.RegisterWorkflowWithOptions(handFanout, workflow.RegisterOptions{Name: "handFanout"})
			require.NoError(b, w.Start())
			defer w.Stop()
			wc := weftclient.New(c, queue)
			weft := func() time.Duration {
				t0 := time.Now()
				run, err := wc.Start(context.Background(), def, weftclient.StartOptions{Source: "fanout", Inputs: map[string]any{"items": items}})
				require.NoError(b, err)
				_, err = run.Get(context.Background())
				require.NoError(b, err)
				return time.Since(t0)
			}
			hand := func() time.Duration {
				t0 := time.Now()
				hr, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: fmt.Sprintf("hand-fanout-%d", time.Now().UnixNano()), TaskQueue: queue}, "handFanout", "chunk", inputs, 32)
				require.NoError(b, err)
				var done int
				require.NoError(b, hr.Get(context.Background(), &done))
				require.Equal(b, n, done)
				return time.Since(t0)
			}
			var tw, th time.Duration
			var ratios []float64
			for i := 0; b.Loop(); i++ {
				var w, h time.Duration
				if i%2 == 0 {
					w, h = weft(), hand()
				} else {
					h, w = hand(), weft()
				}
				tw, th = tw+w, th+h
				ratios = append(ratios, w.Seconds()/h.Seconds())
			}
			slices.Sort(ratios)
			b.ReportMetric(float64(n*b.N)/tw.Seconds(), "weft-items/s")
			b.ReportMetric(float64(n*b.N)/th.Seconds(), "hand-items/s")
			b.ReportMetric(tw.Seconds()/th.Seconds(), "wall-ratio")
			// Each pair ran back to back, so the median of the pairs' ratios is what the
			// machine's slow spells disturb least.
			m := len(ratios) / 2
			median := ratios[m]
			if len(ratios)%2 == 0 {
				median = (ratios[m-1] + ratios[m]) / 2
			}
			b.ReportMetric(median, "median-pair-ratio")
		})
	}
}

// TestLargeForEachOutputsSpillToTheStore: when a batch's outputs together are more than a workflow
// result can carry, they are stored and the forEach's results hold references, as the claim
// check does for one large output; the references read back the outputs whole.
func TestLargeForEachOutputsSpillToTheStore(t *testing.T) {
	c := dial(t)
	queue := "fanout-spill"
	cfg := activities.Config{MongoDBURI: store.URI, Database: "spill"}
	startWorkerWithConfig(t, queue, cfg, map[string]activities.Handler{"chunk": func(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
		return map[string]any{"chunks": []any{strings.Repeat(in["text"].(string)+" ", 400)}, "count": 1}, nil, nil
	}})
	wc := weftclient.New(c, queue)
	const n = 2100 // 4 batches of 525 items, 2.1 MB of outputs each
	w, err := dsl.Load("spill.json", []byte(`{"name":"spill","inputs":{"items":{"type":"array","required":true}},"steps":[
	  {"id":"each","tool":"chunk","forEach":"{{ inputs.items }}","concurrency":32,"inputs":{"text":"{{ item }}"}}],
	  "output":{"count":"{{ each.output.count }}","last":"{{ each.output.results[2099] }}"}}`))
	require.NoError(t, err)
	res, err := wc.Run(context.Background(), w, weftclient.StartOptions{Source: "spill", ID: "spill-1", Inputs: map[string]any{"items": fanoutItems(n)}})
	require.NoError(t, err)
	out := res.Output.GetStructValue().AsMap()
	require.EqualValues(t, n, out["count"])
	ref := out["last"].(map[string]any)
	id, ok := ref[activities.BlobKey].(string)
	require.True(t, ok, "the item's output is a reference: %v", ref)
	base, at, found := strings.Cut(id, "@")
	require.True(t, found, "the reference names its element: %v", ref)
	data, err := activities.NewTools(cfg).GetBlob(context.Background(), base)
	require.NoError(t, err)
	var list []map[string]any
	require.NoError(t, json.Unmarshal(data, &list), "a batch's outputs are stored together")
	k, err := strconv.Atoi(at)
	require.NoError(t, err)
	item := list[k]
	require.Equal(t, strings.Repeat("item 2099 ", 400), item["chunks"].([]any)[0], "the stored output is the item's, whole")
	require.Less(t, len(historyJSON(t, c, "spill-1")), 2<<20, "the parent's history holds references")
}
