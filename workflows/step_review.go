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
// optional timeout fires.
func (r *run) review(ctx workflow.Context, sr *stepRun, inputs map[string]any) (any, error) {
	id := sr.cs.ID
	sr.attempts++
	title, _ := inputs["title"].(string)
	instructions, _ := inputs["instructions"].(string)
	onTimeout, _ := inputs["onTimeout"].(string)
	if onTimeout == "" {
		onTimeout = "fail"
	}
	var timeout time.Duration
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
	now := workflow.Now(ctx)
	req := &weftv1.ReviewRequest{Step: id, Title: title, Instructions: instructions, Data: data,
		RequestedAt: timestamppb.New(now), OnTimeout: onTimeout}
	if timeout > 0 {
		req.Deadline = timestamppb.New(now.Add(timeout))
	}
	r.pending[id] = req
	sr.status = StatusAwaitingReview
	r.publish(sr)
	r.refreshStatus(ctx)
	defer func() {
		delete(r.pending, id)
		r.refreshStatus(ctx)
	}()
	decided := func() bool { return r.decisions[id] != nil }
	if timeout > 0 {
		ok, err := workflow.AwaitWithTimeout(ctx, timeout, decided)
		if err != nil {
			return nil, err
		}
		if !ok {
			switch onTimeout {
			case DecisionApprove, DecisionReject:
				r.decisions[id] = &weftv1.ReviewDecision{Step: id, Decision: onTimeout, Reviewer: "timeout", Comment: "no decision within " + timeout.String()}
			default:
				return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("no review decision within %s", timeout), ErrReviewTimeout, nil)
			}
		}
	} else if err := workflow.Await(ctx, decided); err != nil {
		return nil, err
	}
	d := r.decisions[id]
	outData := inputs["data"]
	if d.Decision == DecisionEdit {
		outData = d.GetData().AsInterface()
	}
	out := map[string]any{"decision": d.Decision, "data": outData, "reviewer": d.Reviewer, "comment": d.Comment,
		"decidedAt": workflow.Now(ctx).UTC().Format(time.RFC3339)}
	sr.status = StatusRunning
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
	if len(r.pending) > 0 {
		want = StatusAwaitingReview
	}
	if want != r.status {
		r.setStatus(ctx, want)
	}
}
