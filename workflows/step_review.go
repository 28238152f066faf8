package workflows

import (
	"fmt"
	"strconv"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/weftworks/weft/activities/toolspec"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
	"github.com/weftworks/weft/workflows/expr"
)

// reviewRejected is a reject decision: the step fails, but its output still carries the
// decision so that steps with continueOnError upstream can branch on {{ step.output.decision }}.
type reviewRejected struct {
	output map[string]any
	err    error
}

func (e *reviewRejected) Error() string { return e.err.Error() }
func (e *reviewRejected) Unwrap() error { return e.err }

// ChangeForEachReview: a forEach review step waits until every item is decided, each item's
// decision (a reject too) is that item's output, and only rejectFails makes a reject fail the
// step. Before it, the first reject failed the step and cancelled the other items' reviews.
const ChangeForEachReview = "foreach-review-each-item-decided"

// DecisionUndecided is the decision of a forEach review item that was not decided when the step
// failed (another item rejected with rejectFails, or timed out).
const DecisionUndecided = "undecided"

// eachDecidedKey marks the context of a forEach review's items under ChangeForEachReview.
type eachDecidedKey struct{}

// review pauses until a decision for this step arrives (Update or Signal `review`) or the
// optional timeout fires. Inside forEach each item is its own gate ("step[i]").
//
// A reject fails the step when rejectFails says so; by default a single review's reject does
// (files branch on it with continueOnError), a forEach item's reject does not: it is that item's
// output, like an approval.
func (r *run) review(ctx workflow.Context, sr *stepRun, inputs map[string]any, env map[string]any) (any, error) {
	id := sr.cs.ID
	gateID := stepKey(sr, env)
	sr.attempts = max(sr.attempts, 1)
	set, err := typedInput(sr.cs, inputs, dsl.ReviewInput)
	if err != nil {
		return nil, err
	}
	title, instructions, onTimeout := set.Title, set.Instructions, set.OnTimeout
	var timeout time.Duration
	if ms, ok := inputs["timeout"].(float64); ok && ms > 0 {
		inputs["timeout"] = fmt.Sprintf("%dms", int64(ms)) // vai writes milliseconds
	}
	if s, _ := inputs["timeout"].(string); s != "" {
		d, err := toolspec.ParseDuration(s)
		if err == nil && d == 0 {
			err = fmt.Errorf("%q is no time: write a duration over 0, e.g. \"24h\"", s)
		}
		if err != nil {
			return nil, temporal.NewNonRetryableApplicationError("review timeout "+err.Error(), toolspec.ErrInvalidInput, nil)
		}
		timeout = d
	}
	data, err := toValue(inputs["data"])
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("review data: "+err.Error(), toolspec.ErrInvalidInput, nil)
	}
	reviewers, err := reviewerList(inputs["reviewers"])
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), toolspec.ErrInvalidInput, nil)
	}
	rejectFails := set.RejectFails != nil && *set.RejectFails
	if set.RejectFails == nil {
		eachDecided, _ := ctx.Value(eachDecidedKey{}).(bool)
		rejectFails = !eachDecided
	}
	req := &weftv1.ReviewRequest{Id: gateID, Kind: runwire.GateReview, Step: id, Title: title, Instructions: instructions, Data: data,
		OnTimeout: onTimeout, Reviewers: reviewers}
	if timeout > 0 {
		req.Deadline = timestamppb.New(workflow.Now(ctx).Add(timeout))
	}
	schema := inputs["schema"]
	if schema == nil {
		schema = ShapeSchema(inputs["data"])
	}
	g, err := r.openGate(ctx, sr, req, schema)
	if err != nil {
		return nil, err
	}
	d, err := r.waitGate(ctx, g, timeout, onTimeout)
	if err != nil {
		return nil, err
	}
	outData := inputs["data"]
	if d.Decision == runwire.DecisionEdit {
		outData = d.GetData().AsInterface()
	}
	// Who decided (an authenticated identity, or a typed label when authenticated is false) and
	// on what (the digest of the data shown).
	out := map[string]any{"decision": d.Decision, "data": outData, "reviewer": d.Reviewer, "authenticated": d.Authenticated,
		"comment": d.Comment, "digest": req.Digest, "decidedAt": workflow.Now(ctx).UTC().Format(time.RFC3339)}
	if d.Decision == runwire.DecisionReject && rejectFails {
		msg := "rejected"
		if i, ok := env["index"].(int); ok && sr.cs.ForEach != nil {
			msg = fmt.Sprintf("item %d rejected", i)
		}
		if d.Reviewer != "" {
			msg += " by " + d.Reviewer
		}
		if d.Comment != "" {
			msg += ": " + d.Comment
		}
		return nil, &reviewRejected{output: out, err: temporal.NewNonRetryableApplicationError(msg, runwire.ErrReviewRejected, nil)}
	}
	return out, nil
}

// reviewerList reads a review's reviewers input: names and "role:NAME" entries.
func reviewerList(v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("review reviewers must be a list of names and \"role:NAME\" entries, not %s", expr.TypeName(v))
	}
	var out []string
	for _, e := range list {
		s, _ := e.(string)
		if s == "" || s == "role:" {
			return nil, fmt.Errorf("review reviewers: %s is not a name or \"role:NAME\"", reviewerEntry(e))
		}
		out = append(out, s)
	}
	return out, nil
}

// refreshStatus keeps WeftStatus at awaiting_review while any review is pending.
func (r *run) refreshStatus(ctx workflow.Context) {
	want := runwire.StatusRunning
	if len(r.gates) > 0 {
		want = runwire.StatusAwaitingReview
	}
	if want != r.status {
		r.setStatus(ctx, want)
	}
}

// reviewerEntry shows a reviewers entry that is no name in a message: "" as "", null as null.
func reviewerEntry(e any) string {
	if s, ok := e.(string); ok {
		return strconv.Quote(s)
	}
	return expr.Text(e)
}

func init() { registerKind(toolspec.KindReview, runMethod((*run).review)) }
