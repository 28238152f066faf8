package console

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/events"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
)

// TestAGUIEvents: a run with an agent step that streams text, retries it (a new message, the
// abandoned one named in weft.text_restarted), calls
// a tool, asks a review and completes, as AG-UI events in order; the state is one STATE_SNAPSHOT,
// then a STATE_DELTA (JSON Patch) for each change, which applied to it give the run's last state; a
// failed run ends with RUN_ERROR.
func TestAGUIEvents(t *testing.T) {
	args, _ := structpb.NewValue(map[string]any{"query": "retries"})
	result, _ := structpb.NewValue(map[string]any{"count": 2})
	out, _ := structpb.NewValue("done")
	call := &weftv1.ToolCall{Id: "c1", Tool: "search", Arguments: args}
	done := &weftv1.ToolCall{Id: "c1", Tool: "search", Arguments: args, Result: result}
	evs := []events.Event{
		{Type: "run_started", Seq: 1},
		{Type: "step_started", Seq: 2, Step: "helper"},
		{Type: "llm_started", Seq: 3, Step: "helper", Activity: "helper#1"},
		{Type: "llm_delta", Step: "helper", Activity: "helper#1", Attempt: 1, Text: "Let me"},
		{Type: "llm_delta", Step: "helper", Activity: "helper#1", Attempt: 1, Text: " look", Offset: 6},
		{Type: "llm_delta", Step: "helper", Activity: "helper#1", Attempt: 2, Text: "Searching"},
		{Type: "llm_delta", Step: "helper", Activity: "helper#1", Attempt: 2, Text: ""},
		{Type: "llm_finished", Seq: 4, Step: "helper", Activity: "helper#1", Text: "Searching"},
		{Type: "tool_call_started", Seq: 5, Step: "helper", Call: call},
		{Type: "tool_call_finished", Seq: 6, Step: "helper", Call: done},
		{Type: "review_requested", Seq: 7, Step: "ok", Review: &weftv1.ReviewRequest{Id: "ok", Title: "Go on?"}},
		{Type: "review_decided", Seq: 8, Step: "ok", Decision: "approve", Reviewer: "ana", Review: &weftv1.ReviewRequest{Id: "ok", Title: "Go on?"}},
		{Type: "step_completed", Seq: 9, Step: "helper", StepState: &weftv1.StepState{Id: "helper", Status: "completed"}},
		{Type: "step_skipped", Seq: 10, Step: "never", StepState: &weftv1.StepState{Id: "never", Status: "skipped"}},
		{Type: "run_completed", Seq: 11, Result: &weftv1.RunResult{Output: out}},
	}
	tr := newAGUITranslator("r1")
	var got []string
	var all []aguiEvent
	for _, e := range evs {
		for _, a := range tr.translate(e) {
			s := a["type"].(string)
			for _, k := range []string{"stepName", "messageId", "toolCallId", "name", "delta"} {
				if v, ok := a[k].(string); ok {
					s += " " + v
				}
			}
			got = append(got, s)
			all = append(all, a)
		}
	}
	require.Equal(t, []string{
		"RUN_STARTED", "STATE_SNAPSHOT",
		"STEP_STARTED helper", "STATE_DELTA",
		"TEXT_MESSAGE_START helper#1", "TEXT_MESSAGE_CONTENT helper#1 Let me", "TEXT_MESSAGE_CONTENT helper#1  look",
		"TEXT_MESSAGE_END helper#1", "CUSTOM weft.text_restarted",
		"TEXT_MESSAGE_START helper#1/attempt-2", "TEXT_MESSAGE_CONTENT helper#1/attempt-2 Searching", "TEXT_MESSAGE_END helper#1/attempt-2",
		"TOOL_CALL_START c1", `TOOL_CALL_ARGS c1 {"query":"retries"}`, "TOOL_CALL_END c1", "TOOL_CALL_RESULT result-c1 c1",
		"CUSTOM weft.review_requested", "CUSTOM weft.review_decided",
		"STEP_FINISHED helper", "STATE_DELTA", "STATE_DELTA",
		"STATE_DELTA", "RUN_FINISHED",
	}, got)
	last := all[len(all)-1]
	require.Equal(t, aguiEvent{"type": "RUN_FINISHED", "threadId": "r1", "runId": "r1", "result": "done"}, last)
	require.Equal(t, map[string]any{"run": "r1", "status": "running", "steps": map[string]string{}}, all[1]["snapshot"])
	require.Equal(t, []map[string]any{{"op": "add", "path": "/steps/helper", "value": "running"}}, all[3]["delta"])
	require.Equal(t, []map[string]any{{"op": "replace", "path": "/status", "value": "completed"}}, all[len(all)-2]["delta"])
	state := all[1]["snapshot"].(map[string]any)
	for _, a := range all[2:] {
		if a["type"] == "STATE_DELTA" {
			state = applyPatch(t, state, a["delta"].([]map[string]any))
		}
	}
	require.Equal(t, map[string]any{"run": "r1", "status": "completed", "steps": map[string]any{"helper": "completed", "never": "skipped"}}, state)
	require.Equal(t, `{"count":2}`, all[15]["content"])
	require.Equal(t, "tool", all[15]["role"])

	tr = newAGUITranslator("r2")
	tr.translate(events.Event{Type: "run_started", Seq: 1})
	tr.translate(events.Event{Type: "llm_delta", Activity: "a#1", Attempt: 1, Text: "Hal"})
	fail := tr.translate(events.Event{Type: "run_failed", Seq: 3, Error: `step "a": boom`})
	require.Equal(t, []aguiEvent{{"type": "TEXT_MESSAGE_END", "messageId": "a#1"},
		{"type": "STATE_DELTA", "delta": []map[string]any{{"op": "replace", "path": "/status", "value": "failed"}}},
		{"type": "RUN_ERROR", "message": `step "a": boom`, "code": "run_failed"}}, fail)
	require.True(t, tr.ended)

	// A cancelled run ends cancelled, as every surface says (client.EndStatus), not failed.
	tr = newAGUITranslator("r3")
	tr.translate(events.Event{Type: "run_started", Seq: 1})
	stopped := tr.translate(events.Event{Type: "run_failed", Seq: 2, Error: "cancelled", Status: weftclient.RunCancelled})
	require.Equal(t, []aguiEvent{
		{"type": "STATE_DELTA", "delta": []map[string]any{{"op": "replace", "path": "/status", "value": "cancelled"}}},
		{"type": "RUN_ERROR", "message": "cancelled", "code": "run_cancelled"}}, stopped)
}

// TestAGUIStreamsOpenAsAGUIClientsRequire: @ag-ui/client rejects a stream whose first event is not
// RUN_STARTED or RUN_ERROR, a second STEP_STARTED for an active step and STEP_FINISHED for a step
// it did not see start; a stream resumed with Last-Event-ID and one for a run that does not exist
// open the way it accepts.
func TestAGUIStreamsOpenAsAGUIClientsRequire(t *testing.T) {
	for _, tc := range []struct {
		name string
		evs  []events.Event
		want []string
	}{
		{"a resume after step a started", []events.Event{
			{Type: "step_completed", Seq: 5, Step: "a"},
			{Type: "step_started", Seq: 6, Step: "b"},
			{Type: "step_completed", Seq: 7, Step: "b"},
			{Type: "run_completed", Seq: 8},
		}, []string{"RUN_STARTED", "STATE_SNAPSHOT", "STEP_STARTED b", "STATE_DELTA", "STEP_FINISHED b", "STATE_DELTA", "STATE_DELTA", "RUN_FINISHED"}},
		{"a resume in the middle of a model's text", []events.Event{
			{Type: "llm_delta", Step: "a", Activity: "a#1", Attempt: 1, Text: "lo", Offset: 3},
			{Type: "llm_finished", Seq: 4, Step: "a", Activity: "a#1"},
		}, []string{"RUN_STARTED", "TEXT_MESSAGE_START a#1", "TEXT_MESSAGE_CONTENT a#1 lo", "TEXT_MESSAGE_END a#1"}},
		{"a run that does not exist", []events.Event{
			{Type: "run_failed", Error: `no run "x"`},
		}, []string{"RUN_ERROR"}},
		{"a step started twice, then again after it finished", []events.Event{
			{Type: "run_started", Seq: 1},
			{Type: "step_started", Seq: 2, Step: "a"},
			{Type: "step_started", Seq: 3, Step: "a"},
			{Type: "step_completed", Seq: 4, Step: "a"},
			{Type: "step_started", Seq: 5, Step: "a"},
			{Type: "step_failed", Seq: 6, Step: "a"},
			{Type: "run_failed", Seq: 7, Error: "boom"},
		}, []string{"RUN_STARTED", "STATE_SNAPSHOT", "STEP_STARTED a", "STATE_DELTA", "STEP_FINISHED a", "STATE_DELTA",
			"STEP_STARTED a", "STATE_DELTA", "STEP_FINISHED a", "STATE_DELTA", "STATE_DELTA", "RUN_ERROR"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newAGUITranslator("r1")
			var got []string
			for _, e := range tc.evs {
				for _, a := range tr.translate(e) {
					s := a["type"].(string)
					for _, k := range []string{"stepName", "messageId", "delta"} {
						if v, ok := a[k].(string); ok {
							s += " " + v
						}
					}
					got = append(got, s)
				}
			}
			require.Equal(t, tc.want, got)
		})
	}
}

// applyPatch applies the JSON Patch operations the translator makes (add, replace and remove of
// members, RFC 6902) to a copy of state, through JSON as a client would; an operation on a path
// that is not there fails the test, as it fails an AG-UI client.
func applyPatch(t *testing.T, state map[string]any, ops []map[string]any) map[string]any {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(mustJSON(state)), &doc))
	for _, op := range ops {
		path := strings.Split(strings.TrimPrefix(op["path"].(string), "/"), "/")
		parent := doc
		for _, k := range path[:len(path)-1] {
			next, ok := parent[unescapeToken(k)].(map[string]any)
			require.True(t, ok, "%v: no object at %q", op, k)
			parent = next
		}
		key := unescapeToken(path[len(path)-1])
		_, exists := parent[key]
		switch op["op"] {
		case "add":
			parent[key] = op["value"]
		case "replace":
			require.True(t, exists, "%v: replaces nothing", op)
			parent[key] = op["value"]
		case "remove":
			require.True(t, exists, "%v: removes nothing", op)
			delete(parent, key)
		default:
			t.Fatalf("unexpected op %v", op)
		}
	}
	return doc
}

func unescapeToken(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~1", "/"), "~0", "~")
}

// TestAGUIAgentEventsAndRestartedText: a handoff, a guardrail trip and a lost MCP session are
// CUSTOM events (weft.handoff, weft.guardrail_tripped, weft.mcp_session_lost: AG-UI has no
// standard event for them) with what the run recorded; a model call's text that starts over (its
// worker died mid-answer) ends the abandoned message and names it in a CUSTOM weft.text_restarted
// before the new attempt's message starts, so the messages a client keeps, less the abandoned ones,
// hold the answer once.
func TestAGUIAgentEventsAndRestartedText(t *testing.T) {
	evs := []events.Event{
		{Type: "run_started", Seq: 1},
		{Type: "handoff", Seq: 2, Step: "triage", Iteration: 1, From: "triage", To: "billing"},
		{Type: "guardrail_tripped", Seq: 3, Step: "triage", Iteration: 2, Guardrail: "no-pii", Stage: "output", Reason: "an email address"},
		{Type: "mcp_session_lost", Seq: 4, Step: "triage", Key: "triage/c3", Server: "files", Reason: "the worker that held it is gone: a fresh session"},
		{Type: "llm_started", Seq: 5, Step: "answer", Activity: "answer#1"},
		{Type: "llm_delta", Step: "answer", Activity: "answer#1", Attempt: 1, Text: "Retries back"},
		{Type: "llm_delta", Step: "answer", Activity: "answer#1", Attempt: 2, Restarted: true, Text: "Retries back off."},
		{Type: "llm_finished", Seq: 6, Step: "answer", Activity: "answer#1", Text: "Retries back off."},
	}
	tr := newAGUITranslator("r1")
	var out []aguiEvent
	for _, e := range evs {
		out = append(out, tr.translate(e)...)
	}
	var customs []aguiEvent
	texts := map[string]string{}
	var order []string
	dropped := map[string]bool{}
	for _, a := range out {
		switch a["type"] {
		case "CUSTOM":
			customs = append(customs, a)
			if a["name"] == "weft.text_restarted" {
				dropped[a["value"].(map[string]any)["messageId"].(string)] = true
			}
		case "TEXT_MESSAGE_START":
			order = append(order, a["messageId"].(string))
		case "TEXT_MESSAGE_CONTENT":
			texts[a["messageId"].(string)] += a["delta"].(string)
		}
	}
	require.Equal(t, []aguiEvent{
		{"type": "CUSTOM", "name": "weft.handoff", "value": map[string]any{"step": "triage", "iteration": int32(1), "from": "triage", "to": "billing"}},
		{"type": "CUSTOM", "name": "weft.guardrail_tripped", "value": map[string]any{"step": "triage", "iteration": int32(2), "guardrail": "no-pii", "stage": "output", "reason": "an email address"}},
		{"type": "CUSTOM", "name": "weft.mcp_session_lost", "value": map[string]any{"step": "triage", "key": "triage/c3", "server": "files", "reason": "the worker that held it is gone: a fresh session"}},
		{"type": "CUSTOM", "name": "weft.text_restarted", "value": map[string]any{"step": "answer", "messageId": "answer#1", "replacedBy": "answer#1/attempt-2", "attempt": int32(2)}},
	}, customs)
	var kinds []string
	for _, a := range out {
		kinds = append(kinds, a["type"].(string))
	}
	require.Equal(t, []string{"RUN_STARTED", "STATE_SNAPSHOT", "CUSTOM", "CUSTOM", "CUSTOM",
		"TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "CUSTOM", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"}, kinds,
		"the abandoned message ends, is named, then the new one starts")
	var kept string
	for _, id := range order {
		if !dropped[id] {
			kept += texts[id]
		}
	}
	require.Equal(t, "Retries back off.", kept, "the answer once")
	for _, a := range out {
		_, err := json.Marshal(a)
		require.NoError(t, err)
	}
}
