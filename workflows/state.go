package workflows

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// registerHandlers installs the state query, the review update (with its validator) and the
// review signal.
func (r *run) registerHandlers(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, runwire.QueryState, func() (*weftv1.ExecutionState, error) {
		return r.state(), nil
	}); err != nil {
		return err
	}
	err := workflow.SetUpdateHandlerWithOptions(ctx, runwire.UpdateReview,
		func(ctx workflow.Context, raw converter.RawValue) (*ReviewRecorded, error) {
			g, d, err := r.checkDecision(raw)
			if err != nil {
				return nil, err
			}
			g.decision = d
			r.keepRule(ctx, g, d)
			return recorded(d), nil
		},
		workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, raw converter.RawValue) error {
			_, _, err := r.checkDecision(raw)
			return err
		}})
	if err != nil {
		return err
	}
	ch := workflow.GetSignalChannel(ctx, runwire.SignalReview)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var raw converter.RawValue
			if !ch.Receive(ctx, &raw) {
				return
			}
			g, d, err := r.checkDecision(raw)
			if err != nil {
				// A signal cannot be refused; the sender sees the step still pending in `state`.
				workflow.GetLogger(ctx).Warn("ignored review signal", "error", err)
				continue
			}
			g.decision = d
			r.keepRule(ctx, g, d)
		}
	})
	return nil
}

func decodeDecision(raw converter.RawValue) (*weftv1.ReviewDecision, error) {
	p := raw.Payload()
	if p == nil {
		return nil, errors.New("review decision is empty")
	}
	if string(p.GetMetadata()["encoding"]) == "binary/protobuf" {
		d := &weftv1.ReviewDecision{}
		if err := proto.Unmarshal(p.GetData(), d); err != nil {
			return nil, fmt.Errorf("review decision: %w", err)
		}
		return d, nil
	}
	return runwire.ParseDecision(p.GetData())
}

// checkDecision decodes a decision and finds the pending gate it answers. Errors say what to send.
func (r *run) checkDecision(raw converter.RawValue) (*gate, *weftv1.ReviewDecision, error) {
	d, err := decodeDecision(raw)
	if err != nil {
		return nil, nil, err
	}
	g, err := r.findGate(d)
	if err != nil {
		return nil, nil, err
	}
	if err := g.check(d); err != nil {
		return nil, nil, err
	}
	d.Id, d.Step = g.req.Id, g.req.Step
	return g, d, nil
}

// state answers the state query.
func (r *run) state() *weftv1.ExecutionState {
	st := &weftv1.ExecutionState{
		Workflow:  r.name,
		Status:    r.status,
		StartedAt: timestamppb.New(r.started),
		Usage:     copyUsage(&r.usage),
	}
	if r.failure != nil {
		st.Error = errorText(r.failure) // `step "x": cause`, without the wrapped chain
	}
	for _, stage := range stages(r) {
		st.Plan = append(st.Plan, &weftv1.Stage{Steps: stage})
	}
	for _, sr := range r.order {
		st.Steps = append(st.Steps, r.stepState(sr, true))
		for _, w := range sr.warnings {
			st.Warnings = append(st.Warnings, sr.cs.ID+": "+w)
		}
	}
	for _, g := range r.pendingGates() {
		st.PendingReviews = append(st.PendingReviews, g.req)
	}
	if r.output != nil {
		if v, err := toValue(r.output); err == nil {
			st.Output = v
		}
	}
	fitState(st)
	return st
}

// stages groups steps by dependency depth: the steps of a stage can run at the same time.
func stages(r *run) [][]string {
	depth := map[string]int{}
	var out [][]string
	for _, id := range r.wf.Order {
		d := 0
		for _, dep := range r.steps[id].cs.Deps {
			d = max(d, depth[dep]+1)
		}
		depth[id] = d
		for len(out) <= d {
			out = append(out, nil)
		}
		out[d] = append(out[d], id)
	}
	return out
}

// stepState reports one step; capped limits the output to OutputCap.
func (r *run) stepState(sr *stepRun, capped bool) *weftv1.StepState {
	s := r.stepHead(sr)
	if sr.output != nil {
		if capped && jsonSize(sr.output) > OutputCap {
			s.OutputTruncated = true
		} else if v, err := toValue(sr.output); err == nil {
			s.Output = v
		}
	}
	return s
}

// stepHead is a step's state without its output (which costs its size to convert).
func (r *run) stepHead(sr *stepRun) *weftv1.StepState {
	s := &weftv1.StepState{
		Id: sr.cs.ID, Name: sr.cs.Name, Tool: sr.cs.Tool, Status: sr.status, Attempts: sr.attempts,
		Error: sr.err, Reason: sr.reason, ItemsTotal: sr.itemsTotal, ItemsDone: sr.itemsDone,
		Summary: sr.summary, DependsOn: sr.cs.Deps, ToolCalls: sr.toolCalls, ChildId: sr.childID,
		Warnings: sr.warnings, Iterations: sr.iterations,
	}
	if sr.usage.Calls > 0 {
		s.Usage = copyUsage(&sr.usage)
	}
	if !sr.started.IsZero() {
		s.StartedAt = timestamppb.New(sr.started)
	}
	if !sr.finished.IsZero() {
		s.FinishedAt = timestamppb.New(sr.finished)
		if !sr.started.IsZero() {
			s.DurationMs = sr.finished.Sub(sr.started).Milliseconds()
		}
	}
	return s
}
