package client_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/weftworks/weft/client"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// TestResolve: the one computation of a run's status and its steps' outcomes, from what Temporal
// says and what the run's state says. Each row is a disagreement a surface showed before.
func TestResolve(t *testing.T) {
	started := timestamppb.Now()
	for _, tc := range []struct {
		name     string
		temporal string // "" : Temporal not asked
		state    *weftv1.ExecutionState
		status   string
		steps    map[string]string // id → status: error/reason
	}{
		{name: "a running run waiting for a review is awaiting_review",
			temporal: "running",
			state: &weftv1.ExecutionState{Status: runwire.StatusRunning, PendingReviews: []*weftv1.ReviewRequest{{Id: "check", Step: "check"}},
				Steps: []*weftv1.StepState{{Id: "check", Status: runwire.StatusAwaitingReview, StartedAt: started}}},
			status: client.RunAwaitingReview,
			steps:  map[string]string{"check": "awaiting_review: "}},
		{name: "the state's word when Temporal was not asked",
			state:  &weftv1.ExecutionState{Status: runwire.StatusFailed},
			status: client.RunFailed, steps: map[string]string{}},
		{name: "a cancelled run: in flight is cancelled, never started is not run",
			temporal: "cancelled",
			state: &weftv1.ExecutionState{Status: runwire.StatusRunning, Steps: []*weftv1.StepState{
				{Id: "done", Status: runwire.StatusCompleted, StartedAt: started},
				{Id: "flight", Status: runwire.StatusRunning, StartedAt: started},
				{Id: "old", Status: runwire.StatusFailed, StartedAt: started, Error: "canceled"},
				{Id: "later", Status: runwire.StatusPending},
				{Id: "older", Status: runwire.StatusCancelled, Reason: "run stopped before the step started"},
			}},
			status: client.RunCancelled,
			steps: map[string]string{"done": "completed: ", "flight": "cancelled: " + runwire.StoppedInFlight,
				"old": "cancelled: " + runwire.StoppedInFlight, "later": "not_run: " + client.NotRunReason,
				"older": "not_run: " + client.NotRunReason}},
		{name: "a terminated run's step in flight was stopped, not left running",
			temporal: "terminated",
			state: &weftv1.ExecutionState{Status: runwire.StatusAwaitingReview,
				PendingReviews: []*weftv1.ReviewRequest{{Id: "gate"}},
				Steps:          []*weftv1.StepState{{Id: "gate", Status: runwire.StatusAwaitingReview, StartedAt: started}}},
			status: client.RunTerminated,
			steps:  map[string]string{"gate": "cancelled: " + client.TerminatedInFlight}},
		{name: "a failed run keeps a step's own failure",
			temporal: "failed",
			state: &weftv1.ExecutionState{Status: runwire.StatusFailed, Steps: []*weftv1.StepState{
				{Id: "bad", Status: runwire.StatusFailed, StartedAt: started, Error: "the request was cancelled by the provider"}}},
			status: client.RunFailed,
			steps:  map[string]string{"bad": "failed: the request was cancelled by the provider"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d *client.Description
			if tc.temporal != "" {
				d = &client.Description{ID: "r", Status: tc.temporal}
			}
			before := tc.state.String()
			e := client.Resolve("r", d, tc.state)
			require.Equal(t, before, tc.state.String(), "the state given is left as it is")
			require.Equal(t, tc.status, e.Status)
			require.Equal(t, tc.status, e.State.Status, "the state's status is the run's")
			require.Equal(t, client.Closed(tc.status), e.Closed)
			if e.Closed {
				require.Empty(t, e.State.PendingReviews, "a closed run waits for nothing")
			}
			got := map[string]string{}
			for _, s := range e.State.Steps {
				got[s.Id] = s.Status + ": " + s.Error + s.Reason
			}
			require.Equal(t, tc.steps, got)
		})
	}
}

// TestRunStatusOfAListing: a listing line says awaiting_review as the run's state does.
func TestRunStatusOfAListing(t *testing.T) {
	require.Equal(t, client.RunAwaitingReview, client.RunSummary{Status: "running", Weft: runwire.StatusAwaitingReview}.RunStatus())
	require.Equal(t, client.RunRunning, client.RunSummary{Status: "running", Weft: runwire.StatusRunning}.RunStatus())
	require.Equal(t, client.RunCompleted, client.RunSummary{Status: "completed", Weft: runwire.StatusAwaitingReview}.RunStatus(),
		"a closed run's attribute may be stale: Temporal's status wins")
}

// TestUsageLedger: one usage, read the same by every surface: model and embedding tokens apart
// and together (the console's 390 is the CLI's 60 + 330), words that agree in number.
func TestUsageLedger(t *testing.T) {
	u := client.UsageOf(&weftv1.TokenUsage{PromptTokens: 40, CompletionTokens: 20, EmbeddingTokens: 330, Calls: 3, CostUsd: 0.0012})
	require.Equal(t, client.Usage{PromptTokens: 40, CompletionTokens: 20, ChatTokens: 60, EmbeddingTokens: 330, Tokens: 390, CostUSD: 0.0012, Calls: 3}, u)
	require.Equal(t, "390 tokens (60 model: 40 in, 20 out; 330 embedding), $0.0012, 3 calls", u.String())
	require.True(t, u.Billed())
	one := client.UsageOf(&weftv1.TokenUsage{EmbeddingTokens: 1, Calls: 1})
	require.Equal(t, "1 token (1 embedding), 1 call", one.String())
	require.False(t, client.UsageOf(nil).Billed())
	require.Equal(t, int64(75), client.UsageOf(&weftv1.TokenUsage{PromptTokens: 40, CompletionTokens: 20, TotalTokens: 75}).ChatTokens,
		"the provider's total wins when it counts more (reasoning tokens)")
}

// TestRunErrorSaysTheCauseOnce: a Go program's error of a failed run names the run and the cause
// once (it repeated Temporal's error chain around the cause), and errors.As still finds the chain.
func TestRunErrorSaysTheCauseOnce(t *testing.T) {
	cause := temporal.NewNonRetryableApplicationError(`step "find": the index refused it`, runwire.ErrStepFailed, nil)
	chain := fmt.Errorf("workflow execution error (type: weft, workflowID: r1): %w", cause)
	err := client.NewRunError("r1", chain)
	require.Equal(t, `run r1: step "find": the index refused it`, err.Error())
	require.Equal(t, 1, strings.Count(err.Error(), "the index refused it"))
	var app *temporal.ApplicationError
	require.ErrorAs(t, err, &app)
	require.Same(t, err, client.NewRunError("r1", err), "wrapped once")
	require.NoError(t, client.NewRunError("r1", nil))
}

// TestEndStatus: how a run ended, from the error waiting for its result gave, in the one
// vocabulary (a cancelled run's stream said failed).
func TestEndStatus(t *testing.T) {
	require.Equal(t, client.RunCompleted, client.EndStatus(nil))
	require.Equal(t, client.RunCancelled, client.EndStatus(fmt.Errorf("run r: %w", temporal.NewCanceledError("cancelled"))))
	require.Equal(t, client.RunTerminated, client.EndStatus(&client.EndedError{How: "terminated"}))
	require.Equal(t, client.RunTimedOut, client.EndStatus(&client.EndedError{How: "timed out"}))
	require.Equal(t, client.RunFailed, client.EndStatus(temporal.NewApplicationError("boom", "StepFailed")))
}
