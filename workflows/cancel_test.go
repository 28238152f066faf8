package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/weftworks/weft/activities/toolspec"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// TestCancelledRunCancelsItsSteps: when the run itself is cancelled (weft cancel) while a step is
// in flight, the step is cancelled, not failed, and the steps that never started say why.
func TestCancelledRunCancelsItsSteps(t *testing.T) {
	h := newHarness(t)
	def := `{"name":"c","steps":[
	  {"id":"gate","tool":"review","inputs":{"title":"go?","data":{"n":1}}},
	  {"id":"after","tool":"template","inputs":{"text":"{{ gate.output.decision }}"}}]}`
	var state *weftv1.ExecutionState
	h.env.RegisterDelayedCallback(func() { h.env.CancelWorkflow() }, time.Minute)
	h.env.RegisterDelayedCallback(func() { state = pendingState(t, h) }, 2*time.Minute)
	h.env.ExecuteWorkflow(runwire.WorkflowType, request(t, def, nil))
	require.Error(t, h.env.GetWorkflowError())
	if state == nil { // the run ended before the second callback: read the state it ended with
		state = pendingState(t, h)
	}
	got := map[string]string{}
	for _, s := range state.Steps {
		got[s.Id] = s.Status + ": " + s.Error + s.Reason
	}
	require.Equal(t, map[string]string{
		"gate":  "cancelled: cancelled: the run was cancelled",
		"after": "not_run: the run ended before this step started",
	}, got)
}

// TestForEachItemsDoneAreItemsCompleted: a forEach that stops at a failed item counts as done the
// items that completed, not the failed one (the console showed "28/50 done" for 24 completed).
func TestForEachItemsDoneAreItemsCompleted(t *testing.T) {
	h := newHarness(t)
	h.tools.scripts["search"] = func(in map[string]any) (any, *toolspec.Usage, error) {
		if in["query"] == "bad" {
			return nil, nil, temporal.NewNonRetryableApplicationError("search: bad query", toolspec.ErrInvalidInput, nil)
		}
		return map[string]any{"query": in["query"], "results": []any{}}, nil, nil
	}
	st, err := h.run(t, `{"name":"items","inputs":{"qs":{"type":"array","default":["a","b","bad","c","d"]}},
		"steps":[{"id":"each","tool":"search","forEach":"{{ inputs.qs }}","concurrency":1,
		"continueOnError":true,"inputs":{"query":"{{ item }}","collection":"c"}}]}`, nil)
	require.NoError(t, err)
	require.Len(t, st.Steps, 1)
	require.Equal(t, runwire.StatusFailed, st.Steps[0].Status)
	require.EqualValues(t, 5, st.Steps[0].ItemsTotal)
	require.EqualValues(t, 2, st.Steps[0].ItemsDone, "a and b completed; bad failed; c and d never started")
}

// TestFilterThatKeepsNothingSaysSo: a filter that keeps none of its items succeeds, with a warning
// on the step and the run (it finished green with nothing said), and one that keeps some says
// nothing.
func TestFilterThatKeepsNothingSaysSo(t *testing.T) {
	h := newHarness(t)
	res, err := h.run(t, `{"name":"f","inputs":{"xs":{"type":"array","default":[{"score":0.2},{"score":0.3}]}},"steps":[
		{"id":"none","tool":"filter","inputs":{"array":"{{ inputs.xs }}","condition":"item.score > 0.5"}},
		{"id":"some","tool":"filter","inputs":{"array":"{{ inputs.xs }}","condition":"item.score > 0.25"}}]}`, nil)
	require.NoError(t, err)
	byID := map[string]*weftv1.StepState{}
	for _, s := range res.Steps {
		byID[s.Id] = s
	}
	require.Equal(t, runwire.StatusCompleted, byID["none"].Status)
	require.Equal(t, []string{"the filter kept none of its 2 items (condition item.score > 0.5): the steps after it get an empty list"}, byID["none"].Warnings)
	require.Empty(t, byID["some"].Warnings)
}
