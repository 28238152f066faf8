package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/worker"
	"github.com/weftworks/weft/workflows/dsl"
)

// The benchmarks run the same shapes as a weft file and as a hand-written Temporal workflow
// calling the same no-op activities, on the same embedded server, in the same process:
//
//	go test ./integration -run '^$' -bench . -benchtime 3x
//
// Each iteration is a batch of benchRuns runs, benchInFlight at a time.
const (
	benchRuns     = 200
	benchInFlight = 20
)

func noop(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
	return map[string]any{"results": []any{map[string]any{"source": "a", "content": "x", "score": 1.0}}, "text": "x"}, nil, nil
}

var noopHandlers = map[string]activities.Handler{"query": noop, "search": noop, "rerank": noop, "embed": noop}

// handDAG is the hand-written counterpart of dagFile.
func handDAG(ctx workflow.Context, query string) (int, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	a := workflow.ExecuteActivity(ctx, "query", map[string]any{"query": query, "collection": "api"})
	b := workflow.ExecuteActivity(ctx, "query", map[string]any{"query": query, "collection": "arch"})
	var ra, rb toolspec.Result
	if err := a.Get(ctx, &ra); err != nil {
		return 0, err
	}
	if err := b.Get(ctx, &rb); err != nil {
		return 0, err
	}
	docs := append(ra.Output.(map[string]any)["results"].([]any), rb.Output.(map[string]any)["results"].([]any)...)
	var rr toolspec.Result
	err := workflow.ExecuteActivity(ctx, "rerank", map[string]any{"query": query, "documents": docs}).Get(ctx, &rr)
	return len(docs), err
}

// handChain is the hand-written counterpart of chainFile: n sequential embed activities.
func handChain(ctx workflow.Context, n int) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	text := "start"
	for i := 0; i < n; i++ {
		var r toolspec.Result
		if err := workflow.ExecuteActivity(ctx, "embed", map[string]any{"text": text}).Get(ctx, &r); err != nil {
			return "", err
		}
		text = r.Output.(map[string]any)["text"].(string)
	}
	return text, nil
}

const dagFile = `{"name":"dag","inputs":{"query":{"type":"string","required":true}},"steps":[
 {"id":"api","tool":"query","inputs":{"query":"{{ inputs.query }}","collection":"api"}},
 {"id":"arch","tool":"query","inputs":{"query":"{{ inputs.query }}","collection":"arch"}},
 {"id":"merged","tool":"merge","inputs":{"arrays":["{{ api.output.results }}","{{ arch.output.results }}"]}},
 {"id":"ranked","tool":"rerank","inputs":{"query":"{{ inputs.query }}","documents":"{{ merged.output.results }}"}}
],"output":"{{ merged.output.resultCount }}"}`

func chainFile(n int, tool string) string {
	b := dsl.New("chain")
	prev := "'start'"
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("s%d", i)
		switch tool {
		case "embed":
			b.Step(id, "embed", dsl.In{"text": "{{ " + prev + " }}"})
			prev = id + ".output.text"
		default:
			b.Step(id, "template", dsl.In{"text": "{{ " + prev + " }}"})
			prev = id + ".output.text"
		}
	}
	b.Output("{{ " + prev + " }}")
	data, err := b.ToJSON()
	if err != nil {
		panic(err)
	}
	return string(data)
}

type benchEnv struct {
	c     client.Client
	queue string
}

func newBenchEnv(b *testing.B, queue string) *benchEnv {
	c := dial(b)
	w, err := worker.New(c, worker.Options{TaskQueue: queue, Handlers: noopHandlers})
	if err != nil {
		b.Fatal(err)
	}
	w.RegisterWorkflowWithOptions(handDAG, workflow.RegisterOptions{Name: "handDAG"})
	w.RegisterWorkflowWithOptions(handChain, workflow.RegisterOptions{Name: "handChain"})
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(w.Stop)
	return &benchEnv{c: c, queue: queue}
}

// batch runs benchRuns workflows, benchInFlight at a time.
func (e *benchEnv) batch(b *testing.B, start func(i int) (client.WorkflowRun, error)) {
	sem := make(chan struct{}, benchInFlight)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for i := 0; i < benchRuns; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			run, err := start(i)
			if err == nil {
				err = run.Get(context.Background(), nil)
			}
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
}

func (e *benchEnv) weft(b *testing.B, name, def string, inputs map[string]any) func(i int) (client.WorkflowRun, error) {
	w, err := dsl.Load(name, []byte(def))
	if err != nil {
		b.Fatal(err)
	}
	req, err := runwire.NewRequest(w, name, inputs, nil)
	if err != nil {
		b.Fatal(err)
	}
	return func(i int) (client.WorkflowRun, error) {
		return e.c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{TaskQueue: e.queue}, runwire.WorkflowType, req)
	}
}

func (e *benchEnv) hand(name string, arg any) func(i int) (client.WorkflowRun, error) {
	return func(i int) (client.WorkflowRun, error) {
		return e.c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{TaskQueue: e.queue}, name, arg)
	}
}

// sideBySide alternates batches of the weft and the hand-written variant so both see the same
// server state (the embedded server slows as its history grows), and reports each one's
// throughput and the wall-time ratio weft/hand.
func (e *benchEnv) sideBySide(b *testing.B, weft, hand func(int) (client.WorkflowRun, error)) {
	var tw, th time.Duration
	for b.Loop() {
		t0 := time.Now()
		e.batch(b, weft)
		tw += time.Since(t0)
		t0 = time.Now()
		e.batch(b, hand)
		th += time.Since(t0)
	}
	b.ReportMetric(float64(benchRuns*b.N)/tw.Seconds(), "weft-runs/s")
	b.ReportMetric(float64(benchRuns*b.N)/th.Seconds(), "hand-runs/s")
	b.ReportMetric(tw.Seconds()/th.Seconds(), "wall-ratio")
}

// BenchmarkDAG is the 4-step multi-collection shape: two parallel searches, a merge, a rerank.
func BenchmarkDAG(b *testing.B) {
	e := newBenchEnv(b, "bench-dag")
	e.sideBySide(b, e.weft(b, "dag", dagFile, map[string]any{"query": "q"}), e.hand("handDAG", "q"))
}

// BenchmarkSequential10 is ten sequential activity steps.
func BenchmarkSequential10(b *testing.B) {
	e := newBenchEnv(b, "bench-seq")
	e.sideBySide(b, e.weft(b, "chain", chainFile(10, "embed"), nil), e.hand("handChain", 10))
}

// TestControlStepsAddNoHistoryEvents checks that data steps run inline: a run of 20 chained
// template steps has exactly as many history events as a run of one.
func TestControlStepsAddNoHistoryEvents(t *testing.T) {
	c := dial(t)
	queue := "control"
	startWorker(t, c, queue, nil)
	count := func(def, id string) int {
		code, out, errOut := weft(t, queue, "run", writeTemp(t, def), "--id", id, "--quiet")
		if code != 0 {
			t.Fatalf("run %s: %s %s", id, out, errOut)
		}
		return historyLength(t, c, id)
	}
	one := count(chainFile(1, "template"), "control-1")
	twenty := count(chainFile(20, "template"), "control-20")
	if one != twenty {
		t.Fatalf("20 control steps made %d history events, 1 made %d: control steps must add none", twenty, one)
	}
	t.Logf("history events: %d for 1 control step, %d for 20", one, twenty)
}
