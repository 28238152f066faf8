package workflows_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// TestReplayAnswersToolCallsFromTheRecord: a run that carries recorded_calls for its agent (weft
// eval's replay) answers a call whose tool and arguments the record holds with the recorded text
// (the tool does not run, its approval is not asked), in the record's order for repeated calls,
// and fails a call the record does not hold as tool drift without running it; the model's turns
// run for real. A recorded call matches by the model's arguments or by those it ran with (the
// workflow's defaults filled in).
func TestReplayAnswersToolCallsFromTheRecord(t *testing.T) {
	h := newHarness(t)
	m := &scriptedModel{answers: []func(map[string]any) map[string]any{
		callTools([3]string{"c1", "search", `{"query":"rate limits"}`}, [3]string{"c2", "ingest", `{"text":"x","source":"a.md"}`}),
		callTools([3]string{"c3", "search", `{"query": "rate limits"}`}, [3]string{"c4", "search", `{"query":"quotas"}`}),
		say("done"),
	}}
	withModel(h, m)
	args := func(s string) *structpb.Value {
		v, err := structpb.NewValue(map[string]any{"query": s})
		require.NoError(t, err)
		return v
	}
	ingestArgs, err := structpb.NewValue(map[string]any{"source": "a.md", "text": "x"})
	require.NoError(t, err)
	ranWith, err := structpb.NewValue(map[string]any{"query": "rate limits", "collection": "docs"})
	require.NoError(t, err)
	req := request(t, agentFlow, nil)
	req.ResumedFrom = "run-1"
	req.RecordedCalls = map[string]*weftv1.RecordedCalls{"helper": {Calls: []*weftv1.ToolCall{
		{Tool: "search", Arguments: args("rate limits"), Result: structpb.NewStringValue(`{"results":["first"]}`)},
		{Tool: "ingest", Arguments: ingestArgs, Error: "the store said no"},
		// recorded as it ran: with the workflow's default collection
		{Tool: "search", Arguments: ranWith, Result: structpb.NewStringValue(`{"results":["second"]}`)},
	}}}
	h.env.ExecuteWorkflow(runwire.WorkflowType, req)
	require.True(t, h.env.IsWorkflowCompleted())
	require.NoError(t, h.env.GetWorkflowError())
	var res weftv1.RunResult
	require.NoError(t, h.env.GetWorkflowResult(&res))
	out := agentOutput(t, &res)
	require.Equal(t, "done", out["text"])
	calls := out["toolCalls"].([]any)
	require.Len(t, calls, 4)
	got := func(i int, k string) any { return calls[i].(map[string]any)[k] }
	require.Equal(t, `{"results":["first"]}`, got(0, "result"))
	require.Equal(t, "completed", got(0, "status"))
	require.Equal(t, "the store said no", got(1, "error"), "a recorded error is the answer; the approval is not asked")
	require.Equal(t, `{"results":["second"]}`, got(2, "result"), "repeated calls take the recorded ones in order")
	require.Contains(t, got(3, "error"), runwire.ToolDrift)
	require.Contains(t, got(3, "error"), "run run-1 made no call of search")
	require.Equal(t, 0, h.tools.count("search"), "no tool ran")
	require.Equal(t, 0, h.tools.count("ingest"))
	require.Equal(t, 3, m.calls(), "the model ran for real")
	last := m.seen[2]
	require.Equal(t, `{"results":["second"]}`, last[len(last)-2].(map[string]any)["content"])
	require.Contains(t, last[len(last)-1].(map[string]any)["content"], "error: "+runwire.ToolDrift)
}
