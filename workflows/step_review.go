package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/weftworks/weft/activities/toolspec"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
)

// reviewRejected is a reject decision: the step fails, but its output still carries the
// decision so that steps with continueOnError upstream can branch on {{ step.output.decision }}.
type reviewRejected struct {
	output map[string]any
	err    error
}

func (e *reviewRejected) Error() string { return e.err.Error() }
func (e *reviewRejected) Unwrap() error { return e.err }

// review pauses until a decision for this step arrives (Update or Signal `review`) or the
// optional timeout fires. Inside forEach each item is its own gate ("step[i]").
func (r *run) review(ctx workflow.Context, sr *stepRun, inputs map[string]any, env map[string]any) (any, error) {
	id := sr.cs.ID
	gateID := id
	if sr.cs.ForEach != nil {
		if i, ok := env["index"].(int); ok {
			gateID = fmt.Sprintf("%s[%d]", id, i)
		}
	}
	sr.attempts++
	title, _ := inputs["title"].(string)
	instructions, _ := inputs["instructions"].(string)
	onTimeout, _ := inputs["onTimeout"].(string)
	if onTimeout == "" {
		onTimeout = "fail"
	}
	var timeout time.Duration
	if ms, ok := inputs["timeout"].(float64); ok && ms > 0 {
		inputs["timeout"] = fmt.Sprintf("%dms", int64(ms)) // vai writes milliseconds
	}
	if s, _ := inputs["timeout"].(string); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("review timeout %q is not a duration", s), toolspec.ErrInvalidInput, nil)
		}
		timeout = d
	}
	data, err := toValue(inputs["data"])
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("review data: "+err.Error(), toolspec.ErrInvalidInput, nil)
	}
	req := &weftv1.ReviewRequest{Id: gateID, Kind: GateReview, Step: id, Title: title, Instructions: instructions, Data: data, OnTimeout: onTimeout}
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
	if d.Decision == DecisionEdit {
		outData = d.GetData().AsInterface()
	}
	out := map[string]any{"decision": d.Decision, "data": outData, "reviewer": d.Reviewer, "comment": d.Comment,
		"decidedAt": workflow.Now(ctx).UTC().Format(time.RFC3339)}
	if d.Decision == DecisionReject {
		msg := "rejected"
		if d.Reviewer != "" {
			msg += " by " + d.Reviewer
		}
		if d.Comment != "" {
			msg += ": " + d.Comment
		}
		return nil, &reviewRejected{output: out, err: temporal.NewNonRetryableApplicationError(msg, ErrReviewRejected, nil)}
	}
	return out, nil
}

// refreshStatus keeps WeftStatus at awaiting_review while any review is pending.
func (r *run) refreshStatus(ctx workflow.Context) {
	want := StatusRunning
	if len(r.gates) > 0 {
		want = StatusAwaitingReview
	}
	if want != r.status {
		r.setStatus(ctx, want)
	}
}
