package workflows

import (
	"fmt"
	"time"
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

// OutputCap is the largest step output (JSON bytes) the state query includes; larger outputs are
// reported with output_truncated and are still in the run result and visible to later steps.
const OutputCap = 64 << 10

// DeadlockDetectionTimeout is how long a workflow task of weft's may run code without yielding
// before the SDK takes it for a deadlock (the SDK's default is 1 s). The interpreter renders
// every item of a large forEach in one task: 60,000 embeds took ~1 s in Temporal's test
// environment on a 2-core machine and over it under -race, and a task that trips the detector
// fails and is retried forever. It stays under the workflow task timeout (10 s).
const DeadlockDetectionTimeout = 5 * time.Second
