package workflows

import (
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"

	"github.com/weftworks/weft/activities/toolspec"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// The size gate. Temporal refuses a payload over 2 MB, and a workflow task whose commands carry
// one fails and is retried forever: the run never ends, its state query fails and a cancel is
// never delivered. So every value workflow code puts into history passes one check against
// runwire.MaxValueBytes before it gets there: an inline data step's output (it stays in memory, and a
// later activity's input, a child's request or the run's result carries it), a tool activity's
// input, a child run's request and the run's result. Over the limit the step (or the run) fails
// with a non-retryable error naming the size, the limit and what to do instead. Values that
// arrive from outside are checked before they are sent: the client refuses start requests over
// the limit (client.Request), review decisions are refused by the Update's validator
// (runwire.MaxEditBytes), and the state query leaves out what would not fit. Large tool
// outputs never meet the gate: the worker keeps them in the knowledge store (claim-check,
// stored.go) and history holds a reference.

// ChangeSizeGate (workflow.GetVersion): a value over runwire.MaxValueBytes fails its step (or the run)
// instead of being put into history. Asked only when a value is over the limit, so runs that
// never met one record no marker; a run recorded before the gate that carried such a value
// (under Temporal's own 2 MB) replays as it ran.
const ChangeSizeGate = "size-gate"

// refuses reports whether the gate refuses a value of n bytes.
func refuses(ctx workflow.Context, n int) bool {
	return n > runwire.MaxValueBytes && workflow.GetVersion(ctx, ChangeSizeGate, workflow.DefaultVersion, 1) >= 1
}

// overLimit reports the size of v as JSON and whether the gate refuses it.
func overLimit(ctx workflow.Context, v any) (int, bool) {
	n := jsonSize(v)
	return n, refuses(ctx, n)
}

// tooLarge is the gate's error for what (a step's output, an activity's input): what it is,
// its size, the limit, and what to do instead.
func tooLarge(what string, n int, instead string) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
		"%s is %s of JSON, more than weft puts into a run's history (%s; Temporal refuses payloads over 2 MB): %s",
		what, runwire.ByteSize(n), runwire.ByteSize(runwire.MaxValueBytes), instead), toolspec.ErrInvalidInput, nil)
}

// gateOutput checks the output of an inline data step (template, transform, merge, filter,
// split), computed in workflow code where it cannot be stored.
func gateOutput(ctx workflow.Context, tool string, out any) error {
	if n, over := overLimit(ctx, out); over {
		return tooLarge("the "+tool+" step's output", n,
			"make the data smaller (pass a field, fewer items, a shorter text), or produce it in a tool step, whose large outputs weft keeps in the knowledge store")
	}
	return nil
}

// gateInputs checks the inputs of an activity (or a child run) before it is scheduled.
func gateInputs(ctx workflow.Context, what string, in any) error {
	if n, over := overLimit(ctx, in); over {
		return tooLarge(what, n,
			"pass large values whole ({{ step.output.field }}), which a tool's stored outputs travel as references, or make them smaller")
	}
	return nil
}

// gateResult fits the run's result under the limit: step outputs are left out of it (as from
// the state query) when they would not fit; a run output that alone does not fit fails the run.
func gateResult(ctx workflow.Context, res *weftv1.RunResult) error {
	n := proto.Size(res)
	if !refuses(ctx, n) {
		return nil
	}
	for _, s := range res.Steps {
		if s.Output != nil {
			s.Output, s.OutputTruncated = nil, true
		}
	}
	if n = proto.Size(res); n <= runwire.MaxValueBytes {
		return nil
	}
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
		"the run's output is %s, more than weft puts into a run's history (%s; Temporal refuses payloads over 2 MB): make the output smaller (a summary, a count, a field), or let a tool step write the large data (ingest it, or put it in a file) and output where it is",
		runwire.ByteSize(n), runwire.ByteSize(runwire.MaxValueBytes)), runwire.ErrStepFailed, nil)
}

// fitState leaves out of a state answer what would take it over the limit (a query's answer is
// a payload too): step outputs first, then the run's output, then the pending reviews' data.
func fitState(st *weftv1.ExecutionState) {
	if proto.Size(st) <= runwire.MaxValueBytes {
		return
	}
	for _, s := range st.Steps {
		if s.Output != nil {
			s.Output, s.OutputTruncated = nil, true
		}
	}
	if proto.Size(st) > runwire.MaxValueBytes {
		st.Output = nil
	}
	if proto.Size(st) > runwire.MaxValueBytes {
		for i, p := range st.PendingReviews {
			p = proto.Clone(p).(*weftv1.ReviewRequest) // the gate's own request stays whole
			p.Data = nil
			st.PendingReviews[i] = p
		}
	}
}
