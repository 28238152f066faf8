package console

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	weftclient "github.com/weftworks/weft/client"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
)

// TestAGUIEvents: a run with an agent step that streams text, retries it (a new message), calls
// a tool, asks a review and completes, as AG-UI events in order; a failed run ends with RUN_ERROR.
func TestAGUIEvents(t *testing.T) {
	args, _ := structpb.NewValue(map[string]any{"query": "retries"})
	result, _ := structpb.NewValue(map[string]any{"count": 2})
	out, _ := structpb.NewValue("done")
	call := &weftv1.ToolCall{Id: "c1", Tool: "search", Arguments: args}
	done := &weftv1.ToolCall{Id: "c1", Tool: "search", Arguments: args, Result: result}
	evs := []weftclient.Event{
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
				if v, ok := a[k]; ok {
					s += " " + v.(string)
				}
			}
			got = append(got, s)
			all = append(all, a)
		}
	}
	require.Equal(t, []string{
		"RUN_STARTED", "STATE_SNAPSHOT",
		"STEP_STARTED helper",
		"TEXT_MESSAGE_START helper#1", "TEXT_MESSAGE_CONTENT helper#1 Let me", "TEXT_MESSAGE_CONTENT helper#1  look",
		"TEXT_MESSAGE_END helper#1",
		"TEXT_MESSAGE_START helper#1/attempt-2", "TEXT_MESSAGE_CONTENT helper#1/attempt-2 Searching", "TEXT_MESSAGE_END helper#1/attempt-2",
		"TOOL_CALL_START c1", `TOOL_CALL_ARGS c1 {"query":"retries"}`, "TOOL_CALL_END c1", "TOOL_CALL_RESULT result-c1 c1",
		"CUSTOM weft.review_requested", "CUSTOM weft.review_decided",
		"STEP_FINISHED helper", "STATE_SNAPSHOT", "STATE_SNAPSHOT",
		"STATE_SNAPSHOT", "RUN_FINISHED",
	}, got)
	last := all[len(all)-1]
	require.Equal(t, aguiEvent{"type": "RUN_FINISHED", "threadId": "r1", "runId": "r1", "result": "done"}, last)
	require.Equal(t, map[string]any{"run": "r1", "status": "completed", "steps": map[string]string{"helper": "completed", "never": "skipped"}}, all[len(all)-2]["snapshot"])
	require.Equal(t, `{"count":2}`, all[13]["content"])
	require.Equal(t, "tool", all[13]["role"])

	tr = newAGUITranslator("r2")
	tr.translate(weftclient.Event{Type: "run_started", Seq: 1})
	tr.translate(weftclient.Event{Type: "llm_delta", Activity: "a#1", Attempt: 1, Text: "Hal"})
	fail := tr.translate(weftclient.Event{Type: "run_failed", Seq: 3, Error: `step "a": boom`})
	require.Equal(t, []aguiEvent{{"type": "TEXT_MESSAGE_END", "messageId": "a#1"}, tr.snapshot("failed"),
		{"type": "RUN_ERROR", "message": `step "a": boom`, "code": "run_failed"}}, fail)
	require.True(t, tr.ended)
}

// TestAGUIStreamsOpenAsAGUIClientsRequire: @ag-ui/client rejects a stream whose first event is not
// RUN_STARTED or RUN_ERROR, a second STEP_STARTED for an active step and STEP_FINISHED for a step
// it did not see start; a stream resumed with Last-Event-ID and one for a run that does not exist
// open the way it accepts.
func TestAGUIStreamsOpenAsAGUIClientsRequire(t *testing.T) {
	for _, tc := range []struct {
		name string
		evs  []weftclient.Event
		want []string
	}{
		{"a resume after step a started", []weftclient.Event{
			{Type: "step_completed", Seq: 5, Step: "a"},
			{Type: "step_started", Seq: 6, Step: "b"},
			{Type: "step_completed", Seq: 7, Step: "b"},
			{Type: "run_completed", Seq: 8},
		}, []string{"RUN_STARTED", "STATE_SNAPSHOT", "STEP_STARTED b", "STEP_FINISHED b", "STATE_SNAPSHOT", "STATE_SNAPSHOT", "RUN_FINISHED"}},
		{"a resume in the middle of a model's text", []weftclient.Event{
			{Type: "llm_delta", Step: "a", Activity: "a#1", Attempt: 1, Text: "lo", Offset: 3},
			{Type: "llm_finished", Seq: 4, Step: "a", Activity: "a#1"},
		}, []string{"RUN_STARTED", "TEXT_MESSAGE_START a#1", "TEXT_MESSAGE_CONTENT a#1 lo", "TEXT_MESSAGE_END a#1"}},
		{"a run that does not exist", []weftclient.Event{
			{Type: "run_failed", Error: `no run "x"`},
		}, []string{"RUN_ERROR"}},
		{"a step started twice, then again after it finished", []weftclient.Event{
			{Type: "run_started", Seq: 1},
			{Type: "step_started", Seq: 2, Step: "a"},
			{Type: "step_started", Seq: 3, Step: "a"},
			{Type: "step_completed", Seq: 4, Step: "a"},
			{Type: "step_started", Seq: 5, Step: "a"},
			{Type: "step_failed", Seq: 6, Step: "a"},
			{Type: "run_failed", Seq: 7, Error: "boom"},
		}, []string{"RUN_STARTED", "STATE_SNAPSHOT", "STEP_STARTED a", "STEP_FINISHED a", "STATE_SNAPSHOT",
			"STEP_STARTED a", "STEP_FINISHED a", "STATE_SNAPSHOT", "STATE_SNAPSHOT", "RUN_ERROR"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newAGUITranslator("r1")
			var got []string
			for _, e := range tc.evs {
				for _, a := range tr.translate(e) {
					s := a["type"].(string)
					for _, k := range []string{"stepName", "messageId", "delta"} {
						if v, ok := a[k]; ok {
							s += " " + v.(string)
						}
					}
					got = append(got, s)
				}
			}
			require.Equal(t, tc.want, got)
		})
	}
}
