package client

import (
	"context"
	"fmt"
	"strings"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/weftworks/weft/activities/toolspec"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// modelCall is one model call of an agent step as the run's history recorded it: the llm
// activity's input, and its output when it completed.
type modelCall struct {
	in   map[string]any
	out  map[string]any
	done bool
}

// recordedAgent is what a failed agent step (or one whose output was too large for the state)
// recorded, in the shape of an agent's output that forkResume reads: the conversation from the
// input of its last model call (plus that call's answer when it called no tool), the tool calls
// from the run's state, and the handoffs those made. iterations is the last iteration whose
// model answer and tool results a fork can reuse.
func (c *Client) recordedAgent(ctx context.Context, runID string, step string, instructions bool, s *weftv1.StepState) (map[string]any, error) {
	var events []*historypb.HistoryEvent
	if err := c.history(ctx, runID, func(ev *historypb.HistoryEvent) { events = append(events, ev) }); err != nil {
		return nil, err
	}
	calls, err := modelCalls(events, c.converter(), step)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", runID, err)
	}
	return agentRecord(calls, s.GetToolCalls(), step, instructions)
}

// modelCalls are the model calls of agent step in a run's history, in order: llm activities
// with the ids the agent gives them ("STEP#N"; a guardrail's judge is "STEP/guardrail-…#N").
func modelCalls(events []*historypb.HistoryEvent, dc converter.DataConverter, step string) ([]modelCall, error) {
	var calls []modelCall
	bySchedule := map[int64]int{}
	for _, ev := range events {
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			head, _, _ := strings.Cut(a.GetActivityId(), "#")
			if head != step || a.GetActivityType().GetName() != toolspec.LLM || len(a.GetInput().GetPayloads()) == 0 {
				continue
			}
			var in map[string]any
			if err := dc.FromPayload(a.GetInput().GetPayloads()[0], &in); err != nil {
				return nil, fmt.Errorf("model call %s: reading its input: %w", a.GetActivityId(), err)
			}
			bySchedule[ev.GetEventId()] = len(calls)
			calls = append(calls, modelCall{in: in})
			continue
		}
		if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil {
			i, ok := bySchedule[a.GetScheduledEventId()]
			if !ok || len(a.GetResult().GetPayloads()) == 0 {
				continue
			}
			var res toolspec.Result
			if err := dc.FromPayload(a.GetResult().GetPayloads()[0], &res); err != nil {
				return nil, fmt.Errorf("model call %d of %s: reading its answer: %w", i+1, step, err)
			}
			calls[i].out, _ = res.Output.(map[string]any)
			calls[i].done = calls[i].out != nil
		}
	}
	return calls, nil
}

// agentRecord is the recorded agent of agent step from its model calls and tool calls;
// instructions: the step has instructions, which the agent sends as the first system message of
// the calls the step's own agent makes (and keeps out of its conversation).
func agentRecord(calls []modelCall, toolCalls []*weftv1.ToolCall, step string, instructions bool) (map[string]any, error) {
	if len(calls) == 0 {
		return nil, fmt.Errorf("agent %s recorded no model call to fork from (it failed before its first; use weft retry)", step)
	}
	// The handoffs: the first completed transfer of an iteration passes the conversation on.
	var handoffs []any
	active, handedIn := step, map[int32]bool{}
	for _, tc := range toolCalls {
		to, ok := strings.CutPrefix(tc.GetTool(), runwire.HandoffToolPrefix)
		if !ok || tc.GetStatus() != runwire.StatusCompleted || handedIn[tc.GetIteration()] {
			continue
		}
		handedIn[tc.GetIteration()] = true
		handoffs = append(handoffs, map[string]any{"iteration": float64(tc.GetIteration()), "from": active, "to": to})
		active = to
	}
	// activeAt is the agent that made model call k (1-based): the one handed to last before it.
	activeAt := func(k int) string {
		a := step
		for _, h := range handoffs {
			if hm := h.(map[string]any); int(hm["iteration"].(float64)) < k {
				a = hm["to"].(string)
			}
		}
		return a
	}
	last := calls[len(calls)-1]
	msgs := append([]any{}, runwire.ModelCallConversation(last.in)...)
	if instructions && activeAt(len(calls)) == step && len(msgs) > 0 {
		if first, _ := msgs[0].(map[string]any); first["role"] == "system" {
			msgs = msgs[1:] // the instructions rendered for that call
		}
	}
	iterations := len(calls) - 1 // the model read the results of every iteration before its last call
	if last.done {
		if requested, _ := last.out["toolCalls"].([]any); len(requested) == 0 {
			// The last call answered without calling tools (the step failed after it: an output
			// guardrail, say): its answer ends a whole iteration.
			text, _ := last.out["text"].(string)
			msgs = append(msgs, map[string]any{"role": "assistant", "content": text})
			iterations = len(calls)
		}
	}
	records := make([]any, 0, len(toolCalls))
	for _, tc := range toolCalls {
		if int(tc.GetIteration()) > iterations {
			continue
		}
		rec := map[string]any{"iteration": float64(tc.GetIteration()), "id": tc.GetId(), "tool": tc.GetTool(), "status": tc.GetStatus(),
			"durationMs": float64(tc.GetDurationMs()), "arguments": tc.GetArguments().AsInterface()}
		if tc.GetError() != "" {
			rec["error"] = tc.GetError()
		} else {
			rec["result"] = tc.GetResult().AsInterface()
		}
		if tc.GetDecision() != "" {
			rec["decision"], rec["reviewer"] = tc.GetDecision(), tc.GetReviewer()
		}
		records = append(records, rec)
	}
	out := map[string]any{"iterations": float64(iterations), "messages": msgs, "toolCalls": records}
	if len(handoffs) > 0 {
		out["handoffs"] = handoffs
	}
	return out, nil
}
