package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// TestAgentToolCallRecordsDecision: a decided tool call records who decided (authenticated, with
// roles) in the step's output and in the state query, and its durationMs is the tool's own time,
// not the hour the person took (reviewMs).
func TestAgentToolCallRecordsDecision(t *testing.T) {
	h := newHarness(t)
	withModel(h, &scriptedModel{answers: []func(map[string]any) map[string]any{
		callTools([3]string{"a", "ingest", `{"text":"one","source":"1.md"}`}, [3]string{"b", "ingest", `{"text":"two","source":"2.md"}`}),
		say("done"),
	}})
	h.env.RegisterDelayedCallback(func() {
		for i, d := range []string{
			`{"id":"helper/a","decision":"approve","reviewer":"ana@example.com","authenticated":true,"reviewer_roles":["editor"],"comment":"fine"}`,
			`{"id":"helper/b","decision":"reject","reviewer":"bo"}`,
		} {
			h.env.UpdateWorkflow(runwire.UpdateReview, string(rune('a'+i)), &testsuite.TestUpdateCallback{
				OnAccept: func() {}, OnReject: func(err error) { t.Errorf("%s: %v", d, err) }, OnComplete: func(any, error) {},
			}, decision(t, d))
		}
	}, time.Hour)
	var state weftv1.ExecutionState
	res, err := h.run(t, agentFlow, nil)
	require.NoError(t, err)
	v, err := h.env.QueryWorkflow(runwire.QueryState)
	require.NoError(t, err)
	require.NoError(t, v.Get(&state))

	calls := agentOutput(t, res)["toolCalls"].([]any)
	a, b := calls[0].(map[string]any), calls[1].(map[string]any)
	require.Equal(t, "completed", a["status"])
	require.Equal(t, "approve", a["decision"])
	require.Equal(t, "ana@example.com", a["reviewer"])
	require.Equal(t, true, a["authenticated"])
	require.Equal(t, []any{"editor"}, a["reviewerRoles"])
	require.Equal(t, "fine", a["comment"])
	require.Less(t, a["durationMs"].(float64), float64(time.Minute.Milliseconds()), "the wait for the person is not the tool's time")
	require.GreaterOrEqual(t, a["reviewMs"].(float64), float64(time.Hour.Milliseconds()))
	require.Equal(t, "reject", b["decision"])
	require.Equal(t, "bo", b["reviewer"])
	require.Equal(t, false, b["authenticated"])

	var recs []*weftv1.ToolCall
	for _, s := range state.Steps {
		if s.Id == "helper" {
			recs = s.ToolCalls
		}
	}
	require.Len(t, recs, 2)
	require.Equal(t, "ana@example.com", recs[0].Reviewer)
	require.True(t, recs[0].Authenticated)
	require.Equal(t, []string{"editor"}, recs[0].ReviewerRoles)
	require.Less(t, recs[0].DurationMs, time.Minute.Milliseconds())
	require.GreaterOrEqual(t, recs[0].ReviewMs, time.Hour.Milliseconds())
	require.Equal(t, "reject", recs[1].Decision)
}
