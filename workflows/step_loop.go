package workflows

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/datatools"
	"github.com/weftworks/weft/workflows/dsl"
	"github.com/weftworks/weft/workflows/expr"
)

// MaxLoopIterations is the largest maxIterations a loop may set: the maximum the loop tool's
// declaration gives it (toolspec.LoopIn), read from there.
var MaxLoopIterations = declaredMaximum(toolspec.Loop.Spec, "maxIterations")

// ChangeLoopOverflowFails (workflow.GetVersion): a loop given more items than maxIterations fails
// instead of dropping the rest.
const ChangeLoopOverflowFails = "loop-overflow-fails"

// loop runs the loop tool's nested step per item (bound to the name in "as"), collecting per-item
// errors instead of failing: {iterations, results, errors: [{index, error}]}. More items than
// maxIterations fail the step before any runs.
func (r *run) loop(ctx workflow.Context, sr *stepRun, inputs map[string]any, env map[string]any) (any, error) {
	ns := sr.cs.Nested()
	if ns == nil || ns.Spec == nil {
		return nil, temporal.NewNonRetryableApplicationError("loop: inputs.step is missing or names an unknown tool", toolspec.ErrInvalidInput, nil)
	}
	list, err := storedItems(ctx, inputs["items"])
	if err != nil {
		return nil, err
	}
	items, ok := datatools.Items(list)
	if !ok {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("loop: inputs.items is %s, not an array", expr.TypeName(inputs["items"])), toolspec.ErrInvalidInput, nil)
	}
	set, err := typedInput(sr.cs, inputs, dsl.LoopInput)
	if err != nil {
		return nil, err
	}
	maxIter := set.MaxIterations
	if len(items) > maxIter {
		// Dropping the items beyond the cap gave an output that looked complete and was not: the
		// step fails instead, naming the count and the setting (run.fail adds the step id). Runs
		// started before this change replay as they ran: they kept the first maxIter items.
		if workflow.GetVersion(ctx, ChangeLoopOverflowFails, workflow.DefaultVersion, 1) >= 1 {
			return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("loop: inputs.items has %d items, more than maxIterations (%d); nothing ran: raise inputs.maxIterations (at most %d), or pass fewer items",
				len(items), maxIter, MaxLoopIterations), toolspec.ErrInvalidInput, nil)
		}
		items = items[:maxIter]
	}
	limit := max(set.Concurrency, 1) // one at a time unless the step says
	sr.itemsTotal = int32(len(items))
	if r.loopBatched(ctx, sr) {
		return r.loopProviderBatches(ctx, sr, items, env, limit)
	}
	results := make([]any, len(items))
	errs := make([]any, len(items))
	// Items never fail the loop (their errors are collected), so eachBounded runs them all.
	err = eachBounded(ctx, len(items), limit, func(ctx workflow.Context, i int) error {
		defer func() { sr.itemsDone++ }()
		out, err := r.nested(ctx, sr, itemEnv(env, map[string]any{ns.As: items[i], "index": i}))
		if err != nil {
			errs[i] = map[string]any{"index": i, "error": errorText(err)}
			return nil
		}
		results[i] = out
		return nil
	})
	if err != nil {
		return nil, err
	}
	return loopOutput(results, errs), nil
}

// loopOutput is a loop's output: every item's result in order (nil where it failed) and the
// items' errors in order.
func loopOutput(results, errs []any) map[string]any {
	collected := []any{}
	for _, e := range errs {
		if e != nil {
			collected = append(collected, e)
		}
	}
	return map[string]any{"iterations": len(results), "results": results, "errors": collected}
}

// ChangeLoopProviderBatches marks runs whose loops over a batching tool (embed) send their items
// in provider requests, as a forEach does (step_providerbatch.go); histories recorded before
// replay one activity per item.
const ChangeLoopProviderBatches = "loop-provider-batches"

// loopBatched reports whether the loop of sr groups its items into provider requests: its
// nested tool declares a batch, the step does not say "batch": false, and the run started after
// loops batched and after the tool batched (batchChange).
func (r *run) loopBatched(ctx workflow.Context, sr *stepRun) bool {
	ns := sr.cs.Nested()
	if ns.Spec.Batch == nil || (sr.cs.Step.Batch != nil && !*sr.cs.Step.Batch) {
		return false
	}
	return workflow.GetVersion(ctx, ChangeLoopProviderBatches, workflow.DefaultVersion, 1) >= 1 &&
		workflow.GetVersion(ctx, batchChange(ns.Spec), workflow.DefaultVersion, 1) >= 1
}

// loopProviderBatches runs a loop over a batching tool in provider requests, at most limit in
// flight, with the loop's semantics: every item runs, and an item's error (its inputs, the
// provider refusing it, or its request failing after its retries) is collected, not raised.
// A loop holds at most MaxLoopIterations items, so its batches always run in this history.
func (r *run) loopProviderBatches(ctx workflow.Context, sr *stepRun, items []any, env map[string]any, limit int) (any, error) {
	ns := sr.cs.Nested()
	results := make([]any, len(items))
	errs := make([]any, len(items))
	fail := func(i int, msg string) { errs[i] = map[string]any{"index": i, "error": msg} }
	// The items whose inputs resolve are sent; at[k] is the loop index of the k-th sent.
	var at []int
	var inputs []map[string]any
	var sizes []int
	for i, item := range items {
		in, size, err := r.resolveItem(ctx, ns.Inputs, ns.Spec, sr.cs, itemEnv(env, map[string]any{ns.As: item, "index": i}))
		if err != nil {
			if activityFailed(err) {
				return nil, err // the evaluate activity failed: the store is down, not the item
			}
			fail(i, errorText(err))
			sr.itemsDone++
			continue
		}
		at, inputs, sizes = append(at, i), append(inputs, in), append(sizes, size)
	}
	spans := batchSpans(ns.Spec.Batch, inputs, sizes)
	calls := &providerCalls{
		spec: ns.Spec, policy: sr.cs.Policy, title: sr.cs.Title() + " (" + ns.Tool + ")", step: sr.cs.ID, named: r.namedActivities,
		storeAbove: min(batchStoreCap, forEachOutputBudget/max(1, len(spans))),
		collect:    true,
		started:    func(workflow.Context, int) {},
		finished: func(_ workflow.Context, k int, it toolspec.BatchItem, err error) {
			sr.itemsDone++
			if err != nil {
				fail(at[k], it.Error)
				return
			}
			results[at[k]] = it.Output
		},
		done: func(ctx workflow.Context, out *toolspec.BatchOut, n int) { r.addBatchOut(ctx, sr, out, n) },
	}
	if err := calls.run(ctx, inputs, spans, 0, limit); err != nil {
		return nil, err
	}
	return loopOutput(results, errs), nil
}

// nested runs the loop's per-item step.
func (r *run) nested(ctx workflow.Context, sr *stepRun, env map[string]any) (any, error) {
	ns := sr.cs.Nested()
	inputs, err := r.resolveInputs(ctx, sr.cs, ns.Inputs, ns.Spec, env)
	if err != nil {
		return nil, err
	}
	return r.activity(ctx, sr, ns.Tool, ns.Spec, inputs, sr.cs.Title()+" ("+ns.Tool+")", env)
}

// inlineErrorText is the message of an inline data tool's error without its step id: the run's
// failure names the step already (`step "m": ...`).
func inlineErrorText(err error) string {
	var ie *datatools.InputError
	if errors.As(err, &ie) {
		return ie.Msg
	}
	return err.Error()
}

func init() { registerKind(toolspec.KindControl, runMethod((*run).loop)) }
