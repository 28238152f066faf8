package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/workflows"
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
	h.env.ExecuteWorkflow(workflows.WorkflowType, request(t, def, nil))
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
