package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
)

// A forEach's items all live in its run's history, about 3 events an item, and Temporal ends a
// run whose history passes 51,200 events. A forEach over more than BatchThreshold items of an
// activity tool therefore runs its items in batch child workflows (BatchWorkflowType), each with
// a history of its own: the same outputs in the same order, the same first-failure semantics.
const (
	BatchThreshold     = 2000
	BatchItems         = 1000
	batchInputBytes    = 1 << 20    // resolved inputs carried to one batch
	batchResultBytes   = 1800 << 10 // results one batch can hand back (Temporal's limit is 2 MB)
	maxParallelBatches = 4
	// ChangeForEachBatches marks runs that batch large forEach steps (older histories replay
	// without).
	ChangeForEachBatches = "foreach-batches"
	// ForEachBatchLayout is the version of ChangeForEachBatches new runs get. 1: batches of up
	// to BatchItems items, one per 8 of concurrency at a time (at most maxParallelBatches), so
	// the last wave could run fewer batches, and fewer items at once, than the others. 2: one
	// batch at a time per 16 of concurrency (fewer workflows at once, each with more items in
	// flight, costs the server less per item), and as many batches as needed rounded up to a
	// multiple of that, all of the same size, so every wave is full and the step's whole
	// concurrency is used to the end (docs/performance.md has the measurements).
	ForEachBatchLayout = 2
)

// BatchWorkflowType is the registered name of Batch.
const BatchWorkflowType = "weft-foreach-batch"

// BatchRequest is one batch of a large forEach: the tool, the step (for its timeout and retry
// policy) and the items' resolved inputs.
type BatchRequest struct {
	Tool        string           `json:"tool"`
	Step        dsl.Step         `json:"step"`
	Title       string           `json:"title"`
	First       int              `json:"first"` // index of the batch's first item in the forEach
	Inputs      []map[string]any `json:"inputs"`
	Concurrency int              `json:"concurrency"`
	NamedIDs    bool             `json:"namedIds"`
	// Provider: send the items to the tool's batch activity in provider requests
	// (step_providerbatch.go), their outputs together at most OutputBudget bytes of the batch's
	// history (beyond it they are kept in the store).
	Provider     bool `json:"provider,omitempty"`
	OutputBudget int  `json:"outputBudget,omitempty"`
}

// BatchResult is what a batch hands back.
type BatchResult struct {
	Results  []any          `json:"results"`
	Attempts int32          `json:"attempts"`
	Usage    toolspec.Usage `json:"usage"`
	Calls    int64          `json:"calls"`
	Warnings []string       `json:"warnings,omitempty"`
}

// batchLayout returns the batch layout version a forEach over n items runs with (0: no batches).
func (r *run) batchLayout(ctx workflow.Context, sr *stepRun, n int) int {
	cs := sr.cs
	if n <= BatchThreshold || cs.Spec.Kind != toolspec.KindActivity || cs.Spec.ModelCall || cs.Nested() != nil {
		return 0
	}
	return int(workflow.GetVersion(ctx, ChangeForEachBatches, workflow.DefaultVersion, ForEachBatchLayout))
}

// batchSizes says how many batches run at once and how many items a batch holds (at most most),
// for n items whose resolved inputs take total bytes, with the step's concurrency limit.
func batchSizes(layout, n, total, limit, most int) (parallel, per int) {
	if layout < 2 {
		parallel = min(maxParallelBatches, max(1, limit/8))
		return parallel, min(most, (n+parallel-1)/parallel)
	}
	parallel = min(maxParallelBatches, max(1, limit/16))
	batches := max((n+most-1)/most, (total+batchInputBytes-1)/batchInputBytes)
	batches = (batches + parallel - 1) / parallel * parallel
	return parallel, (n + batches - 1) / batches
}

// forEachBatches resolves every item's inputs here, sends them in batches to child workflows, at
// most maxParallelBatches at a time with the step's concurrency shared among them, and puts the
// results back in item order.
func (r *run) forEachBatches(ctx workflow.Context, sr *stepRun, items []any, limit, layout int) (any, error) {
	inputs, sizes, total, err := r.resolveItems(ctx, sr, items)
	if err != nil {
		return nil, err
	}
	return r.runBatches(ctx, sr, inputs, sizes, total, limit, layout, BatchItems, false)
}

// runBatches runs resolved items in batch child workflows of at most most items each; with
// provider each child sends its items to the tool's batch activity in provider requests
// (step_providerbatch.go).
func (r *run) runBatches(ctx workflow.Context, sr *stepRun, inputs []map[string]any, sizes []int, total, limit, layout, most int, provider bool) (any, error) {
	items := inputs
	parallel, per := batchSizes(layout, len(items), total, limit, most)
	var batches []BatchRequest
	cur := BatchRequest{Tool: sr.cs.Tool, Step: *sr.cs.Step, Title: sr.cs.Title(), NamedIDs: r.namedActivities}
	size := 0
	for i, in := range inputs {
		if len(cur.Inputs) > 0 && (len(cur.Inputs) >= per || size+sizes[i] > batchInputBytes) {
			batches = append(batches, cur)
			cur = BatchRequest{Tool: cur.Tool, Step: cur.Step, Title: cur.Title, NamedIDs: cur.NamedIDs, First: i}
			size = 0
		}
		cur.Inputs = append(cur.Inputs, in)
		size += sizes[i]
	}
	batches = append(batches, cur)
	parallel = min(parallel, len(batches))
	for i := range batches {
		batches[i].Concurrency = max(1, (limit+parallel-1)/parallel)
		if provider {
			batches[i].Provider = true
			batches[i].OutputBudget = min(batchResultBytes, forEachOutputBudget/len(batches))
		}
	}

	results := make([]any, len(items))
	sr.itemsTotal = int32(len(items))
	finished := 0
	parent := workflow.GetInfo(ctx).WorkflowExecution.ID
	err := eachBounded(ctx, len(batches), parallel, func(ctx workflow.Context, bi int) error {
		req := batches[bi]
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID:          fmt.Sprintf("%s/%s-batch-%d", parent, sr.cs.ID, bi),
			ParentClosePolicy:   enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
			WaitForCancellation: true,
			StaticSummary:       fmt.Sprintf("%s: items %d–%d", sr.cs.Title(), req.First, req.First+len(req.Inputs)-1),
		})
		var res BatchResult
		if err := workflow.ExecuteChildWorkflow(cctx, BatchWorkflowType, req).Get(ctx, &res); err != nil {
			if bu := failedBatchUsage(err); bu != nil {
				r.addChildUsage(sr, tokenUsage(&bu.Usage, bu.Calls))
			}
			return batchError(err)
		}
		copy(results[req.First:], res.Results)
		sr.attempts = max(sr.attempts, res.Attempts)
		r.addChildUsage(sr, tokenUsage(&res.Usage, res.Calls))
		addWarnings(&sr.warnings, res.Warnings)
		finished += len(req.Inputs)
		sr.itemsDone = int32(finished)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"results": results, "count": len(results)}, nil
}

// batchError unwraps a failed batch to the item's own error ("item 1234: ...").
func batchError(err error) error {
	var app *temporal.ApplicationError
	if errors.As(err, &app) && strings.HasPrefix(app.Error(), "item ") {
		if app.NonRetryable() {
			return temporal.NewNonRetryableApplicationError(app.Error(), app.Type(), nil)
		}
		return temporal.NewApplicationError(app.Error(), app.Type())
	}
	return err
}

// Batch runs one batch of a large forEach: each item's activity, at most Concurrency at a time.
// The first failure fails the batch with "item N: the error".
func Batch(ctx workflow.Context, req BatchRequest) (*BatchResult, error) {
	spec, ok := toolspec.Lookup(req.Tool)
	if !ok {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("batch: unknown tool %q", req.Tool), toolspec.ErrInvalidInput, nil)
	}
	policy, err := req.Step.Policy()
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("batch: "+err.Error(), toolspec.ErrInvalidInput, nil)
	}
	res := &BatchResult{Results: make([]any, len(req.Inputs))}
	if req.Provider && spec.Batch != nil {
		err = batchProviderCalls(ctx, spec, policy, req, res)
	} else {
		err = batchActivities(ctx, spec, policy, req, res)
	}
	if err != nil {
		// The items that ran were billed although the batch failed: the parent counts them.
		var app *temporal.ApplicationError
		if errors.As(err, &app) && (res.Calls > 0) {
			return nil, temporal.NewApplicationErrorWithOptions(app.Message(), app.Type(), temporal.ApplicationErrorOptions{
				NonRetryable: app.NonRetryable(), Details: []any{BatchUsage{Calls: res.Calls, Usage: res.Usage}}})
		}
		return nil, err
	}
	if b, _ := json.Marshal(res); len(b) > batchResultBytes {
		// More than a workflow result carries: the outputs go to the knowledge store and the
		// batch hands back references, as the claim check does for one large output.
		if err := spill(ctx, req, res); err != nil {
			return nil, err
		}
		if b, _ := json.Marshal(res); len(b) > batchResultBytes {
			return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
				"items %d–%d: even as references their outputs are %.1f MB, more than one batch can hand back: split the list",
				req.First, req.First+len(req.Inputs)-1, float64(len(b))/(1<<20)), toolspec.ErrInvalidInput, nil)
		}
	}
	return res, nil
}

// batchProviderCalls runs a batch's items in provider requests of the tool's batch activity.
func batchProviderCalls(ctx workflow.Context, spec *toolspec.Spec, policy dsl.Policy, req BatchRequest, res *BatchResult) error {
	spans := batchSpans(spec.Batch, req.Inputs, inputSizes(req.Inputs))
	calls := &providerCalls{
		spec: spec, policy: policy, title: req.Title, step: req.Step.ID, named: req.NamedIDs,
		storeAbove: min(batchStoreCap, req.OutputBudget/max(1, len(spans))),
		started:    func(workflow.Context, int) {},
		finished: func(_ workflow.Context, i int, it toolspec.BatchItem, err error) {
			if err == nil {
				res.Results[i-req.First] = it.Output
			}
		},
		done: func(_ workflow.Context, out *toolspec.BatchOut, n int) {
			res.Attempts = max(res.Attempts, out.Attempt, 1)
			res.Calls += int64(out.Requests)
			if out.Usage != nil {
				addToolUsage(&res.Usage, out.Usage)
			}
			addWarnings(&res.Warnings, out.Warnings)
		},
	}
	return calls.run(ctx, req.Inputs, spans, req.First, req.Concurrency)
}

func inputSizes(inputs []map[string]any) []int {
	sizes := make([]int, len(inputs))
	for i, in := range inputs {
		b, _ := json.Marshal(in)
		sizes[i] = len(b)
	}
	return sizes
}

// batchActivities runs a batch's items one activity each.
func batchActivities(ctx workflow.Context, spec *toolspec.Spec, policy dsl.Policy, req BatchRequest, res *BatchResult) error {
	return eachBounded(ctx, len(req.Inputs), req.Concurrency, func(ctx workflow.Context, i int) error {
		opts := activityOptions(policy, spec, req.Title)
		if req.NamedIDs {
			opts.ActivityID = itemKey(req.Step.ID, req.First+i) + "#1"
		}
		var out toolspec.Result
		if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), req.Tool, req.Inputs[i]).Get(ctx, &out); err != nil {
			if u := failedUsage(err); u != nil {
				res.Calls += requestsOf(u)
				addToolUsage(&res.Usage, u)
			}
			return temporal.NewNonRetryableApplicationError(fmt.Sprintf("item %d: %s", req.First+i, runwire.ErrorText(err)), runwire.ErrStepFailed, nil)
		}
		res.Results[i] = out.Output
		res.Attempts = max(res.Attempts, out.Attempt, 1)
		res.Calls += requestsOf(out.Usage)
		if out.Usage != nil {
			addToolUsage(&res.Usage, out.Usage)
		}
		addWarnings(&res.Warnings, out.Warnings)
		return nil
	})
}

// spillGroupBytes is how much output one store call carries.
const spillGroupBytes = 1 << 20

// spill replaces the batch's outputs by references to stored copies, a group of outputs of at
// most spillGroupBytes per store call.
func spill(ctx workflow.Context, req BatchRequest, res *BatchResult) error {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 5, NonRetryableErrorTypes: []string{toolspec.ErrMissingConfig}}})
	for start := 0; start < len(res.Results); {
		end, size := start, 0
		for end < len(res.Results) {
			b, _ := json.Marshal(res.Results[end])
			if end > start && size+len(b) > spillGroupBytes {
				break
			}
			size += len(b)
			end++
		}
		var out struct {
			Refs []any `json:"refs"`
		}
		if err := workflow.ExecuteActivity(actx, toolspec.ActivityBlobsPut, map[string]any{"values": res.Results[start:end]}).Get(ctx, &out); err != nil {
			return fmt.Errorf("items %d–%d: storing their outputs: %w", req.First+start, req.First+end-1, err)
		}
		copy(res.Results[start:end], out.Refs)
		start = end
	}
	return nil
}
