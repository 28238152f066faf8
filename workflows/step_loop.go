package workflows

import (
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/datatools"
	"github.com/weftworks/weft/workflows/expr"
)

// DefaultMaxIterations caps a loop that does not set maxIterations.
const DefaultMaxIterations = 100

// loop runs the loop tool's nested step per item (bound to the name in "as"), collecting per-item
// errors instead of failing: {iterations, results, errors: [{index, error}]}.
func (r *run) loop(ctx workflow.Context, sr *stepRun, inputs map[string]any, env map[string]any) (any, error) {
	ns := sr.cs.Nested
	if ns == nil || ns.Spec == nil {
		return nil, temporal.NewNonRetryableApplicationError("loop: inputs.step is missing or names an unknown tool", toolspec.ErrInvalidInput, nil)
	}
	items, ok := datatools.Items(inputs["items"])
	if !ok {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("loop: inputs.items is %s, not an array", expr.TypeName(inputs["items"])), toolspec.ErrInvalidInput, nil)
	}
	maxIter := DefaultMaxIterations
	if f, ok := inputs["maxIterations"].(float64); ok && f >= 1 {
		maxIter = int(f)
	}
	if len(items) > maxIter {
		items = items[:maxIter]
	}
	limit := 1
	if f, ok := inputs["concurrency"].(float64); ok && f >= 1 {
		limit = int(f)
	}
	sr.itemsTotal = int32(len(items))
	results := make([]any, len(items))
	errs := make([]any, len(items))
	running := 0
	for i, item := range items {
		if err := workflow.Await(ctx, func() bool { return running < limit }); err != nil {
			break
		}
		running++
		ienv := itemEnv(env, map[string]any{ns.As: item, "index": i})
		workflow.Go(ctx, func(ctx workflow.Context) {
			defer func() { running--; sr.itemsDone++ }()
			out, err := r.nested(ctx, sr, ienv)
			if err != nil {
				errs[i] = map[string]any{"index": i, "error": errorText(err)}
				return
			}
			results[i] = out
		})
	}
	_ = awaitDetached(ctx, func() bool { return running == 0 })
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	collected := []any{}
	for _, e := range errs {
		if e != nil {
			collected = append(collected, e)
		}
	}
	return map[string]any{"iterations": len(items), "results": results, "errors": collected}, nil
}

// nested runs the loop's per-item step.
func (r *run) nested(ctx workflow.Context, sr *stepRun, env map[string]any) (any, error) {
	ns := sr.cs.Nested
	inputs, err := r.resolveInputs(sr.cs, ns.Inputs, ns.Spec, env)
	if err != nil {
		return nil, err
	}
	return r.activity(ctx, sr, ns.Tool, ns.Spec, inputs, sr.cs.Title()+" ("+ns.Tool+")", env)
}
