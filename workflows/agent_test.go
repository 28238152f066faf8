package workflows_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weftworks/weft/activities/toolspec"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows"
)

// scriptedModel is a fake llm activity: each call returns the next answer of the script and
// records the messages it was sent.
type scriptedModel struct {
	mu      sync.Mutex
	answers []func(in map[string]any) map[string]any
	seen    [][]any
}

func (m *scriptedModel) handler(in map[string]any) (any, *toolspec.Usage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	msgs, _ := in["messages"].([]any)
	m.seen = append(m.seen, msgs)
	i := len(m.seen) - 1
	if i >= len(m.answers) {
		return nil, nil, fmt.Errorf("script exhausted after %d answers", len(m.answers))
	}
	return m.answers[i](in), &toolspec.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110, CostUSD: 0.001}, nil
}

func (m *scriptedModel) calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.seen)
}

func say(text string) func(map[string]any) map[string]any {
	return func(map[string]any) map[string]any { return map[string]any{"text": text, "toolCalls": []any{}} }
}

func callTools(calls ...[3]string) func(map[string]any) map[string]any {
	return func(map[string]any) map[string]any {
		var tc []any
		for _, c := range calls {
			tc = append(tc, map[string]any{"id": c[0], "name": c[1], "arguments": c[2]})
		}
		return map[string]any{"text": "", "toolCalls": tc}
	}
}

func withModel(h *harness, m *scriptedModel) { h.tools.scripts["llm"] = m.handler }

const agentFlow = `{"name":"a","inputs":{"q":{"type":"string","default":"rate limits"}},"defaults":{"collection":"docs"},"steps":[
  {"id":"helper","tool":"agent","inputs":{"prompt":"Answer: {{ inputs.q }}","tools":["search","ingest"],"approve":["ingest"],"maxIterations":4}}
],"output":"{{ helper.output }}"}`

func agentOutput(t *testing.T, res *weftv1.RunResult) map[string]any {
	t.Helper()
	out, _ := res.Output.AsInterface().(map[string]any)
	require.NotNil(t, out)
	return out
}

func TestAgentCallsToolsThenAnswers(t *testing.T) {
	h := newHarness(t)
	m := &scriptedModel{answers: []func(map[string]any) map[string]any{
		callTools([3]string{"c1", "search", `{"query":"rate limits"}`}),
		say("Clients get 429 with Retry-After."),
	}}
	withModel(h, m)
	res, err := h.run(t, agentFlow, nil)
	require.NoError(t, err)
	out := agentOutput(t, res)
	require.Equal(t, "Clients get 429 with Retry-After.", out["text"])
	require.Equal(t, workflows.StopFinalAnswer, out["stopReason"])
	require.EqualValues(t, 2, out["iterations"])
	calls := out["toolCalls"].([]any)
	require.Len(t, calls, 1)
	call := calls[0].(map[string]any)
	require.Equal(t, "search", call["tool"])
	require.Equal(t, "completed", call["status"])
	require.Contains(t, call["result"], "about rate limits")
	require.Equal(t, 1, h.tools.count("search"))
	require.Equal(t, 2, m.calls())
	// The default collection reached the tool; the second model call saw the tool result.
	require.Contains(t, call["result"], "docs/a.md")
	last := m.seen[1]
	require.Equal(t, "tool", last[len(last)-1].(map[string]any)["role"])
	require.Equal(t, "c1", last[len(last)-1].(map[string]any)["toolCallId"])
	// Usage of both model calls is on the run.
	require.EqualValues(t, 220, res.Usage.TotalTokens)
	require.InDelta(t, 0.002, res.Usage.CostUsd, 1e-9)
	for _, s := range res.Steps {
		require.Len(t, s.ToolCalls, 1)
		require.EqualValues(t, 2, s.Iterations)
		require.EqualValues(t, 220, s.Usage.TotalTokens)
	}
}

func TestAgentModelMistakesGoBackToTheModel(t *testing.T) {
	h := newHarness(t)
	m := &scriptedModel{answers: []func(map[string]any) map[string]any{
		callTools([3]string{"c1", "teleport", `{}`}, [3]string{"c2", "search", `{"query": "x"`}, [3]string{"c3", "search", `{"limit": "ten"}`}),
		say("sorry"),
	}}
	withModel(h, m)
	res, err := h.run(t, agentFlow, nil)
	require.NoError(t, err)
	calls := agentOutput(t, res)["toolCalls"].([]any)
	require.Len(t, calls, 3)
	errs := []string{}
	for _, c := range calls {
		errs = append(errs, c.(map[string]any)["error"].(string))
	}
	require.Contains(t, errs[0], `unknown tool "teleport"`)
	require.Contains(t, errs[0], "search")
	require.Contains(t, errs[1], "not a JSON object")
	require.Contains(t, errs[2], "schema")
	require.Equal(t, 0, h.tools.count("search"))
	// The model was told all three, in order.
	second := m.seen[1]
	tail := second[len(second)-3:]
	for i, msg := range tail {
		require.True(t, strings.HasPrefix(msg.(map[string]any)["content"].(string), "error: "), "message %d: %v", i, msg)
	}
}

func TestAgentMaxIterations(t *testing.T) {
	forever := func(map[string]any) map[string]any {
		return map[string]any{"text": "", "toolCalls": []any{map[string]any{"id": "c", "name": "search", "arguments": `{"query":"again"}`}}}
	}
	t.Run("fails clearly", func(t *testing.T) {
		h := newHarness(t)
		withModel(h, &scriptedModel{answers: []func(map[string]any) map[string]any{forever, forever, forever, forever, forever}})
		_, err := h.run(t, agentFlow, nil)
		require.ErrorContains(t, err, "did not answer within maxIterations (4)")
		require.Equal(t, 4, h.tools.count("search"))
	})
	t.Run("returns with onLimit", func(t *testing.T) {
		h := newHarness(t)
		withModel(h, &scriptedModel{answers: []func(map[string]any) map[string]any{forever, forever}})
		def := strings.Replace(agentFlow, `"maxIterations":4`, `"maxIterations":2,"onLimit":"return"`, 1)
		res, err := h.run(t, def, nil)
		require.NoError(t, err)
		out := agentOutput(t, res)
		require.Equal(t, workflows.StopMaxIterations, out["stopReason"])
		require.Len(t, out["toolCalls"], 2)
	})
}

// TestAgentApprovalGates: two ingest calls in one turn are two gates with their own ids; one is
// approved with edited arguments, one rejected; a step-level decision is refused as ambiguous.
func TestAgentApprovalGates(t *testing.T) {
	h := newHarness(t)
	m := &scriptedModel{answers: []func(map[string]any) map[string]any{
		callTools([3]string{"a", "ingest", `{"text":"one","source":"1.md"}`}, [3]string{"b", "ingest", `{"text":"two","source":"2.md"}`}),
		say("done"),
	}}
	withModel(h, m)
	var state weftv1.ExecutionState
	h.env.RegisterDelayedCallback(func() {
		v, err := h.env.QueryWorkflow(runwire.QueryState)
		require.NoError(t, err)
		require.NoError(t, v.Get(&state))
		refuse := func(d string) {
			h.env.UpdateWorkflow(runwire.UpdateReview, d, &testsuite.TestUpdateCallback{
				OnAccept: func() { t.Errorf("update %s was accepted", d) }, OnReject: func(error) {}, OnComplete: func(any, error) {},
			}, decision(t, d))
		}
		refuse(`{"step":"helper","decision":"approve"}`)                             // two pending: ambiguous
		refuse(`{"decision":"approve"}`)                                             // likewise
		refuse(`{"id":"helper/a","decision":"edit","data":{"text":"x","source":7}}`) // edited args must fit the tool
		refuse(`{"id":"helper/zzz","decision":"approve"}`)                           // no such gate
		ok := func(d string) {
			h.env.UpdateWorkflow(runwire.UpdateReview, d, &testsuite.TestUpdateCallback{
				OnAccept: func() {}, OnReject: func(err error) { t.Errorf("%s rejected: %v", d, err) }, OnComplete: func(any, error) {},
			}, decision(t, d))
		}
		ok(`{"id":"helper/a","decision":"edit","data":{"text":"one, corrected","source":"1.md"},"reviewer":"ana"}`)
		ok(`{"id":"helper/b","decision":"reject","reviewer":"bo","comment":"not this one"}`)
	}, time.Second)
	res, err := h.run(t, agentFlow, nil)
	require.NoError(t, err)
	require.Len(t, state.PendingReviews, 2)
	require.Equal(t, []string{"helper/a", "helper/b"}, []string{state.PendingReviews[0].Id, state.PendingReviews[1].Id})
	require.Equal(t, runwire.GateToolCall, state.PendingReviews[0].Kind)
	require.Equal(t, "ingest", state.PendingReviews[0].Tool)
	require.Equal(t, "awaiting_review", state.Status)
	require.Equal(t, 1, h.tools.count("ingest"), "only the approved call ran")
	calls := agentOutput(t, res)["toolCalls"].([]any)
	require.Equal(t, "completed", calls[0].(map[string]any)["status"])
	require.Equal(t, "one, corrected", calls[0].(map[string]any)["arguments"].(map[string]any)["text"])
	require.Equal(t, "rejected", calls[1].(map[string]any)["status"])
	require.Contains(t, calls[1].(map[string]any)["error"], "not this one")
	// The transcript shows the arguments that ran, both in the output and to the model.
	msgs := agentOutput(t, res)["messages"].([]any)
	requireAnsweredTranscript(t, msgs)
	for _, conv := range [][]any{msgs, m.seen[1]} {
		asked := assistantCalls(t, conv)
		require.Len(t, asked, 2)
		require.JSONEq(t, `{"text":"one, corrected","source":"1.md"}`, asked[0]["arguments"].(string), "the edit, as it ran")
		require.JSONEq(t, `{"text":"two","source":"2.md"}`, asked[1]["arguments"].(string), "a rejected call keeps the model's")
	}
}

// TestAgentEditedArgumentsBeforeTheChange: a run recorded before ChangeAgentEditedArguments keeps
// the model's own arguments in the assistant message.
func TestAgentEditedArgumentsBeforeTheChange(t *testing.T) {
	h := newHarness(t)
	h.env.OnGetVersion(workflows.ChangeAgentEditedArguments, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	withModel(h, &scriptedModel{answers: []func(map[string]any) map[string]any{
		callTools([3]string{"a", "ingest", `{"text":"one","source":"1.md"}`}),
		say("done"),
	}})
	h.env.RegisterDelayedCallback(func() {
		d := `{"id":"helper/a","decision":"edit","data":{"text":"one, corrected","source":"1.md"}}`
		h.env.UpdateWorkflow(runwire.UpdateReview, d, &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(err error) { t.Errorf("%s rejected: %v", d, err) }, OnComplete: func(any, error) {},
		}, decision(t, d))
	}, time.Second)
	res, err := h.run(t, agentFlow, nil)
	require.NoError(t, err)
	asked := assistantCalls(t, agentOutput(t, res)["messages"].([]any))
	require.JSONEq(t, `{"text":"one","source":"1.md"}`, asked[0]["arguments"].(string))
}

// assistantCalls is the tool calls of a transcript's first assistant message that has some.
func assistantCalls(t *testing.T, msgs []any) []map[string]any {
	t.Helper()
	for _, m := range msgs {
		msg, _ := m.(map[string]any)
		if calls, _ := msg["toolCalls"].([]any); msg["role"] == "assistant" && len(calls) > 0 {
			out := make([]map[string]any, len(calls))
			for i, c := range calls {
				out[i] = c.(map[string]any)
			}
			return out
		}
	}
	require.Fail(t, "no assistant message with tool calls", "%v", msgs)
	return nil
}

// TestForEachReviewGates: each item of a review step is its own gate.
func TestForEachReviewGates(t *testing.T) {
	const def = `{"name":"fe","steps":[
	  {"id":"ok","tool":"review","forEach":"{{ ['a','b','c'] }}","inputs":{"title":"Approve {{ item }}?","data":"{{ item }}"}}
	],"output":"{{ ok.output.results }}"}`
	h := newHarness(t)
	var state weftv1.ExecutionState
	h.env.RegisterDelayedCallback(func() {
		v, err := h.env.QueryWorkflow(runwire.QueryState)
		require.NoError(t, err)
		require.NoError(t, v.Get(&state))
		h.env.UpdateWorkflow(runwire.UpdateReview, "all", &testsuite.TestUpdateCallback{
			OnAccept: func() { t.Error("a step-level decision was accepted for three gates") }, OnReject: func(error) {}, OnComplete: func(any, error) {},
		}, decision(t, `{"step":"ok","decision":"approve"}`))
		h.env.UpdateWorkflow(runwire.UpdateReview, "shape", &testsuite.TestUpdateCallback{
			OnAccept: func() { t.Error("edit with an object accepted where text was shown") }, OnReject: func(error) {}, OnComplete: func(any, error) {},
		}, decision(t, `{"id":"ok[1]","decision":"edit","data":{"text":"B"}}`))
		for i, d := range []string{`{"id":"ok[0]","decision":"approve"}`, `{"id":"ok[1]","decision":"edit","data":"B"}`, `{"id":"ok[2]","decision":"approve"}`} {
			h.env.UpdateWorkflow(runwire.UpdateReview, fmt.Sprint(i), &testsuite.TestUpdateCallback{
				OnAccept: func() {}, OnReject: func(err error) { t.Errorf("%s: %v", d, err) }, OnComplete: func(any, error) {},
			}, decision(t, d))
		}
	}, time.Hour)
	res, err := h.run(t, def, nil)
	require.NoError(t, err)
	require.Len(t, state.PendingReviews, 3)
	for i, r := range state.PendingReviews {
		require.Equal(t, fmt.Sprintf("ok[%d]", i), r.Id)
		require.Equal(t, fmt.Sprintf("Approve %s?", []string{"a", "b", "c"}[i]), r.Title)
	}
	var got []string
	for _, r := range res.Output.GetListValue().AsSlice() {
		got = append(got, r.(map[string]any)["data"].(string))
	}
	require.Equal(t, []string{"a", "B", "c"}, got)
}

// TestWorkflowStepRunsChild: a workflow step runs the definition the client resolved as a child.
func TestWorkflowStepRunsChild(t *testing.T) {
	child := `{"name":"shout","inputs":{"text":{"type":"string","required":true}},"steps":[
	  {"id":"up","tool":"template","inputs":{"text":"{{ upper(inputs.text) }}!"}}],"output":"{{ up.output.text }}"}`
	parent := `{"name":"p","steps":[{"id":"call","tool":"workflow","inputs":{"workflow":"shout","inputs":{"text":"hi"}}},
	  {"id":"after","tool":"template","inputs":{"text":"got {{ call.output }}"}}],"output":"{{ after.output.text }}"}`
	for _, tc := range []struct {
		name string
		req  func() *weftv1.RunRequest
	}{
		{"workflow_files", func() *weftv1.RunRequest {
			req := request(t, parent, nil)
			req.WorkflowFiles = map[string]string{"shout": child}
			return req
		}},
		{"structs, as runs started before workflow_files carry them", func() *weftv1.RunRequest {
			req := legacyRequest(t, parent, nil)
			req.Workflows = map[string]*structpb.Struct{"shout": structOf(t, child)}
			return req
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.env.ExecuteWorkflow(runwire.WorkflowType, tc.req())
			require.NoError(t, h.env.GetWorkflowError())
			var res weftv1.RunResult
			require.NoError(t, h.env.GetWorkflowResult(&res))
			require.Equal(t, `"got HI!"`, outputJSON(t, res.Output))
			require.True(t, strings.HasSuffix(res.Steps[0].ChildId, "/call"), res.Steps[0].ChildId)
		})
	}

	t.Run("unresolved workflow fails clearly", func(t *testing.T) {
		h := newHarness(t)
		_, err := h.run(t, parent, nil)
		require.ErrorContains(t, err, `workflow "shout" was not resolved when the run started`)
	})
}

// TestAgentWorkflowTool: "workflow:NAME" is offered with the workflow's inputs as parameters and
// runs as a child.
func TestAgentWorkflowTool(t *testing.T) {
	child := `{"name":"shout","description":"Shout a text","inputs":{"text":{"type":"string","required":true}},"steps":[
	  {"id":"up","tool":"template","inputs":{"text":"{{ upper(inputs.text) }}"}}],"output":"{{ up.output.text }}"}`
	def := `{"name":"p","steps":[{"id":"ag","tool":"agent","inputs":{"prompt":"shout hi","tools":["workflow:shout"]}}],"output":"{{ ag.output.text }}"}`
	h := newHarness(t)
	var offered []any
	m := &scriptedModel{answers: []func(map[string]any) map[string]any{
		func(in map[string]any) map[string]any {
			offered, _ = in["tools"].([]any)
			return callTools([3]string{"x", "workflow_shout", `{"text":"hi"}`})(in)
		},
		func(in map[string]any) map[string]any {
			msgs := in["messages"].([]any)
			return say("the child said " + msgs[len(msgs)-1].(map[string]any)["content"].(string))(in)
		},
	}}
	withModel(h, m)
	req := request(t, def, nil)
	req.WorkflowFiles = map[string]string{"shout": child}
	h.env.ExecuteWorkflow(runwire.WorkflowType, req)
	require.NoError(t, h.env.GetWorkflowError())
	var res weftv1.RunResult
	require.NoError(t, h.env.GetWorkflowResult(&res))
	require.Equal(t, `"the child said \"HI\""`, outputJSON(t, res.Output))
	require.Len(t, offered, 1)
	fn := offered[0].(map[string]any)
	require.Equal(t, "workflow_shout", fn["name"])
	require.Equal(t, "Shout a text", fn["description"])
	require.Equal(t, []any{"text"}, fn["parameters"].(map[string]any)["required"])
}
