package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weftworks/weft/activities/toolspec"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows"
	"github.com/weftworks/weft/workflows/dsl"
)

// fakeTools is a complete fake of the tool activities: deterministic results, a call log, and
// failures on request. It stands at the edge of the world, where providers and the store would be.
type fakeTools struct {
	mu    sync.Mutex
	calls map[string]int
	// failures makes a tool fail with the given error type (or a retryable error when "").
	failures map[string]string
	// scripts replace a tool's fake behaviour (a scripted model for llm).
	scripts map[string]func(in map[string]any) (any, *toolspec.Usage, error)
}

func newFakeTools() *fakeTools {
	return &fakeTools{calls: map[string]int{}, failures: map[string]string{}, scripts: map[string]func(map[string]any) (any, *toolspec.Usage, error){}}
}

func (f *fakeTools) count(tool string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[tool]
}

func (f *fakeTools) handler(tool string) func(ctx context.Context, in map[string]any) (toolspec.Result, error) {
	return func(ctx context.Context, in map[string]any) (toolspec.Result, error) {
		f.mu.Lock()
		f.calls[tool]++
		failType, fails := f.failures[tool]
		script := f.scripts[tool]
		f.mu.Unlock()
		attempt := activity.GetInfo(ctx).Attempt
		if script != nil {
			out, u, err := script(in)
			return toolspec.Result{Output: out, Attempt: attempt, Usage: u}, err
		}
		if fails {
			if failType == "" {
				return toolspec.Result{}, errors.New(tool + " is down")
			}
			return toolspec.Result{}, temporal.NewNonRetryableApplicationError(tool+": bad input", failType, nil)
		}
		var out any
		switch tool {
		case "search", "query":
			coll := fmt.Sprint(in["collection"])
			q := fmt.Sprint(in["query"])
			out = map[string]any{"query": q, "results": []any{
				map[string]any{"source": coll + "/a.md", "content": "about " + q, "score": 0.9},
				map[string]any{"source": "shared.md", "content": "shared", "score": 0.5},
			}}
		case "rerank":
			docs, _ := in["documents"].([]any)
			out = map[string]any{"query": in["query"], "results": docs}
		case "similarity":
			out = map[string]any{"similarity": float64(len(fmt.Sprint(in["text1"]))) / 100}
		case "generate":
			out = map[string]any{"text": "summary of " + fmt.Sprint(in["prompt"])}
			return toolspec.Result{Output: out, Attempt: attempt, Usage: &toolspec.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}}, nil
		case "embed":
			out = map[string]any{"text": in["text"], "dimensions": 3}
		default:
			out = map[string]any{"tool": tool, "inputs": in}
		}
		return toolspec.Result{Output: out, Attempt: attempt}, nil
	}
}

// batchHandler is the fake of a batching tool's batch activity: the tool's fake per item, an
// item's non-retryable error its own, any other error the whole batch's (retried).
func (f *fakeTools) batchHandler(spec *toolspec.Spec) func(ctx context.Context, in toolspec.BatchIn) (toolspec.BatchOut, error) {
	item := f.handler(spec.Name)
	return func(ctx context.Context, in toolspec.BatchIn) (toolspec.BatchOut, error) {
		f.mu.Lock()
		f.calls[spec.BatchActivity()]++
		f.mu.Unlock()
		out := toolspec.BatchOut{Items: make([]toolspec.BatchItem, len(in.Items)), Attempt: activity.GetInfo(ctx).Attempt, Requests: 1}
		for i, inputs := range in.Items {
			res, err := item(ctx, inputs)
			f.mu.Lock()
			f.calls[spec.Name]-- // counted as the batch's, not as a call of its own
			f.mu.Unlock()
			if err != nil {
				var ae *temporal.ApplicationError
				if errors.As(err, &ae) && ae.NonRetryable() {
					out.Items[i] = toolspec.BatchItem{Error: ae.Message(), ErrorType: ae.Type()}
					continue
				}
				return toolspec.BatchOut{}, err
			}
			out.Items[i] = toolspec.BatchItem{Output: res.Output, Usage: res.Usage}
			if res.Usage != nil {
				u := *res.Usage
				if out.Usage != nil {
					u.PromptTokens += out.Usage.PromptTokens
					u.CompletionTokens += out.Usage.CompletionTokens
					u.TotalTokens += out.Usage.TotalTokens
					u.EmbeddingTokens += out.Usage.EmbeddingTokens
					u.CostUSD += out.Usage.CostUSD
				}
				out.Usage = &u
			}
		}
		return out, nil
	}
}

type harness struct {
	testsuite.WorkflowTestSuite
	env   *testsuite.TestWorkflowEnvironment
	tools *fakeTools
}

func newHarness(t *testing.T) *harness {
	h := &harness{tools: newFakeTools()}
	h.SetLogger(tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	h.env = h.NewTestWorkflowEnvironment()
	h.env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: workflows.DeadlockDetectionTimeout})
	h.env.RegisterWorkflowWithOptions(workflows.Run, workflow.RegisterOptions{Name: runwire.WorkflowType})
	h.env.RegisterWorkflowWithOptions(workflows.Chat, workflow.RegisterOptions{Name: runwire.ChatWorkflowType})
	h.env.RegisterWorkflowWithOptions(workflows.Batch, workflow.RegisterOptions{Name: workflows.BatchWorkflowType})
	for _, s := range toolspec.All() {
		if s.Kind == toolspec.KindActivity {
			h.env.RegisterActivityWithOptions(h.tools.handler(s.Name), activity.RegisterOptions{Name: s.Name})
		}
	}
	for _, s := range toolspec.Batchable() {
		h.env.RegisterActivityWithOptions(h.tools.batchHandler(s), activity.RegisterOptions{Name: s.BatchActivity()})
	}
	return h
}

// request is a run request as the client makes it: the file's text in definition_json.
func request(t *testing.T, def string, inputs map[string]any) *weftv1.RunRequest {
	t.Helper()
	in, err := structpb.NewStruct(inputs)
	require.NoError(t, err)
	return &weftv1.RunRequest{DefinitionJson: def, Inputs: in, Source: "test.json"}
}

// legacyRequest is a run request as weft made them before definition_json: the definition as
// a struct. Runs started that way must still run (and replay).
func legacyRequest(t *testing.T, def string, inputs map[string]any) *weftv1.RunRequest {
	t.Helper()
	req := request(t, def, inputs)
	req.Definition, req.DefinitionJson = structOf(t, def), ""
	return req
}

func structOf(t *testing.T, def string) *structpb.Struct {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(def), &m))
	d, err := structpb.NewStruct(m)
	require.NoError(t, err)
	return d
}

func (h *harness) run(t *testing.T, def string, inputs map[string]any) (*weftv1.RunResult, error) {
	t.Helper()
	h.env.ExecuteWorkflow(runwire.WorkflowType, request(t, def, inputs))
	require.True(t, h.env.IsWorkflowCompleted())
	if err := h.env.GetWorkflowError(); err != nil {
		return nil, err
	}
	var res weftv1.RunResult
	require.NoError(t, h.env.GetWorkflowResult(&res))
	return &res, nil
}

func statuses(res *weftv1.RunResult) map[string]string {
	out := map[string]string{}
	for _, s := range res.Steps {
		out[s.Id] = s.Status
	}
	return out
}

func outputJSON(t *testing.T, v *structpb.Value) string {
	b, err := v.MarshalJSON()
	require.NoError(t, err)
	return string(b)
}

const multiCollection = `{
  "name": "multi", "inputs": {"query": {"type": "string", "required": true}},
  "defaults": {"db": "kb"},
  "steps": [
    {"id": "api", "name": "Search API docs", "tool": "query", "inputs": {"query": "{{ inputs.query }}", "collection": "api", "rerank": false}},
    {"id": "arch", "tool": "query", "inputs": {"query": "{{ inputs.query }}", "collection": "arch", "rerank": false}},
    {"id": "merged", "tool": "merge", "inputs": {"arrays": ["{{ api.output.results }}", "{{ arch.output.results }}"], "dedup": true, "dedup_field": "source"}},
    {"id": "ranked", "tool": "rerank", "inputs": {"query": "{{ inputs.query }}", "documents": "{{ merged.output.results }}"}}
  ],
  "output": {"count": "{{ merged.output.resultCount }}", "top": "{{ ranked.output.results[0].source }}"}
}`

func TestMultiCollectionDAG(t *testing.T) {
	h := newHarness(t)
	res, err := h.run(t, multiCollection, map[string]any{"query": "auth"})
	require.NoError(t, err)
	require.JSONEq(t, `{"count": 3, "top": "api/a.md"}`, outputJSON(t, res.Output))
	require.Equal(t, map[string]string{"api": "completed", "arch": "completed", "merged": "completed", "ranked": "completed"}, statuses(res))
	require.Equal(t, 2, h.tools.count("query"))
	require.Equal(t, 1, h.tools.count("rerank"))
	require.Equal(t, 0, h.tools.count("merge"), "data steps run inline, never as activities")
	require.Equal(t, int64(3), res.Usage.Calls)
}

func TestDefaultsFillToolInputs(t *testing.T) {
	h := newHarness(t)
	var seen map[string]any
	h.env.OnActivity("search", anyCtx, anyArg).Return(func(ctx context.Context, in map[string]any) (toolspec.Result, error) {
		seen = in
		return toolspec.Result{Output: map[string]any{"results": []any{}}}, nil
	})
	_, err := h.run(t, `{"name":"d","defaults":{"db":"kb","collection":"docs"},"steps":[{"id":"s","tool":"search","inputs":{"query":"q","collection":"mine"}}]}`, nil)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"query": "q", "db": "kb", "collection": "mine"}, seen)
}

func TestConditionsAndBranches(t *testing.T) {
	h := newHarness(t)
	def := `{"name":"c","inputs":{"n":{"type":"number","default":1}},"steps":[
	  {"id":"gate","tool":"conditional","inputs":{"condition":"inputs.n > 5","then":["big"],"else":["small"]}},
	  {"id":"big","tool":"template","inputs":{"text":"big"}},
	  {"id":"small","tool":"template","inputs":{"text":"small {{ inputs.n }}"}},
	  {"id":"never","tool":"embed","condition":"{{ inputs.n > 100 }}","inputs":{"text":"x"}},
	  {"id":"after","tool":"template","inputs":{"text":"never={{ never.output }} big={{ big.output }}"}}
	],"output":{"small":"{{ small.output.text }}","after":"{{ after.output.text }}"}}`
	res, err := h.run(t, def, nil)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"gate": "completed", "big": "skipped", "small": "completed", "never": "skipped", "after": "completed"}, statuses(res))
	require.JSONEq(t, `{"small":"small 1","after":"never=null big=null"}`, outputJSON(t, res.Output))
	require.Equal(t, 0, h.tools.count("embed"))
	for _, s := range res.Steps {
		if s.Id == "big" {
			require.Contains(t, s.Reason, "branch not taken")
		}
	}
}

// TestForEachKeepsOrderAndLimitsConcurrency measures the most items in flight at once (one
// activity per item: "batch": false; TestBatchedForEachLimitsRequests is the batched layout) and
// requires it to be the configured concurrency, so that an interpreter running items one by one
// (peak 1) fails as surely as one running more at once than allowed. It needs no sleep: see
// inFlight.
func TestForEachKeepsOrderAndLimitsConcurrency(t *testing.T) {
	const concurrency = 2
	h := newHarness(t)
	flight := countInFlight(h, "embed")
	h.env.OnActivity("embed", anyCtx, anyArg).Return(func(ctx context.Context, in map[string]any) (toolspec.Result, error) {
		defer flight.returned()
		return toolspec.Result{Output: map[string]any{"text": in["text"]}}, nil
	})
	def := `{"name":"f","inputs":{"docs":{"type":"array"}},"steps":[
	  {"id":"each","tool":"embed","forEach":"{{ inputs.docs }}","batch":false,"concurrency":` + fmt.Sprint(concurrency) + `,"inputs":{"text":"{{ index }}:{{ item }}"}}
	],"output":"{{ each.output }}"}`
	res, err := h.run(t, def, map[string]any{"docs": []any{"a", "b", "c", "d", "e"}})
	require.NoError(t, err)
	require.JSONEq(t, `{"count":5,"results":[{"text":"0:a"},{"text":"1:b"},{"text":"2:c"},{"text":"3:d"},{"text":"4:e"}]}`, outputJSON(t, res.Output))
	require.Equal(t, concurrency, flight.max(), "most items in flight at once")
}

// inFlight counts the activities of one type that the workflow has scheduled and whose handler
// has not returned yet, and the most at once. It counts a scheduled activity in the workflow (an
// outbound interceptor), and a started listener makes every handler wait until the event loop has
// finished the workflow task that scheduled it (the test environment runs the listener on the loop
// and the handler after it). So all the activities one workflow task schedules count together
// before any of them can return, and an item can only be scheduled after an earlier one returned
// if the interpreter waits for it: the figure does not depend on goroutine timing.
type inFlight struct {
	interceptor.WorkerInterceptorBase
	tool      string
	mu        sync.Mutex
	now, peak int
}

func countInFlight(h *harness, tool string) *inFlight {
	f := &inFlight{tool: tool}
	h.env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{f}})
	h.env.SetOnActivityStartedListener(func(*activity.Info, context.Context, converter.EncodedValues) {})
	return f
}

func (f *inFlight) scheduled() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now++
	f.peak = max(f.peak, f.now)
}

func (f *inFlight) returned() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now--
}

func (f *inFlight) max() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.peak
}

func (f *inFlight) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &inFlightInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, f: f}
}

type inFlightInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	f *inFlight
}

func (i *inFlightInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&inFlightOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: outbound}, f: i.f})
}

type inFlightOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	f *inFlight
}

func (o *inFlightOutbound) ExecuteActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	if activityType == o.f.tool {
		o.f.scheduled()
	}
	return o.Next.ExecuteActivity(ctx, activityType, args...)
}

func TestLoopCollectsItemErrors(t *testing.T) {
	// In provider batches (embed batches) and one activity per item ("batch": false) alike.
	for _, batch := range []string{"", `"batch":false,`} {
		h := newHarness(t)
		h.tools.scripts["embed"] = func(in map[string]any) (any, *toolspec.Usage, error) {
			if in["text"] == "bad" {
				return nil, nil, temporal.NewNonRetryableApplicationError("text is bad", toolspec.ErrInvalidInput, nil)
			}
			return map[string]any{"text": in["text"]}, nil, nil
		}
		def := `{"name":"l","steps":[{"id":"l","tool":"loop",` + batch + `"inputs":{"items":["a","bad","c"],"as":"doc","step":{"tool":"embed","inputs":{"text":"{{ doc }}"}}}}],"output":"{{ l.output }}"}`
		res, err := h.run(t, def, nil)
		require.NoError(t, err)
		require.JSONEq(t, `{"iterations":3,"results":[{"text":"a"},null,{"text":"c"}],"errors":[{"index":1,"error":"text is bad"}]}`, outputJSON(t, res.Output))
	}
}

func TestContinueOnError(t *testing.T) {
	h := newHarness(t)
	h.tools.failures["similarity"] = toolspec.ErrInvalidInput
	def := `{"name":"c","steps":[
	  {"id":"sim","tool":"similarity","continueOnError":true,"inputs":{"text1":"a","text2":"b"}},
	  {"id":"next","tool":"template","inputs":{"text":"sim={{ sim.output }} err={{ sim.error }}"}}
	],"output":"{{ next.output.text }}"}`
	res, err := h.run(t, def, nil)
	require.NoError(t, err)
	require.Equal(t, `"sim=null err=similarity: bad input"`, outputJSON(t, res.Output))
	require.Equal(t, "failed", statuses(res)["sim"])
	require.Equal(t, 1, h.tools.count("similarity"), "invalid input is not retried")
}

func TestFailureEndsRunAndIsRetriedFirst(t *testing.T) {
	h := newHarness(t)
	h.tools.failures["search"] = "" // retryable
	def := `{"name":"f","steps":[
	  {"id":"s","tool":"search","retry":{"maxAttempts":3,"initialInterval":"1s"},"inputs":{"query":"q"}},
	  {"id":"after","tool":"template","inputs":{"text":"{{ s.output.query }}"}}
	]}`
	_, err := h.run(t, def, nil)
	require.Error(t, err)
	require.Contains(t, err.Error(), `step "s": search is down`)
	require.Equal(t, 3, h.tools.count("search"))
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae))
	require.Equal(t, runwire.ErrStepFailed, ae.Type())
}

func TestInvalidDefinitionIsNotRetried(t *testing.T) {
	h := newHarness(t)
	_, err := h.run(t, `{"name":"bad","steps":[{"id":"a","tool":"serch","inputs":{}}]}`, nil)
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae), "%v", err)
	require.Equal(t, runwire.ErrInvalidDefinition, ae.Type())
	require.True(t, ae.NonRetryable())
	require.Contains(t, ae.Message(), `unknown tool "serch" (did you mean "search"?)`)

	h = newHarness(t)
	_, err = h.run(t, multiCollection, map[string]any{"qurey": "x"})
	require.ErrorContains(t, err, `unknown input "qurey"`)
}

const reviewFlow = `{"name":"r","steps":[
  {"id":"draft","tool":"template","inputs":{"text":"proposal"}},
  {"id":"approve_it","name":"Approve the draft","tool":"review","inputs":{"title":"Ship it?","data":"{{ draft.output.text }}"}},
  {"id":"publish","tool":"template","inputs":{"text":"{{ approve_it.output.decision }}: {{ approve_it.output.data }}"}}
],"output":"{{ publish.output.text }}"}`

func decision(t *testing.T, s string) json.RawMessage { return json.RawMessage(s) }

func TestReviewByUpdate(t *testing.T) {
	h := newHarness(t)
	var state weftv1.ExecutionState
	h.env.RegisterDelayedCallback(func() {
		v, err := h.env.QueryWorkflow(runwire.QueryState)
		require.NoError(t, err)
		require.NoError(t, v.Get(&state))
		// The validator refuses bad requests before anything reaches history.
		for _, bad := range []string{`{"step":"nope","decision":"approve"}`, `{"step":"draft","decision":"approve"}`,
			`{"step":"approve_it","decision":"maybe"}`, `{"step":"approve_it","decision":"edit"}`, `"not an object"`} {
			h.env.UpdateWorkflow(runwire.UpdateReview, "bad", &testsuite.TestUpdateCallback{
				OnAccept:   func() { t.Errorf("update %s was accepted", bad) },
				OnReject:   func(err error) {},
				OnComplete: func(any, error) {},
			}, decision(t, bad))
		}
		h.env.UpdateWorkflow(runwire.UpdateReview, "ok", &testsuite.TestUpdateCallback{
			OnAccept:   func() {},
			OnReject:   func(err error) { t.Errorf("rejected: %v", err) },
			OnComplete: func(any, error) {},
		}, decision(t, `{"step":"approve_it","decision":"edit","data":"better proposal","reviewer":"ana","comment":"tweaked"}`))
	}, time.Hour)
	res, err := h.run(t, reviewFlow, nil)
	require.NoError(t, err)
	require.Equal(t, `"edit: better proposal"`, outputJSON(t, res.Output))
	require.Equal(t, "awaiting_review", state.Status)
	require.Len(t, state.PendingReviews, 1)
	require.Equal(t, "Ship it?", state.PendingReviews[0].Title)
	require.Equal(t, `"proposal"`, outputJSON(t, state.PendingReviews[0].Data))
	for _, s := range res.Steps {
		if s.Id == "approve_it" {
			require.Equal(t, "edit by ana", s.Summary)
		}
	}
}

func TestReviewBySignal(t *testing.T) {
	h := newHarness(t)
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(runwire.SignalReview, decision(t, `{"step":"nope","decision":"approve"}`)) // ignored
		h.env.SignalWorkflow(runwire.SignalReview, decision(t, `{"decision":"approve","reviewer":"bo"}`))
	}, 10*time.Minute)
	res, err := h.run(t, reviewFlow, nil)
	require.NoError(t, err)
	require.Equal(t, `"approve: proposal"`, outputJSON(t, res.Output))
}

func TestReviewRejectAndTimeout(t *testing.T) {
	h := newHarness(t)
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(runwire.SignalReview, decision(t, `{"step":"approve_it","decision":"reject","reviewer":"cy","comment":"no"}`))
	}, time.Minute)
	_, err := h.run(t, reviewFlow, nil)
	require.ErrorContains(t, err, `step "approve_it": rejected by cy: no`)
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae))
	require.Equal(t, runwire.ErrReviewRejected, ae.Type())

	// A rejected review with continueOnError still shows its decision, so files can branch on it.
	h = newHarness(t)
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(runwire.SignalReview, decision(t, `{"step":"rv","decision":"reject"}`))
	}, time.Minute)
	res, err := h.run(t, `{"name":"r","steps":[
	  {"id":"rv","tool":"review","continueOnError":true,"inputs":{"title":"ok?"}},
	  {"id":"fallback","tool":"template","condition":"{{ rv.output.decision == 'reject' }}","inputs":{"text":"took the fallback"}}
	],"output":"{{ fallback.output.text }}"}`, nil)
	require.NoError(t, err)
	require.Equal(t, `"took the fallback"`, outputJSON(t, res.Output))

	for onTimeout, want := range map[string]string{"approve": `"approve: proposal"`, "fail": "no review decision within 2h0m0s"} {
		h = newHarness(t)
		def := strings.Replace(reviewFlow, `"title":"Ship it?"`, `"title":"Ship it?","timeout":"2h","onTimeout":"`+onTimeout+`"`, 1)
		res, err := h.run(t, def, nil)
		if onTimeout == "fail" {
			require.ErrorContains(t, err, want)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, want, outputJSON(t, res.Output))
	}
}

func TestGenerateUsageIsTotalled(t *testing.T) {
	h := newHarness(t)
	res, err := h.run(t, `{"name":"g","steps":[
	  {"id":"a","tool":"generate","inputs":{"prompt":"one"}},
	  {"id":"b","tool":"generate","inputs":{"prompt":"two {{ a.output.text }}"}}
	],"output":"{{ b.output.text }}"}`, nil)
	require.NoError(t, err)
	require.Equal(t, `"summary of two summary of one"`, outputJSON(t, res.Output))
	require.Equal(t, int64(30), res.Usage.TotalTokens)
	require.Equal(t, int64(2), res.Usage.Calls)
}

// TestTemplatesRunOnFakes runs every built-in template on the fake tools.
func TestTemplatesRunOnFakes(t *testing.T) {
	files, err := templatesDir()
	require.NoError(t, err)
	for _, f := range files {
		t.Run(f.name, func(t *testing.T) {
			w, err := dsl.Load(f.name, f.data)
			require.NoError(t, err)
			inputs := map[string]any{}
			names := make([]string, 0, len(w.Def.Inputs))
			for k := range w.Def.Inputs {
				names = append(names, k)
			}
			sort.Strings(names)
			for _, k := range names {
				if in := w.Def.Inputs[k]; in.Required {
					switch in.Type {
					case "number":
						inputs[k] = 3.0
					case "array":
						inputs[k] = []any{map[string]any{"text": "x", "source": "x.md"}}
					default:
						inputs[k] = "x"
					}
				}
			}
			h := newHarness(t)
			// A template with a review gets an approval once it waits.
			h.env.RegisterDelayedCallback(func() {
				h.env.SignalWorkflow(runwire.SignalReview, json.RawMessage(`{"decision":"approve"}`))
			}, time.Hour)
			_, err = h.run(t, string(f.data), inputs)
			require.NoError(t, err)
		})
	}
}

var (
	anyCtx = mockAnything
	anyArg = mockAnything
)

// TestWorkflowSideMessagesPointAtTheUsersFile: a definition the worker refuses (here a tool the
// worker does not know, as when a client is newer than the worker) is reported at the line and
// column of the file as the user wrote it, which the request carries; the Flow format too, which
// the worker converts itself. Requests that carry a struct cannot say more than the field.
func TestWorkflowSideMessagesPointAtTheUsersFile(t *testing.T) {
	steps := "{\n  \"name\": \"bad\",\n  \"steps\": [\n    {\"id\": \"a\", \"tool\": \"serch\", \"inputs\": {}}\n  ]\n}\n"
	flow, err := os.ReadFile("../testdata/bad/flow-missing-fields.json")
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		req  *weftv1.RunRequest
		want string
	}{
		{"step format", request(t, steps, nil), `test.json:4:25: steps[0].tool: unknown tool "serch"`},
		{"flow format", request(t, string(flow), nil), `test.json:6:15: nodes[0].data: missing required field "instruction"`},
		{"struct", legacyRequest(t, steps, nil), `test.json:1:53: steps[0].tool: unknown tool "serch"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.env.ExecuteWorkflow(runwire.WorkflowType, tc.req)
			require.ErrorContains(t, h.env.GetWorkflowError(), tc.want)
		})
	}
}
