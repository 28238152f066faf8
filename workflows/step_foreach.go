package workflows

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/events"
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
// returns {results, count} in item order. The first item failure fails the step. A review step
// (under ChangeForEachReview) completes when every item is decided, each item's decision its
// result; when it fails, its output still holds the decisions made.
func (r *run) forEach(ctx workflow.Context, sr *stepRun) (any, error) {
	v, err := evalItems(ctx, sr.cs.ForEach, r.env)
	if err != nil {
		if activityFailed(err) {
			return nil, err
		}
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
	if r.providerBatched(ctx, sr) {
		return r.forEachProviderBatches(ctx, sr, items, limit)
	}
	if layout := r.batchLayout(ctx, sr, len(items)); layout > 0 {
		return r.forEachBatches(ctx, sr, items, limit, layout)
	}
	eachDecided := sr.cs.Spec.Kind == toolspec.KindReview &&
		workflow.GetVersion(ctx, ChangeForEachReview, workflow.DefaultVersion, 1) >= 1
	if eachDecided {
		ctx = workflow.WithValue(ctx, eachDecidedKey{}, true)
	}
	results := make([]any, len(items))
	sr.itemsTotal = int32(len(items))
	err = eachBounded(ctx, len(items), limit, func(ctx workflow.Context, i int) error {
		env := itemEnv(r.env, map[string]any{"item": items[i], "index": i})
		r.recordItem(ctx, sr, i, events.ItemStarted, nil)
		out, err := r.execOnce(ctx, sr, env)
		if err != nil {
			r.recordItem(ctx, sr, i, events.ItemFailed, err)
			var rej *reviewRejected
			if errors.As(err, &rej) {
				results[i] = rej.output
			}
			return fmt.Errorf("item %d: %w", i, err)
		}
		results[i] = out
		sr.itemsDone++ // items done are items completed: a failed or cancelled item is not done
		r.recordItem(ctx, sr, i, events.ItemCompleted, nil)
		return nil
	})
	if err != nil {
		if eachDecided {
			// The step failed (a reject with rejectFails, a timeout with onTimeout fail): its
			// output still lists every item, the decisions made and the items left undecided.
			for i, res := range results {
				if res == nil {
					results[i] = map[string]any{"decision": DecisionUndecided, "data": nil}
				}
			}
			return nil, &reviewRejected{output: map[string]any{"results": results, "count": len(results)}, err: err}
		}
		return nil, err
	}
	return map[string]any{"results": results, "count": len(results)}, nil
}

// eachBounded runs fn for 0..n-1, at most limit at a time, in index order. The first error
// cancels the calls in flight and starts no more; eachBounded returns it (or ctx's error) once
// every call has returned.
func eachBounded(ctx workflow.Context, n, limit int, fn func(ctx workflow.Context, i int) error) error {
	var firstErr error
	running := 0
	ictx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	for i := 0; i < n; i++ {
		if err := workflow.Await(ctx, func() bool { return running < limit || firstErr != nil }); err != nil || firstErr != nil {
			break
		}
		running++
		workflow.Go(ictx, func(ctx workflow.Context) {
			defer func() { running-- }()
			if err := fn(ctx, i); err != nil && firstErr == nil {
				firstErr = err
				cancel()
			}
		})
	}
	_ = awaitDetached(ctx, func() bool { return running == 0 })
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
