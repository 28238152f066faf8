package workflows_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows"
)

// inputsSeen wraps a script step and records the llm activity's input of each call.
type inputsSeen struct {
	mu  sync.Mutex
	ins []map[string]any
}

func (s *inputsSeen) wrap(f func(map[string]any) map[string]any) func(map[string]any) map[string]any {
	return func(in map[string]any) map[string]any {
		s.mu.Lock()
		s.ins = append(s.ins, in)
		s.mu.Unlock()
		return f(in)
	}
}

// TestAgentToolChoice: toolChoice goes with the model calls, a tool as the model names it;
// required and a tool go until the agent has called tools, then auto (resetToolChoice, as the
// OpenAI Agents SDK's reset_tool_choice), or with every call with resetToolChoice false.
func TestAgentToolChoice(t *testing.T) {
	for _, tc := range []struct {
		choice, extra string
		want          [3]string
	}{
		{"required", "", [3]string{"required", "auto", "auto"}},
		{"search", "", [3]string{"search", "auto", "auto"}},
		{"none", "", [3]string{"none", "none", "none"}},
		{"auto", "", [3]string{"auto", "auto", "auto"}},
		{"required", `,"resetToolChoice":false`, [3]string{"required", "required", "required"}},
		{"search", `,"resetToolChoice":false`, [3]string{"search", "search", "search"}},
	} {
		t.Run(tc.choice+tc.extra, func(t *testing.T) {
			h := newHarness(t)
			seen := &inputsSeen{}
			withModel(h, &scriptedModel{answers: []func(map[string]any) map[string]any{
				seen.wrap(callTools([3]string{"c1", "search", `{"query":"x"}`})),
				seen.wrap(callTools([3]string{"c2", "search", `{"query":"y"}`})),
				seen.wrap(say("done")),
			}})
			def := strings.Replace(agentFlow, `"maxIterations":4`, `"maxIterations":4,"toolChoice":"`+tc.choice+`"`+tc.extra, 1)
			_, err := h.run(t, def, nil)
			require.NoError(t, err)
			require.Len(t, seen.ins, 3)
			for i, in := range seen.ins {
				require.Equal(t, tc.want[i], in["toolChoice"], "model call %d", i+1)
			}
		})
	}
	t.Run("a turn without calls keeps required", func(t *testing.T) {
		h := newHarness(t)
		seen := &inputsSeen{}
		withModel(h, &scriptedModel{answers: []func(map[string]any) map[string]any{
			seen.wrap(say("")), // answers without a call: the agent ends, having called nothing
		}})
		def := strings.Replace(agentFlow, `"maxIterations":4`, `"maxIterations":4,"toolChoice":"required"`, 1)
		_, err := h.run(t, def, nil)
		require.NoError(t, err)
		require.Equal(t, "required", seen.ins[0]["toolChoice"])
	})
	t.Run("runs recorded before the reset keep toolChoice", func(t *testing.T) {
		h := newHarness(t)
		h.env.OnGetVersion(workflows.ChangeAgentResetToolChoice, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
		seen := &inputsSeen{}
		withModel(h, &scriptedModel{answers: []func(map[string]any) map[string]any{
			seen.wrap(callTools([3]string{"c1", "search", `{"query":"x"}`})),
			seen.wrap(say("done")),
		}})
		def := strings.Replace(agentFlow, `"maxIterations":4`, `"maxIterations":4,"toolChoice":"required"`, 1)
		_, err := h.run(t, def, nil)
		require.NoError(t, err)
		require.Equal(t, "required", seen.ins[1]["toolChoice"], "an old history replays with the inputs it recorded")
	})
	t.Run("no choice sends none", func(t *testing.T) {
		h := newHarness(t)
		seen := &inputsSeen{}
		withModel(h, &scriptedModel{answers: []func(map[string]any) map[string]any{seen.wrap(say("done"))}})
		_, err := h.run(t, agentFlow, nil)
		require.NoError(t, err)
		require.NotContains(t, seen.ins[0], "toolChoice")
	})
}

// TestAgentStopWhen: a completed call to the stopWhen tool ends the agent with its result as the
// answer; a failed one does not; text that matches ends it before the calls it asked for run.
func TestAgentStopWhen(t *testing.T) {
	t.Run("tool", func(t *testing.T) {
		h := newHarness(t)
		m := &scriptedModel{answers: []func(map[string]any) map[string]any{
			callTools([3]string{"c1", "search", `{"limit":"ten"}`}), // fails the schema: not a stop
			callTools([3]string{"c2", "search", `{"query":"rate limits"}`}),
		}}
		withModel(h, m)
		def := strings.Replace(agentFlow, `"maxIterations":4`, `"maxIterations":4,"stopWhen":{"tool":"search"}`, 1)
		res, err := h.run(t, def, nil)
		require.NoError(t, err)
		out := agentOutput(t, res)
		require.Equal(t, workflows.StopToolCalled, out["stopReason"])
		require.Equal(t, "search", out["stoppedBy"])
		require.EqualValues(t, 2, out["iterations"])
		require.Contains(t, out["text"], "about rate limits")
		require.NotNil(t, out["json"], "the tool's result, parsed")
		require.Equal(t, 2, m.calls(), "no model call after the stop")
	})
	t.Run("textMatches", func(t *testing.T) {
		h := newHarness(t)
		m := &scriptedModel{answers: []func(map[string]any) map[string]any{
			func(map[string]any) map[string]any {
				return map[string]any{"text": "FINAL: 42", "toolCalls": []any{map[string]any{"id": "c1", "name": "search", "arguments": `{"query":"x"}`}}}
			},
		}}
		withModel(h, m)
		def := strings.Replace(agentFlow, `"maxIterations":4`, `"maxIterations":4,"stopWhen":[{"tool":"ingest"},{"textMatches":"^FINAL:"}]`, 1)
		res, err := h.run(t, def, nil)
		require.NoError(t, err)
		out := agentOutput(t, res)
		require.Equal(t, workflows.StopTextMatched, out["stopReason"])
		require.Equal(t, "^FINAL:", out["stoppedBy"])
		require.Equal(t, "FINAL: 42", out["text"])
		require.Equal(t, 0, h.tools.count("search"), "the calls of the matching answer do not run")
		requireAnsweredTranscript(t, out["messages"].([]any))
		calls := out["toolCalls"].([]any)
		require.Len(t, calls, 1, "the skipped call is listed")
		call := calls[0].(map[string]any)
		require.Equal(t, "skipped", call["status"])
		require.Equal(t, "c1", call["id"])
		require.Equal(t, "search", call["tool"])
		require.Contains(t, call["error"], "stopWhen textMatches")
		v, err := h.env.QueryWorkflow(runwire.QueryState)
		require.NoError(t, err)
		var state weftv1.ExecutionState
		require.NoError(t, v.Get(&state))
		require.Len(t, state.Steps[0].ToolCalls, 1, "weft status lists it too")
		require.Equal(t, "skipped", state.Steps[0].ToolCalls[0].Status)
		require.Equal(t, "c1", state.Steps[0].ToolCalls[0].Id)
	})
	t.Run("runs recorded before skipped calls leave them unanswered", func(t *testing.T) {
		h := newHarness(t)
		h.env.OnGetVersion(workflows.ChangeAgentSkippedCalls, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
		withModel(h, &scriptedModel{answers: []func(map[string]any) map[string]any{
			func(map[string]any) map[string]any {
				return map[string]any{"text": "FINAL: 42", "toolCalls": []any{map[string]any{"id": "c1", "name": "search", "arguments": `{"query":"x"}`}}}
			},
		}})
		def := strings.Replace(agentFlow, `"maxIterations":4`, `"maxIterations":4,"stopWhen":{"textMatches":"^FINAL:"}`, 1)
		res, err := h.run(t, def, nil)
		require.NoError(t, err)
		out := agentOutput(t, res)
		require.Empty(t, out["toolCalls"])
		msgs := out["messages"].([]any)
		require.Equal(t, "assistant", msgs[len(msgs)-1].(map[string]any)["role"])
	})
}

// requireAnsweredTranscript checks a transcript as a provider does before it takes it: every
// tool call of an assistant message has a tool message with its id after it (OpenAI answers 400
// otherwise).
func requireAnsweredTranscript(t *testing.T, msgs []any) {
	t.Helper()
	for i, m := range msgs {
		msg, _ := m.(map[string]any)
		if msg["role"] != "assistant" {
			continue
		}
		calls, _ := msg["toolCalls"].([]any)
		for _, c := range calls {
			id := c.(map[string]any)["id"]
			answered := false
			for _, later := range msgs[i+1:] {
				l, _ := later.(map[string]any)
				answered = answered || (l["role"] == "tool" && l["toolCallId"] == id)
			}
			require.True(t, answered, "message %d: tool call %v has no tool message after it in %v", i, id, msgs)
		}
	}
}

// TestAgentInstructions: instructions are rendered again before each model call, with the
// iteration, the last tool result and the usage so far in scope, and the workflow's inputs.
func TestAgentInstructions(t *testing.T) {
	h := newHarness(t)
	m := &scriptedModel{answers: []func(map[string]any) map[string]any{
		callTools([3]string{"c1", "search", `{"query":"rate limits"}`}),
		say("done"),
	}}
	withModel(h, m)
	def := strings.Replace(agentFlow, `"maxIterations":4`, `"maxIterations":4,"instructions":"Topic {{ inputs.q }}. Turn {{ agent.iteration }}; {{ agent.toolCalls }} calls; {{ agent.usage.totalTokens }} tokens; last: {{ agent.lastToolResult.results[0].source ?? 'none' }}"`, 1)
	res, err := h.run(t, def, nil)
	require.NoError(t, err)
	require.Len(t, m.seen, 2)
	first := m.seen[0][0].(map[string]any)
	require.Equal(t, "system", first["role"])
	require.Equal(t, "Topic rate limits. Turn 1; 0 calls; 0 tokens; last: none", first["content"])
	second := m.seen[1][0].(map[string]any)
	require.Equal(t, "Topic rate limits. Turn 2; 1 calls; 110 tokens; last: docs/a.md", second["content"])
	require.Len(t, m.seen[1], 4, "instructions, prompt, the call, its result: one system message")
	// The conversation the step returns does not hold the instructions.
	for _, msg := range agentOutput(t, res)["messages"].([]any) {
		require.NotEqual(t, "system", msg.(map[string]any)["role"])
	}
}

func judgeSays(pass bool, reason string) func(map[string]any) map[string]any {
	return func(map[string]any) map[string]any {
		return map[string]any{"text": "", "json": map[string]any{"pass": pass, "reason": reason}, "toolCalls": []any{}}
	}
}

// TestAgentGuardrails: input checks run before the first model call, output checks before the
// step returns; a check that trips fails the step with an error naming it, or returns with
// stopReason guardrail (onTrip: return); a judge is one more model call with the rubric.
func TestAgentGuardrails(t *testing.T) {
	with := func(g string) string {
		return strings.Replace(agentFlow, `"maxIterations":4`, `"maxIterations":4,"guardrails":`+g, 1)
	}
	t.Run("input tripwire stops before the model", func(t *testing.T) {
		h := newHarness(t)
		m := &scriptedModel{}
		withModel(h, m)
		_, err := h.run(t, with(`{"input":[{"name":"no-limits","forbid":"(?i)rate limit"}]}`), nil)
		require.ErrorContains(t, err, `input guardrail "no-limits" tripped: the text matches "(?i)rate limit"`)
		require.Equal(t, 0, m.calls())
	})
	t.Run("input tripwire returns", func(t *testing.T) {
		h := newHarness(t)
		m := &scriptedModel{}
		withModel(h, m)
		res, err := h.run(t, with(`{"input":[{"name":"needs-code","require":"ERR-\\d+"}],"onTrip":"return"}`), nil)
		require.NoError(t, err)
		out := agentOutput(t, res)
		require.Equal(t, workflows.StopGuardrail, out["stopReason"])
		require.Equal(t, map[string]any{"name": "needs-code", "stage": "input", "reason": `the text does not match "ERR-\\d+" (require)`}, out["guardrail"])
		require.Equal(t, 0, m.calls())
	})
	t.Run("output schema returns", func(t *testing.T) {
		h := newHarness(t)
		withModel(h, &scriptedModel{answers: []func(map[string]any) map[string]any{say(`{"answer": 7}`)}})
		res, err := h.run(t, with(`{"output":[{"name":"shape","schema":{"type":"object","required":["answer"],"properties":{"answer":{"type":"string"}}}}],"onTrip":"return"}`), nil)
		require.NoError(t, err)
		out := agentOutput(t, res)
		require.Equal(t, workflows.StopGuardrail, out["stopReason"])
		require.Equal(t, "", out["text"], "a tripped answer is not handed on")
		g := out["guardrail"].(map[string]any)
		require.Equal(t, "shape", g["name"])
		require.Equal(t, "output", g["stage"])
		require.Contains(t, g["reason"], "does not fit the schema")
	})
	t.Run("output judge fails the step", func(t *testing.T) {
		h := newHarness(t)
		seen := &inputsSeen{}
		m := &scriptedModel{answers: []func(map[string]any) map[string]any{say("Figure it out yourself."), seen.wrap(judgeSays(false, "rude"))}}
		withModel(h, m)
		_, err := h.run(t, with(`{"output":[{"name":"polite","judge":"The answer is polite."}]}`), nil)
		require.ErrorContains(t, err, `output guardrail "polite" tripped: the judge says it fails the rubric: rude`)
		require.Equal(t, 2, m.calls())
		judged := seen.ins[0]["prompt"].(string)
		require.NotNil(t, seen.ins[0]["responseFormat"], "the judge answers JSON")
		require.Contains(t, judged, "The answer is polite.")
		require.Contains(t, judged, "Figure it out yourself.")
	})
	t.Run("checks that pass", func(t *testing.T) {
		h := newHarness(t)
		m := &scriptedModel{answers: []func(map[string]any) map[string]any{judgeSays(true, "on topic"), say("Use Retry-After."), judgeSays(true, "polite")}}
		withModel(h, m)
		res, err := h.run(t, with(`{"input":[{"name":"topic","judge":"About our API."}],"output":[{"name":"short","forbid":"^.{200,}$"},{"name":"polite","judge":"Polite.","model":"fast"}]}`), nil)
		require.NoError(t, err)
		out := agentOutput(t, res)
		require.Equal(t, "Use Retry-After.", out["text"])
		require.Equal(t, workflows.StopFinalAnswer, out["stopReason"])
		require.EqualValues(t, 330, res.Usage.TotalTokens, "the judges' calls count")
		require.EqualValues(t, res.Usage.TotalTokens, out["usage"].(map[string]any)["totalTokens"],
			"the step's output.usage counts the output judge as its state does")
	})
}

// TestAgentHandoff: the model calls transfer_to_billing; the billing agent continues the same
// conversation in the same step with its own system prompt, model and tools, and answers.
func TestAgentHandoff(t *testing.T) {
	h := newHarness(t)
	seen := &inputsSeen{}
	m := &scriptedModel{answers: []func(map[string]any) map[string]any{
		seen.wrap(callTools([3]string{"t1", "transfer_to_billing", `{}`})),
		seen.wrap(callTools([3]string{"c2", "ingest", `{"text":"refund","source":"r.md"}`})),
		seen.wrap(say("Refunded.")),
	}}
	withModel(h, m)
	def := `{"name":"a","defaults":{"collection":"docs"},"steps":[
  {"id":"triage","tool":"agent","inputs":{"system":"You route questions.","prompt":"I want a refund","tools":["search"],"maxIterations":5,
    "handoffs":[{"name":"billing","description":"Questions about money.","agent":{"system":"You handle billing.","model":"smart","tools":["ingest"]}}]}}
],"output":"{{ triage.output }}"}`
	res, err := h.run(t, def, nil)
	require.NoError(t, err)
	out := agentOutput(t, res)
	require.Equal(t, "Refunded.", out["text"])
	require.Equal(t, "billing", out["agent"])
	require.Equal(t, []any{map[string]any{"iteration": float64(1), "from": "triage", "to": "billing"}}, out["handoffs"])
	require.EqualValues(t, 3, out["iterations"], "one step, one loop")
	// The first call offered the transfer; the ones after it had billing's tools and model.
	names := func(in map[string]any) []string {
		var out []string
		for _, d := range in["tools"].([]any) {
			out = append(out, d.(map[string]any)["name"].(string))
		}
		return out
	}
	require.Equal(t, []string{"search", "transfer_to_billing"}, names(seen.ins[0]))
	require.Equal(t, []string{"ingest"}, names(seen.ins[1]))
	require.Equal(t, "smart", seen.ins[1]["model"])
	second := m.seen[1]
	require.Equal(t, map[string]any{"role": "system", "content": "You handle billing."}, second[0])
	require.Equal(t, "I want a refund", second[1].(map[string]any)["content"], "the conversation goes on")
	require.Equal(t, "tool", second[len(second)-1].(map[string]any)["role"])
	require.Equal(t, 1, h.tools.count("ingest"))
	calls := out["toolCalls"].([]any)
	require.Equal(t, "handoff:billing", calls[0].(map[string]any)["tool"])
}

// TestAgentResume: an agent given resume (what weft fork writes) starts after the recorded
// iterations: the recorded model answers and tool results are not asked again.
func TestAgentResume(t *testing.T) {
	h := newHarness(t)
	m := &scriptedModel{answers: []func(map[string]any) map[string]any{say("Retry after the header says.")}}
	withModel(h, m)
	resume := `{"iteration":1,"from":"r1","messages":[{"role":"user","content":"Answer: rate limits"},
	  {"role":"assistant","content":"","toolCalls":[{"id":"c1","name":"search","arguments":"{\"query\":\"x\"}"}]},
	  {"role":"tool","toolCallId":"c1","name":"search","content":"{\"results\":[]}"},
	  {"role":"user","content":"Look at {{ headers }} instead."}],
	  "toolCalls":[{"iteration":1,"id":"c1","tool":"search","status":"completed","result":"{\"results\":[]}"}]}`
	def := strings.Replace(agentFlow, `"maxIterations":4`, `"maxIterations":4,"resume":`+resume, 1)
	res, err := h.run(t, def, nil)
	require.NoError(t, err)
	out := agentOutput(t, res)
	require.Equal(t, "Retry after the header says.", out["text"])
	require.EqualValues(t, 2, out["iterations"])
	require.Len(t, out["toolCalls"], 1, "the recorded call is kept")
	require.Equal(t, 1, m.calls(), "one model call: iteration 2")
	require.Equal(t, 0, h.tools.count("search"))
	sent := m.seen[0]
	require.Len(t, sent, 4)
	require.Equal(t, "Look at {{ headers }} instead.", sent[3].(map[string]any)["content"], "a resumed conversation is not a template")
}

// TestHandoffKeepsTheStepsApprovals: an agent handed to adds its own approve list to the step's;
// a model cannot transfer to another agent to call, unasked, a tool the step said waits for a
// person.
func TestHandoffKeepsTheStepsApprovals(t *testing.T) {
	h := newHarness(t)
	m := &scriptedModel{answers: []func(map[string]any) map[string]any{
		callTools([3]string{"t1", "transfer_to_billing", `{}`}),
		callTools([3]string{"c2", "ingest", `{"text":"refund","source":"r.md"}`}),
		say("Done."),
	}}
	withModel(h, m)
	h.env.RegisterDelayedCallback(func() {
		h.env.UpdateWorkflow(runwire.UpdateReview, "r", &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(err error) { t.Errorf("the gate for the call was not there: %v", err) }, OnComplete: func(any, error) {},
		}, decision(t, `{"id":"triage/c2","decision":"reject","reviewer":"ana"}`))
	}, time.Hour)
	def := `{"name":"a","defaults":{"collection":"docs"},"steps":[
  {"id":"triage","tool":"agent","inputs":{"prompt":"I want a refund","tools":["search"],"approve":["*"],"maxIterations":5,
    "handoffs":[{"name":"billing","description":"Money.","agent":{"system":"You handle billing.","tools":["ingest"]}}]}}
],"output":"{{ triage.output }}"}`
	res, err := h.run(t, def, nil)
	require.NoError(t, err)
	calls := agentOutput(t, res)["toolCalls"].([]any)
	require.Len(t, calls, 2)
	ingest := calls[1].(map[string]any)
	require.Equal(t, "ingest", ingest["tool"])
	require.Equal(t, "reject", ingest["decision"], "the call waited for a person")
	require.Equal(t, 0, h.tools.count("ingest"))
}

// toolNames are the names of the tools a model call offered.
func toolNames(in map[string]any) []string {
	var out []string
	list, _ := in["tools"].([]any)
	for _, d := range list {
		out = append(out, d.(map[string]any)["name"].(string))
	}
	return out
}

// TestHandoffChain: an agent handed to hands on to the agents its own handoffs name, and back to
// the step's agent by the step's id (triage → billing → refunds → triage); each agent is offered
// its own tools and transfers, with its own model or else the step's, and its system prompt.
func TestHandoffChain(t *testing.T) {
	h := newHarness(t)
	seen := &inputsSeen{}
	m := &scriptedModel{answers: []func(map[string]any) map[string]any{
		seen.wrap(callTools([3]string{"t1", "transfer_to_billing", `{}`})),
		seen.wrap(callTools([3]string{"t2", "transfer_to_refunds", `{}`})),
		seen.wrap(callTools([3]string{"t3", "transfer_to_triage", `{}`})),
		seen.wrap(say("Sorted.")),
	}}
	withModel(h, m)
	def := `{"name":"a","defaults":{"collection":"docs"},"steps":[
  {"id":"triage","tool":"agent","inputs":{"system":"You route questions.","prompt":"I want a refund","tools":["search"],"maxIterations":6,
    "handoffs":[
      {"name":"billing","description":"Money.","agent":{"system":"You handle billing.","model":"smart","tools":["ingest"],"handoffs":["refunds"]}},
      {"name":"refunds","description":"Refunds.","agent":{"system":"You handle refunds.","handoffs":["triage","billing"]}}]}}
],"output":"{{ triage.output }}"}`
	res, err := h.run(t, def, nil)
	require.NoError(t, err)
	out := agentOutput(t, res)
	require.Equal(t, "Sorted.", out["text"])
	require.Equal(t, "triage", out["agent"], "the step's agent answered, handed back to")
	require.Equal(t, []any{
		map[string]any{"iteration": float64(1), "from": "triage", "to": "billing"},
		map[string]any{"iteration": float64(2), "from": "billing", "to": "refunds"},
		map[string]any{"iteration": float64(3), "from": "refunds", "to": "triage"},
	}, out["handoffs"])
	require.Len(t, seen.ins, 4)
	require.Equal(t, []string{"search", "transfer_to_billing", "transfer_to_refunds"}, toolNames(seen.ins[0]))
	require.Equal(t, []string{"ingest", "transfer_to_refunds"}, toolNames(seen.ins[1]))
	require.Equal(t, []string{"transfer_to_triage", "transfer_to_billing"}, toolNames(seen.ins[2]))
	require.Equal(t, []string{"search", "transfer_to_billing", "transfer_to_refunds"}, toolNames(seen.ins[3]))
	require.Equal(t, "smart", seen.ins[1]["model"])
	require.NotContains(t, seen.ins[2], "model", "refunds sets no model: the step's (none), not billing's")
	require.Equal(t, "You route questions.", seen.ins[0]["system"])
	for i, system := range []string{"You handle billing.", "You handle refunds.", "You route questions."} {
		sent := m.seen[i+1] // the first call went with system and prompt, the others with messages
		require.Equal(t, map[string]any{"role": "system", "content": system}, sent[0], "model call %d", i+2)
		require.Equal(t, "I want a refund", sent[1].(map[string]any)["content"], "the conversation goes on")
	}
}

// TestHandoffPingPong: two agents that hand the conversation back and forth stop at maxHandoffs:
// the step fails saying so (as the OpenAI Agents SDK's MaxTurnsExceeded and LangGraph's
// recursion limit do), or with onLimit return returns stopReason max_handoffs.
func TestHandoffPingPong(t *testing.T) {
	transfer := func(in map[string]any) map[string]any {
		for _, n := range toolNames(in) {
			if strings.HasPrefix(n, "transfer_to_") {
				return callTools([3]string{"t", n, `{}`})(in)
			}
		}
		return say("no transfer offered")(in)
	}
	def := func(extra string) string {
		return `{"name":"a","steps":[
  {"id":"ping","tool":"agent","inputs":{"prompt":"Who answers?","maxIterations":50,"maxHandoffs":3` + extra + `,
    "handoffs":[{"name":"pong","agent":{"handoffs":["ping"]}}]}}
],"output":"{{ ping.output }}"}`
	}
	t.Run("fails", func(t *testing.T) {
		h := newHarness(t)
		m := &scriptedModel{answers: []func(map[string]any) map[string]any{transfer, transfer, transfer, transfer, transfer}}
		withModel(h, m)
		_, err := h.run(t, def(""), nil)
		require.ErrorContains(t, err, "more than maxHandoffs (3) times (ping → pong → ping → pong → ping)")
		require.Equal(t, 4, m.calls(), "three handoffs made, the fourth refused")
	})
	t.Run("returns", func(t *testing.T) {
		h := newHarness(t)
		m := &scriptedModel{answers: []func(map[string]any) map[string]any{transfer, transfer, transfer, transfer, transfer}}
		withModel(h, m)
		res, err := h.run(t, def(`,"onLimit":"return"`), nil)
		require.NoError(t, err)
		out := agentOutput(t, res)
		require.Equal(t, workflows.StopMaxHandoffs, out["stopReason"])
		require.Equal(t, "pong", out["agent"], "the agent that asked for the refused handoff")
		require.Len(t, out["handoffs"], 3)
		require.EqualValues(t, 4, out["iterations"])
	})
}

// TestAgentResumeChecksTheEditedMessage: a fork's edited message goes through the step's input
// guardrails as a run's prompt does; a fork that adds no message is not checked again.
func TestAgentResumeChecksTheEditedMessage(t *testing.T) {
	resume := func(last string, edited bool) string {
		flag := ""
		if edited {
			flag = `"edited":true,`
		}
		return `{"iteration":1,"from":"r1",` + flag + `"messages":[{"role":"user","content":"Answer: rate limits"},
	  {"role":"assistant","content":"","toolCalls":[{"id":"c1","name":"search","arguments":"{\"query\":\"x\"}"}]},
	  {"role":"tool","toolCallId":"c1","name":"search","content":"{\"results\":[]}"}` + last + `],
	  "toolCalls":[{"iteration":1,"id":"c1","tool":"search","status":"completed","result":"{\"results\":[]}"}]}`
	}
	guard := `"guardrails":{"input":[{"name":"no-secrets","forbid":"(?i)password"}]}`
	for _, tc := range []struct {
		name, last, wantErr string
		edited              bool
		calls               int
	}{
		{"an edited message that trips", `,{"role":"user","content":"my password is hunter2"}`, "no-secrets", true, 0},
		{"an edited message that passes", `,{"role":"user","content":"look again"}`, "", true, 1},
		{"no edited message", ``, "", false, 1},
		// the source run checked its own prompt (not the context added to it): not again
		{"a recorded user message", `,{"role":"user","content":"the password policy, in context"}`, "", false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			m := &scriptedModel{answers: []func(map[string]any) map[string]any{say("Done.")}}
			withModel(h, m)
			def := strings.Replace(agentFlow, `"maxIterations":4`, `"maxIterations":4,`+guard+`,"resume":`+resume(tc.last, tc.edited), 1)
			_, err := h.run(t, def, nil)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, tc.calls, m.calls())
		})
	}
}
