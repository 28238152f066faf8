package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
)

// stepKey is the step id, with the item index inside forEach ("each[3]"): the key of a
// forEach item's review gate, child run and agent activities.
func stepKey(sr *stepRun, env map[string]any) string {
	if sr.cs.ForEach != nil {
		if i, ok := env["index"].(int); ok {
			return itemKey(sr.cs.ID, i)
		}
	}
	return sr.cs.ID
}

// itemKey names item i of step id: "each[3]".
func itemKey(id string, i int) string { return fmt.Sprintf("%s[%d]", id, i) }

const (
	// WorkflowType is the registered name of Run.
	WorkflowType = "weft"
	// TaskQueue is the default task queue of weft workers.
	TaskQueue = "weft"
	// QueryState returns the *weftv1.ExecutionState of a run.
	QueryState = "state"
	// UpdateReview delivers a review decision with validation (weft CLI, gateway).
	UpdateReview = "review"
	// SignalReview delivers the same decision JSON as a signal (temporal CLI, tctl).
	SignalReview = "review"
	// MemoWorkflow is the memo key holding the workflow's name.
	MemoWorkflow = "workflow"
	// MemoParent is the memo key holding the parent run's id of a child run.
	MemoParent = "parent"
)

// Change ids for workflow.GetVersion: each marks an interpreter change that alters commands, so
// that runs started before it replay as they ran.
const (
	// ChangeActivityIDs: tool activities get ids naming their step ("step#1").
	ChangeActivityIDs = "activity-ids-by-step"
	// ChangeFailureKeepsCompleted: tool activities wait for their cancellation to be answered
	// (WaitForCancellation), so that a step whose activity completed as another step's failure
	// cancelled it keeps its output; the wait for the answer is bounded by failureGrace (a timer).
	ChangeFailureKeepsCompleted = "failure-keeps-completed-steps"
)

// StatusAttribute is the custom search attribute WeftStatus: running, awaiting_review,
// completed or failed. `weft dev` registers it; find paused runs with
// WeftStatus = "awaiting_review".
var StatusAttribute = temporal.NewSearchAttributeKeyKeyword("WeftStatus")

// Error types of the failures Run reports.
const (
	ErrInvalidDefinition = "InvalidDefinition"
	ErrStepFailed        = "StepFailed"
	ErrReviewRejected    = "ReviewRejected"
	ErrReviewTimeout     = "ReviewTimeout"
)

// Step statuses.
const (
	StatusPending        = "pending"
	StatusRunning        = "running"
	StatusCompleted      = "completed"
	StatusSkipped        = "skipped"
	StatusFailed         = "failed"
	StatusAwaitingReview = "awaiting_review"
	StatusCancelled      = "cancelled"
	// StatusNotRun: the step never started (the run ended, failed or was cancelled while it
	// waited for its dependencies). It is not cancelled: nothing of it ran.
	StatusNotRun = "not_run"
)

// Review decisions.
const (
	DecisionApprove = "approve"
	DecisionEdit    = "edit"
	DecisionReject  = "reject"
)

// OutputCap is the largest step output (JSON bytes) the state query includes; larger outputs are
// reported with output_truncated and are still in the run result and visible to later steps.
const OutputCap = 64 << 10

// DeadlockDetectionTimeout is how long a workflow task of weft's may run code without yielding
// before the SDK takes it for a deadlock (the SDK's default is 1 s). The interpreter renders
// every item of a large forEach in one task: 60,000 embeds took ~1 s in Temporal's test
// environment on a 2-core machine and over it under -race, and a task that trips the detector
// fails and is retried forever. It stays under the workflow task timeout (10 s).
const DeadlockDetectionTimeout = 5 * time.Second
