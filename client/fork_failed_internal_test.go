package client

import (
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weftworks/weft/activities/toolspec"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
)

// agentHistory builds the history events of an agent step's activities: scheduled (id, type,
// input) and, when answer is set, completed with it.
type agentHistory struct {
	t      *testing.T
	events []*historypb.HistoryEvent
}

func (h *agentHistory) payloads(v any) *commonpb.Payloads {
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	require.NoError(h.t, err)
	return &commonpb.Payloads{Payloads: []*commonpb.Payload{p}}
}

func (h *agentHistory) call(id, tool string, in map[string]any, answer map[string]any) {
	sched := int64(len(h.events) + 1)
	h.events = append(h.events, &historypb.HistoryEvent{EventId: sched, EventType: enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
		Attributes: &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{
			ActivityId: id, ActivityType: &commonpb.ActivityType{Name: tool}, Input: h.payloads(in)}}})
	if answer == nil {
		return
	}
	h.events = append(h.events, &historypb.HistoryEvent{EventId: sched + 1, EventType: enums.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
		Attributes: &historypb.HistoryEvent_ActivityTaskCompletedEventAttributes{ActivityTaskCompletedEventAttributes: &historypb.ActivityTaskCompletedEventAttributes{
			ScheduledEventId: sched, Result: h.payloads(toolspec.Result{Output: answer, Attempt: 1})}}})
}

func msg(role, content string) map[string]any {
	return map[string]any{"role": role, "content": content}
}

// TestForkAFailedAgent: a failed agent step's conversation is read from its model calls in the
// run's history (the input of the last one, without the instructions it was sent with), its tool
// calls from the state; a fork may start from any iteration whose results a model call read, or
// from the last answer when it called no tool; a handoff made by then says who goes on.
func TestForkAFailedAgent(t *testing.T) {
	searchCall := map[string]any{"id": "c1", "name": "search", "arguments": `{"query":"x"}`}
	transferCall := map[string]any{"id": "t2", "name": "transfer_to_billing", "arguments": `{}`}
	conv2 := []any{msg("user", "Answer: q"),
		map[string]any{"role": "assistant", "content": "", "toolCalls": []any{searchCall}},
		map[string]any{"role": "tool", "toolCallId": "c1", "name": "search", "content": `{"results":[]}`}}
	conv3 := append(append([]any{msg("system", "You handle billing.")}, conv2...),
		map[string]any{"role": "assistant", "content": "", "toolCalls": []any{transferCall}},
		map[string]any{"role": "tool", "toolCallId": "t2", "name": "transfer_to_billing", "content": `{"assistant":"billing"}`})
	toolCalls := []*weftv1.ToolCall{
		{Iteration: 1, Id: "c1", Tool: "search", Status: "completed", Arguments: structpb.NewStructValue(&structpb.Struct{}), Result: structpb.NewStringValue(`{"results":[]}`)},
		{Iteration: 2, Id: "t2", Tool: "handoff:billing", Status: "completed"},
	}
	// ag: call 1 (prompt) asks for search; call 2 hands off to billing; call 3 (billing) failed.
	// Between them: the search itself and a guardrail's judge, which are not model calls of the agent.
	build := func(t *testing.T, instructions bool, last map[string]any) []modelCall {
		h := &agentHistory{t: t}
		first := map[string]any{"prompt": "Answer: q", "tools": []any{}}
		second := map[string]any{"messages": conv2}
		if instructions {
			first = map[string]any{"messages": []any{msg("system", "Turn 1"), msg("user", "Answer: q")}}
			second = map[string]any{"messages": append([]any{msg("system", "Turn 2")}, conv2...)}
		}
		h.call("ag#1", toolspec.LLM, first, map[string]any{"text": "", "toolCalls": []any{searchCall}})
		h.call("ag/c1#2", "search", map[string]any{"query": "x"}, map[string]any{"results": []any{}})
		h.call("ag/guardrail-polite#3", toolspec.LLM, map[string]any{"prompt": "judge"}, map[string]any{"json": map[string]any{"pass": true}})
		h.call("ag#4", toolspec.LLM, second, map[string]any{"text": "", "toolCalls": []any{transferCall}})
		h.call("other#5", toolspec.LLM, map[string]any{"prompt": "another step"}, map[string]any{"text": "x"})
		h.call("ag#6", toolspec.LLM, map[string]any{"messages": conv3}, last)
		calls, err := modelCalls(h.events, converter.GetDefaultDataConverter(), "ag")
		require.NoError(t, err)
		require.Len(t, calls, 3)
		return calls
	}
	t.Run("the last model call failed", func(t *testing.T) {
		for _, instructions := range []bool{false, true} {
			rec, err := agentRecord(build(t, instructions, nil), toolCalls, "ag", instructions)
			require.NoError(t, err)
			require.EqualValues(t, 2, rec["iterations"], "the results of iterations 1 and 2 were read by call 3")
			require.Equal(t, conv3, rec["messages"], "billing made call 3: no instructions to drop")
			require.Len(t, rec["toolCalls"], 2)
			require.Equal(t, []any{map[string]any{"iteration": 2.0, "from": "ag", "to": "billing"}}, rec["handoffs"])

			res, err := forkResume(rec, ForkOptions{Iteration: 1, Message: "try y"}, "r1", "ag")
			require.NoError(t, err)
			require.Equal(t, append(append([]any{}, conv3[:4]...), msg("user", "try y")), res["messages"])
			require.Len(t, res["toolCalls"], 1)
			require.NotContains(t, res, "agent", "the handoff came after iteration 1")
			res, err = forkResume(rec, ForkOptions{Iteration: 2}, "r1", "ag")
			require.NoError(t, err)
			require.Equal(t, "billing", res["agent"])
			_, err = forkResume(rec, ForkOptions{Iteration: 3}, "r1", "ag")
			require.ErrorContains(t, err, "recorded 2 iterations")
		}
	})
	t.Run("the step's agent with instructions failed", func(t *testing.T) {
		calls := build(t, true, nil)[:2] // call 2, sent with instructions, is the last
		calls[1].done = false
		rec, err := agentRecord(calls, toolCalls[:1], "ag", true)
		require.NoError(t, err)
		require.Equal(t, conv2, rec["messages"], "the instructions are not part of the conversation")
		require.EqualValues(t, 1, rec["iterations"])
		require.NotContains(t, rec, "handoffs")
	})
	t.Run("the last answer called no tool", func(t *testing.T) {
		rec, err := agentRecord(build(t, false, map[string]any{"text": "Rude answer."}), toolCalls, "ag", false)
		require.NoError(t, err)
		require.EqualValues(t, 3, rec["iterations"], "an output guardrail failed the step after a whole iteration")
		msgs := rec["messages"].([]any)
		require.Equal(t, map[string]any{"role": "assistant", "content": "Rude answer."}, msgs[len(msgs)-1])
	})
	t.Run("no model call", func(t *testing.T) {
		_, err := agentRecord(nil, nil, "ag", false)
		require.ErrorContains(t, err, "agent ag recorded no model call to fork from")
	})
}
