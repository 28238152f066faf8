package workflows

import (
	"encoding/json"
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/events"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
	"github.com/weftworks/weft/workflows/expr"
)

// A forEach over a tool that declares toolspec.Batch (embed) groups its items into calls of the
// tool's batch activity, each within the declared limits (items, estimated tokens) and at most
// batchInputBytes of inputs, instead of one activity per item: 10,000 embeds are ~80 provider
// requests and ~80 activities. The step's concurrency is the number of requests in flight.
// Per item nothing changes: outputs in order, item events, progress, an item's own error
// ("item N: ...") failing the step, usage per item (on item_completed) and in total. A step opts
// out with "batch": false.
const (
	// ChangeProviderBatches marks runs whose forEach steps over a batching tool send their items
	// in batches (histories recorded before replay one activity per item).
	ChangeProviderBatches = "provider-batches"
	// providerBatchInlineItems and providerBatchInlineBytes bound the forEach the run batches in
	// its own history; a larger one runs in batch child workflows (step_batches.go), each of
	// which batches its items the same way.
	providerBatchInlineItems = 50_000
	providerBatchInlineBytes = 8 << 20
	// ChangeProviderBatchChildren marks runs whose batch children of provider requests hold up
	// to providerBatchChildItems items each (runs recorded before: BatchItems). A child of 1,000
	// items had 8 requests of 128 for 16 slots, so half the step's concurrency stood idle and
	// every child's start and end left a gap; one of 8,192 keeps its slots full (64 requests),
	// and its items' references (~120 bytes each) stay well inside what a child hands back.
	ChangeProviderBatchChildren = "provider-batch-children"
	providerBatchChildItems     = 8192
	// forEachOutputBudget is how much of a history a batched forEach's outputs may take: beyond
	// it the batch activities keep the outputs in the store and hand back references.
	forEachOutputBudget = 16 << 20
	// batchStoreCap: one request's outputs over this are kept in the store whatever the budget
	// (an activity result carries at most 2 MB).
	batchStoreCap = 1 << 20
	// batchTimeoutFactor: a batch activity may take this many times the step's per-call timeout
	// (one request, and when an item is refused, the requests that isolate it).
	batchTimeoutFactor = 3
)

// providerBatched reports whether the forEach of sr groups its items into provider requests.
func (r *run) providerBatched(ctx workflow.Context, sr *stepRun) bool {
	cs := sr.cs
	if cs.Spec.Batch == nil || cs.Nested() != nil || (cs.Step.Batch != nil && !*cs.Step.Batch) {
		return false
	}
	return workflow.GetVersion(ctx, batchChange(cs.Spec), workflow.DefaultVersion, 1) >= 1
}

// batchChange is the change (workflow.GetVersion) under which a tool's items go out in batches.
// embed's is ChangeProviderBatches; a tool that declares Batch later has its own, so that a run
// recorded before (which may have batched embeds and called that tool per item in one history)
// replays as it ran.
func batchChange(spec *toolspec.Spec) string {
	if spec == toolspec.Embed.Spec {
		return ChangeProviderBatches
	}
	return ChangeProviderBatches + "/" + spec.Name
}

// resolveItems renders the step's inputs for every item, with each item's size in bytes.
func (r *run) resolveItems(ctx workflow.Context, sr *stepRun, items []any) (inputs []map[string]any, sizes []int, total int, err error) {
	inputs = make([]map[string]any, len(items))
	sizes = make([]int, len(items))
	for i, item := range items {
		in, size, err := r.resolveItem(ctx, sr.cs.InputValue, sr.cs.Spec, sr.cs, itemEnv(r.env, map[string]any{"item": item, "index": i}))
		if err != nil {
			return nil, nil, 0, fmt.Errorf("item %d: %w", i, err)
		}
		inputs[i], sizes[i] = in, size
		total += size
	}
	return inputs, sizes, total, nil
}

// resolveItem renders one item's inputs and measures them in bytes.
func (r *run) resolveItem(ctx workflow.Context, val *expr.Value, spec *toolspec.Spec, cs *dsl.CompiledStep, env map[string]any) (map[string]any, int, error) {
	in, err := r.resolveInputs(ctx, cs, val, spec, env)
	if err != nil {
		return nil, 0, err
	}
	b, _ := json.Marshal(in)
	return in, len(b), nil
}

// forEachProviderBatches runs a batched forEach: in this run's history when it is small enough,
// in batch child workflows otherwise.
func (r *run) forEachProviderBatches(ctx workflow.Context, sr *stepRun, items []any, limit int) (any, error) {
	inputs, sizes, total, err := r.resolveItems(ctx, sr, items)
	if err != nil {
		return nil, err
	}
	if len(items) > providerBatchInlineItems || total > providerBatchInlineBytes {
		layout := int(workflow.GetVersion(ctx, ChangeForEachBatches, workflow.DefaultVersion, ForEachBatchLayout))
		most := BatchItems
		if workflow.GetVersion(ctx, ChangeProviderBatchChildren, workflow.DefaultVersion, 1) >= 1 {
			most = providerBatchChildItems
		}
		return r.runBatches(ctx, sr, inputs, sizes, total, limit, layout, most, true)
	}
	results := make([]any, len(items))
	sr.itemsTotal = int32(len(items))
	finished := 0
	spans := batchSpans(sr.cs.Spec.Batch, inputs, sizes)
	calls := &providerCalls{
		spec: sr.cs.Spec, policy: sr.cs.Policy, title: sr.cs.Title(), step: sr.cs.ID, named: r.namedActivities,
		storeAbove: min(batchStoreCap, forEachOutputBudget/max(1, len(spans))),
		started:    func(ctx workflow.Context, i int) { r.recordItem(ctx, sr, i, events.ItemStarted, nil) },
		finished: func(ctx workflow.Context, i int, it toolspec.BatchItem, err error) {
			if err != nil {
				r.recordItem(ctx, sr, i, events.ItemFailed, err)
				return
			}
			results[i] = it.Output
			r.record(ctx, events.Event{Type: events.ItemCompleted, Step: sr.cs.ID, Key: itemKey(sr.cs.ID, i), Item: &i, Usage: tokenUsage(it.Usage, 0)})
		},
		done: func(ctx workflow.Context, out *toolspec.BatchOut, n int) {
			r.addBatchOut(ctx, sr, out, n)
			finished += n
			sr.itemsDone = int32(finished)
		},
	}
	if err := calls.run(ctx, inputs, spans, 0, limit); err != nil {
		return nil, err
	}
	return map[string]any{"results": results, "count": len(results)}, nil
}

// addBatchOut adds one batch request of n items to the step run in this history: its attempts
// (the most tries one request took, as one activity per item counts them), usage, requests and warnings.
func (r *run) addBatchOut(ctx workflow.Context, sr *stepRun, out *toolspec.BatchOut, n int) {
	sr.attempts = max(sr.attempts, out.Attempt, 1)
	r.addChildUsage(sr, tokenUsage(out.Usage, int64(out.Requests)))
	if out.Usage != nil {
		r.recordUsage(ctx, sr)
	}
	addWarnings(&sr.warnings, out.Warnings)
}

// span is the items [first, first+n) of one batch request.
type span struct{ first, n int }

// batchSpans groups items in order into requests within the tool's limits.
func batchSpans(b *toolspec.Batch, inputs []map[string]any, sizes []int) []span {
	var out []span
	cur, tokens, bytes := span{}, 0, 0
	for i, in := range inputs {
		t := b.ItemTokens(in)
		if cur.n > 0 && (cur.n >= b.MaxItems || tokens+t > b.MaxTokens || bytes+sizes[i] > batchInputBytes) {
			out = append(out, cur)
			cur, tokens, bytes = span{first: i}, 0, 0
		}
		cur.n++
		tokens += t
		bytes += sizes[i]
	}
	if cur.n > 0 {
		out = append(out, cur)
	}
	return out
}

// providerCalls runs batch requests of one tool and reports each item and each request.
type providerCalls struct {
	spec       *toolspec.Spec
	policy     dsl.Policy
	title      string
	step       string
	named      bool
	storeAbove int
	// collect: an item's error (or a failed request's, for each of its items) goes to finished
	// and the other requests go on, as a loop collects its items' errors; otherwise the first
	// one fails the whole.
	collect bool
	// started and finished are told of each item (err is the item's own error, "item N: ...";
	// it.Error its text without the item's number);
	// done of each request with its item count (a failed request: its usage, no items).
	started  func(ctx workflow.Context, i int)
	finished func(ctx workflow.Context, i int, it toolspec.BatchItem, err error)
	done     func(ctx workflow.Context, out *toolspec.BatchOut, n int)
}

// run sends the spans, at most limit requests in flight. Item indexes are first + the item's
// position in inputs. The first failed item (by index within a request) fails the whole: the
// requests in flight are cancelled and no more start, as when one activity runs per item.
func (p *providerCalls) run(ctx workflow.Context, inputs []map[string]any, spans []span, first, limit int) error {
	return eachBounded(ctx, len(spans), limit, func(ctx workflow.Context, si int) error {
		s := spans[si]
		opts := activityOptions(p.policy, p.spec, p.title)
		opts.StartToCloseTimeout *= batchTimeoutFactor
		if p.named {
			opts.ActivityID = fmt.Sprintf("%s[%d-%d]#1", p.step, first+s.first, first+s.first+s.n-1)
		}
		for k := 0; k < s.n; k++ {
			p.started(ctx, first+s.first+k)
		}
		var out toolspec.BatchOut
		in := toolspec.BatchIn{Items: inputs[s.first : s.first+s.n], StoreAbove: p.storeAbove}
		err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), p.spec.BatchActivity(), in).Get(ctx, &out)
		if err != nil {
			if u := failedUsage(err); u != nil {
				p.done(ctx, &toolspec.BatchOut{Usage: u, Requests: 1}, 0)
			}
			werr := temporal.NewNonRetryableApplicationError(fmt.Sprintf("items %d–%d: %s", first+s.first, first+s.first+s.n-1, runwire.ErrorText(err)), runwire.ErrStepFailed, nil)
			for k := 0; k < s.n; k++ {
				p.finished(ctx, first+s.first+k, toolspec.BatchItem{Error: runwire.ErrorText(err)}, werr)
			}
			if p.collect {
				return nil
			}
			if s.n == 1 {
				return temporal.NewNonRetryableApplicationError(fmt.Sprintf("item %d: %s", first+s.first, runwire.ErrorText(err)), runwire.ErrStepFailed, nil)
			}
			return werr
		}
		if len(out.Items) != s.n {
			return temporal.NewNonRetryableApplicationError(fmt.Sprintf("items %d–%d: the batch activity answered %d results for %d items",
				first+s.first, first+s.first+s.n-1, len(out.Items), s.n), runwire.ErrStepFailed, nil)
		}
		var firstErr error
		for k, it := range out.Items {
			i := first + s.first + k
			if it.Error != "" {
				ierr := temporal.NewNonRetryableApplicationError(fmt.Sprintf("item %d: %s", i, it.Error), runwire.ErrStepFailed, nil)
				p.finished(ctx, i, it, ierr)
				if firstErr == nil {
					firstErr = ierr
				}
				continue
			}
			p.finished(ctx, i, it, nil)
		}
		p.done(ctx, &out, s.n)
		if p.collect {
			return nil
		}
		return firstErr
	})
}

// tokenUsage is a tool's usage as the run counts it, with calls requests.
func tokenUsage(u *toolspec.Usage, calls int64) *weftv1.TokenUsage {
	if u == nil {
		if calls == 0 {
			return nil
		}
		return &weftv1.TokenUsage{Calls: calls}
	}
	return &weftv1.TokenUsage{Calls: calls, PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens,
		TotalTokens: u.TotalTokens, EmbeddingTokens: u.EmbeddingTokens, CostUsd: u.CostUSD}
}
