package workflows

import (
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/datatools"
	"github.com/weftworks/weft/workflows/expr"
)

// DefaultConcurrency is how many forEach items run at once when the step does not say.
const DefaultConcurrency = 4

// itemEnv is env plus the per-item names.
func itemEnv(env map[string]any, names map[string]any) map[string]any {
	out := make(map[string]any, len(env)+len(names))
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for k, v := range env {
		out[k] = v
	}
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for k, v := range names {
		out[k] = v
	}
	return out
}

// forEach runs the step once per item of its forEach array, at most concurrency at a time, and
// returns {results, count} in item order. The first item failure fails the step.
func (r *run) forEach(ctx workflow.Context, sr *stepRun) (any, error) {
	v, err := sr.cs.ForEach.Eval(r.env)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("forEach: %v", err), toolspec.ErrInvalidInput, nil)
	}
	items, ok := datatools.Items(v)
	if !ok {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("forEach %s is %s, not an array", sr.cs.Step.ForEach, expr.TypeName(v)), toolspec.ErrInvalidInput, nil)
	}
	limit := sr.cs.Concurrency
	if limit <= 0 {
		limit = DefaultConcurrency
	}
	if r.batchable(ctx, sr, len(items)) {
		return r.forEachBatches(ctx, sr, items, limit)
	}
	results := make([]any, len(items))
	sr.itemsTotal = int32(len(items))
	var firstErr error
	running, finished := 0, 0
	ictx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	for i, item := range items {
		if err := workflow.Await(ctx, func() bool { return running < limit || firstErr != nil }); err != nil {
			break
		}
		if firstErr != nil {
			break
		}
		running++
		env := itemEnv(r.env, map[string]any{"item": item, "index": i})
		workflow.Go(ictx, func(ctx workflow.Context) {
			defer func() { running--; finished++; sr.itemsDone = int32(finished) }()
			out, err := r.execOnce(ctx, sr, env)
			if err != nil {
				if firstErr == nil {
					firstErr = fmt.Errorf("item %d: %w", i, err)
					cancel()
				}
				return
			}
			results[i] = out
		})
	}
	_ = awaitDetached(ctx, func() bool { return running == 0 })
	if firstErr != nil {
		return nil, firstErr
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return map[string]any{"results": results, "count": len(results)}, nil
}
