package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/weftworks/weft/activities/provider"
	"github.com/weftworks/weft/activities/toolspec"
)

// A tool that declares toolspec.Batch has, besides its handler, a batch handler taking many
// items' inputs at once (one provider request for all of them), bound like the handler:
//
//	func init() { bindBatch(toolspec.Embed, (*Tools).embedBatch) }
//
// AdaptBatch gives it the per-item semantics of one activity per item: each item is validated
// and decoded on its own (an invalid item gets its own error and the others go on), and when the
// provider rejects a request because of what one item holds, the request is split in halves
// until the item stands alone, so every other item still gets its output.

// BatchHandler runs one batch: the items' inputs (resolved, not yet validated), one result per
// item out, in order, the batch's total usage and the provider requests it made. An error is
// the whole batch's (the provider is down: retried).
type BatchHandler func(ctx context.Context, items []map[string]any) (results []toolspec.BatchItem, usage *toolspec.Usage, requests int, err error)

type batchBinding struct {
	spec    *toolspec.Spec
	handler func(*Tools) BatchHandler
}

var batchBindings []batchBinding

// bindBatch pairs a batching declaration with its batch handler (AdaptBatch with the handler's
// *Tools). The handler returns one output per input, in order.
func bindBatch[In, Out any](tool toolspec.Tool[In, Out], h func(*Tools, context.Context, []In) ([]Out, *toolspec.Usage, error)) {
	batchBindings = append(batchBindings, batchBinding{spec: tool.Spec, handler: func(t *Tools) BatchHandler {
		return AdaptBatch(tool, func(ctx context.Context, in []In) ([]Out, *toolspec.Usage, error) { return h(t, ctx, in) })
	}})
}

// BatchHandlers returns the batch handler of every batching tool, by tool name.
func (t *Tools) BatchHandlers() map[string]BatchHandler {
	out := make(map[string]BatchHandler, len(batchBindings))
	for _, b := range batchBindings {
		out[b.spec.Name] = b.handler(t)
	}
	return out
}

// AdaptBatch makes a typed batch handler a BatchHandler with per-item validation, isolation of
// rejected items, and usage shared among the items in proportion to their estimated tokens.
func AdaptBatch[In, Out any](tool toolspec.Tool[In, Out], h func(context.Context, []In) ([]Out, *toolspec.Usage, error)) BatchHandler {
	spec := tool.Spec
	return func(ctx context.Context, items []map[string]any) ([]toolspec.BatchItem, *toolspec.Usage, int, error) {
		results := make([]toolspec.BatchItem, len(items))
		ins := make([]In, len(items))
		var valid []int
		for i, raw := range items {
			in, err := decodeItem(tool, raw)
			if err != nil {
				results[i] = itemError(spec, err)
				continue
			}
			ins[i] = in
			valid = append(valid, i)
		}
		b := &batchRun[In, Out]{spec: spec, h: h, items: items, ins: ins, results: results}
		err := b.run(ctx, valid)
		return results, b.usage, b.requests, err
	}
}

type batchRun[In, Out any] struct {
	spec     *toolspec.Spec
	h        func(context.Context, []In) ([]Out, *toolspec.Usage, error)
	items    []map[string]any
	ins      []In
	results  []toolspec.BatchItem
	usage    *toolspec.Usage
	requests int
}

// run calls the handler with the items idx; a rejection caused by an item's content splits the
// call in halves until the item is alone and gets the error as its own.
func (b *batchRun[In, Out]) run(ctx context.Context, idx []int) error {
	if len(idx) == 0 {
		return nil
	}
	in := make([]In, len(idx))
	for n, i := range idx {
		in[n] = b.ins[i]
	}
	rc := &requestCount{}
	outs, usage, err := b.h(context.WithValue(ctx, requestCountKey{}, rc), in)
	if rc.counted {
		b.requests += rc.n
	} else {
		b.requests++ // a handler that does not count its requests: one a call
	}
	b.usage = sumUsage(b.usage, usage)
	var failed itemErrors
	if errors.As(err, &failed) {
		err = nil // some items failed on their own account; the others have outputs
	}
	if err != nil {
		if !itemCaused(err) {
			return err
		}
		if len(idx) == 1 {
			b.results[idx[0]] = itemError(b.spec, err)
			return nil
		}
		half := len(idx) / 2
		if err := b.run(ctx, idx[:half]); err != nil {
			return err
		}
		return b.run(ctx, idx[half:])
	}
	if len(outs) != len(idx) {
		return fmt.Errorf("%s: the batch handler returned %d outputs for %d items", b.spec.Name, len(outs), len(idx))
	}
	tokens, total := make([]int, len(idx)), 0
	for n, i := range idx {
		if failed[n] == nil {
			tokens[n] = b.spec.Batch.ItemTokens(b.items[i])
			total += tokens[n]
		}
	}
	for n, i := range idx {
		if e := failed[n]; e != nil {
			b.results[i] = itemError(b.spec, e)
			continue
		}
		raw, err := json.Marshal(outs[n])
		if err != nil {
			return fmt.Errorf("%s: output is not JSON: %w", b.spec.Name, err)
		}
		// as JSON: the workflow receives plain values, and the activity encodes them only once
		b.results[i] = toolspec.BatchItem{Output: json.RawMessage(raw), Usage: shareOf(usage, tokens[n], total)}
	}
	return nil
}

// itemErrors is a batch handler's error when some of its items failed on their own account
// (a group of items that named a model the worker has no provider for) and the others have
// outputs: the failed items' errors by position in the handler's input. The handler still
// returns one output per input; those of the failed items are not read.
type itemErrors map[int]error

func (e itemErrors) Error() string {
	return fmt.Sprintf("%d of the batch's items failed", len(e))
}

// groupFailed handles a batch handler's failed request for the members of one group of its
// items (one model, say), of groups in all: when the error is the group's own (not retryable,
// not about one item's content) and other groups can go on, the members get it as their own
// error in failed and groupFailed returns nil; otherwise it returns err, the batch's.
func groupFailed(spec *toolspec.Spec, failed *itemErrors, members []int, groups int, err error) error {
	var ae *temporal.ApplicationError
	if groups < 2 || itemCaused(err) || !errors.As(toolError(spec, err), &ae) || !ae.NonRetryable() {
		return err
	}
	if *failed == nil {
		*failed = itemErrors{}
	}
	for _, i := range members {
		(*failed)[i] = err
	}
	return nil
}

// requestCount is the provider requests a batch handler's call made, for handlers that count
// them (countRequests): a call the embedding cache answers makes none.
type requestCount struct {
	n       int
	counted bool
}

type requestCountKey struct{}

// countRequests adds n provider requests to the batch call ctx belongs to (n may be 0: the
// call counts, and made none).
func countRequests(ctx context.Context, n int) {
	if rc, ok := ctx.Value(requestCountKey{}).(*requestCount); ok {
		rc.n += n
		rc.counted = true
	}
}

// decodeItem validates and decodes one item's inputs as the tool's activity would.
func decodeItem[In, Out any](tool toolspec.Tool[In, Out], raw map[string]any) (In, error) {
	var zero In
	if raw == nil {
		raw = map[string]any{}
	}
	raw, _ = tool.Canonical(raw)
	if err := tool.ValidateInputs(raw); err != nil {
		return zero, &InputError{Msg: "invalid inputs: " + validationText(err)}
	}
	in, err := tool.Decode(raw)
	if err != nil {
		return zero, &InputError{Msg: err.Error()}
	}
	return in, nil
}

// itemCaused reports whether an error is about what the items hold (invalid input, a request
// the provider rejected as malformed or too large), so splitting the batch can isolate it.
func itemCaused(err error) bool {
	var ie *InputError
	if errors.As(err, &ie) {
		return true
	}
	var pe *provider.Error
	if errors.As(err, &pe) && !pe.Retryable && pe.Setting == "" {
		return pe.Status == http.StatusBadRequest || pe.Status == http.StatusRequestEntityTooLarge || pe.Status == http.StatusUnprocessableEntity
	}
	return false
}

// itemError is an item's own error as the item's activity would have reported it.
func itemError(spec *toolspec.Spec, err error) toolspec.BatchItem {
	var ae *temporal.ApplicationError
	if errors.As(toolError(spec, err), &ae) {
		return toolspec.BatchItem{Error: ae.Message(), ErrorType: ae.Type()}
	}
	return toolspec.BatchItem{Error: spec.Name + ": " + err.Error(), ErrorType: toolspec.ErrInvalidInput}
}

// shareOf is part tokens/total of u.
func shareOf(u *toolspec.Usage, part, total int) *toolspec.Usage {
	if isZero(u) || total == 0 {
		return nil
	}
	f := float64(part) / float64(total)
	return &toolspec.Usage{
		PromptTokens: int64(float64(u.PromptTokens) * f), CompletionTokens: int64(float64(u.CompletionTokens) * f),
		TotalTokens: int64(float64(u.TotalTokens) * f), EmbeddingTokens: int64(float64(u.EmbeddingTokens) * f),
		CostUSD: u.CostUSD * f, Model: u.Model,
	}
}

// resultLimit is what one activity result may carry: Temporal refuses payloads over 2 MB.
const resultLimit = 1800 << 10

// BatchActivity is the activity that runs a batch of a tool's forEach items
// (spec.BatchActivity()). Outputs over the claim-check threshold are stored one by one as an
// item's activity would; when the outputs together exceed in.StoreAbove, every output is stored
// (one bulk write) and the items' results are references.
func BatchActivity(spec *toolspec.Spec, h BatchHandler, cc ...ClaimCheck) func(ctx context.Context, in toolspec.BatchIn) (toolspec.BatchOut, error) {
	var claim ClaimCheck
	if len(cc) > 0 {
		claim = cc[0]
	}
	run := func(ctx context.Context, in toolspec.BatchIn) (toolspec.BatchOut, error) {
		prior, priorU := priorItems(ctx, len(in.Items)), priorUsage(ctx)
		stop := func() {}
		if !spec.HeartbeatsItself {
			// a retry's keepalive carries on the checkpoint it started from: a worker lost now
			// leaves the next attempt what this one was given
			var details []any
			if prior != nil {
				details = []any{batchCheckpoint{Items: prior}, usageValue(priorU)}
			}
			stop = keepalive(ctx, spec.EffectiveHeartbeat()/3, details...)
		}
		defer stop()
		if claim.Blobs != nil {
			// one reader for all items: items referring to one stored list read it once
			items := make([]any, len(in.Items))
			for i, item := range in.Items {
				items[i] = item
			}
			if toolspec.HoldsBlob(items) {
				if _, err := resolveBlobs(ctx, claim.Blobs, items); err != nil {
					return toolspec.BatchOut{}, err // retryable: the store may be back soon
				}
			}
		}
		ctx, sink := withWarnings(ctx)
		results, usage, requests, err := runUnfinished(ctx, h, in.Items, prior)
		usage = sumUsage(priorU, usage)
		if err != nil {
			stop()
			err = withUsage(ctx, toolError(spec, err), usage)
			recordCheckpoint(ctx, claim, results, usage, err)
			return toolspec.BatchOut{Usage: usage}, err
		}
		out := toolspec.BatchOut{Items: results, Usage: usage, Requests: requests, Attempt: attemptOf(ctx), Warnings: sink.take()}
		for i := range out.Items {
			raw, _ := out.Items[i].Output.(json.RawMessage)
			if !bytes.Contains(raw, []byte(`"warnings"`)) {
				continue
			}
			var m map[string]any
			_ = json.Unmarshal(raw, &m)
			for _, w := range warningsOf(m) {
				if !slices.Contains(out.Warnings, w) {
					out.Warnings = append(out.Warnings, w)
				}
			}
		}
		if err := storeOutputs(ctx, claim, in.StoreAbove, out.Items); err != nil {
			return toolspec.BatchOut{Usage: usage}, withUsage(ctx, temporal.NewApplicationErrorWithOptions(spec.Name+": "+err.Error(), ErrProviderUnavailable,
				temporal.ApplicationErrorOptions{Cause: err}), usage)
		}
		if b, _ := json.Marshal(out); len(b) > resultLimit {
			msg := "set MONGODB_URI on the worker so weft keeps them in the store, or run the step with \"batch\": false"
			if claim.Blobs != nil {
				msg = "run the step with \"batch\": false"
			}
			return toolspec.BatchOut{Usage: usage}, withUsage(ctx, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
				"%s: the outputs of %d items are %.1f MB, more than one activity result carries: %s",
				spec.Name, len(in.Items), float64(len(b))/(1<<20), msg), toolspec.ErrMissingConfig, nil), usage)
		}
		return out, nil
	}
	if claim.Observe == nil {
		return run
	}
	return func(ctx context.Context, in toolspec.BatchIn) (toolspec.BatchOut, error) {
		start := time.Now()
		out, err := run(ctx, in)
		status := "completed"
		if err != nil {
			status = "failed"
		}
		claim.Observe(spec.Name, status, time.Since(start), out.Usage) // metrics count the tool's calls, batched or not
		return out, err
	}
}

// A batch attempt that fails for a passing reason (the provider is down, a replaced handler's
// retryable error) keeps what it finished in its last heartbeat (the SDK sends it with the
// failure): each item's result, the outputs over checkpointInline in the store as references.
// The retry runs only the other items, so a handler's side effects and a provider's bills are not
// repeated for finished items, whether or not the embedding cache would have spared them.
type batchCheckpoint struct {
	Items []toolspec.BatchItem `json:"items"`
}

const (
	// checkpointInline: finished outputs together above this are stored, the checkpoint holds
	// references.
	checkpointInline = 256 << 10
	// checkpointLimit: a checkpoint larger than this (no store to keep the outputs in) is not
	// kept; the retry runs every item again.
	checkpointLimit = 1 << 20
)

// finished reports whether a batch item has its result: an output or its own error.
func finished(it toolspec.BatchItem) bool { return it.Output != nil || it.Error != "" }

// priorItems is the results an earlier attempt of this batch finished (nil when none): one per
// item, those not finished zero.
func priorItems(ctx context.Context, n int) []toolspec.BatchItem {
	if !activity.IsActivity(ctx) || !activity.HasHeartbeatDetails(ctx) {
		return nil
	}
	var cp batchCheckpoint
	if activity.GetHeartbeatDetails(ctx, &cp) != nil || len(cp.Items) != n || !slices.ContainsFunc(cp.Items, finished) {
		return nil
	}
	return cp.Items
}

// runUnfinished runs h on the items prior has no result for and returns every item's result:
// prior's where it has one.
func runUnfinished(ctx context.Context, h BatchHandler, items []map[string]any, prior []toolspec.BatchItem) ([]toolspec.BatchItem, *toolspec.Usage, int, error) {
	if prior == nil {
		return h(ctx, items)
	}
	var todo []int
	for i := range items {
		if !finished(prior[i]) {
			todo = append(todo, i)
		}
	}
	results := slices.Clone(prior)
	if len(todo) == 0 {
		return results, nil, 0, nil
	}
	sub := make([]map[string]any, len(todo))
	for k, i := range todo {
		sub[k] = items[i]
	}
	got, usage, requests, err := h(ctx, sub)
	for k, i := range todo {
		if k < len(got) {
			results[i] = got[k]
		}
	}
	return results, usage, requests, err
}

// recordCheckpoint keeps what a failed attempt finished for its retry (nothing when the failure
// is final or nothing finished). It is the attempt's last heartbeat: keepalive has stopped.
func recordCheckpoint(ctx context.Context, claim ClaimCheck, results []toolspec.BatchItem, usage *toolspec.Usage, err error) {
	var ae *temporal.ApplicationError
	if !activity.IsActivity(ctx) || (errors.As(err, &ae) && ae.NonRetryable()) || !slices.ContainsFunc(results, finished) {
		return
	}
	cp := batchCheckpoint{Items: slices.Clone(results)}
	if storeOutputs(ctx, claim, checkpointInline, cp.Items) != nil {
		return // the retry runs every item again, as without a checkpoint
	}
	if b, err := json.Marshal(cp); err != nil || len(b) > checkpointLimit {
		return
	}
	activity.RecordHeartbeat(ctx, cp, usageValue(usage))
}

// usageValue is u, or no usage.
func usageValue(u *toolspec.Usage) toolspec.Usage {
	if u == nil {
		return toolspec.Usage{}
	}
	return *u
}

// storeOutputs keeps outputs in the store: when together they take more than storeAbove bytes,
// all of them in one stored list, each item's result a reference to its element; otherwise each
// one over the claim-check threshold on its own, as the item's activity would.
func storeOutputs(ctx context.Context, claim ClaimCheck, storeAbove int, items []toolspec.BatchItem) error {
	if claim.Blobs == nil {
		return nil
	}
	datas := make([][]byte, len(items))
	total := 0
	for i, it := range items {
		if it.Error != "" {
			continue
		}
		b, _ := it.Output.(json.RawMessage)
		datas[i] = b
		total += len(b)
	}
	if storeAbove > 0 && total > storeAbove {
		id, err := claim.Blobs.PutBlob(ctx, jsonList(datas))
		if err != nil {
			return fmt.Errorf("storing the outputs of %d items: %w", len(items), err)
		}
		for i, b := range datas {
			if b != nil {
				items[i].Output = itemRef(id, i, b)
			}
		}
		return nil
	}
	for i, b := range datas {
		if b == nil || len(b) <= claim.Above {
			continue
		}
		id, err := claim.Blobs.PutBlob(ctx, b)
		if err != nil {
			return fmt.Errorf("storing the output of an item: %w", err)
		}
		items[i].Output = blobRef(id, b)
	}
	return nil
}

func attemptOf(ctx context.Context) int32 {
	if !activity.IsActivity(ctx) {
		return 1
	}
	return activity.GetInfo(ctx).Attempt
}

// PerItemBatch runs a batch by calling the tool's handler once per item, concurrency at a time
// (in item order when 1). It is the batch
// activity of a tool whose handler a program replaced (worker.Options.Handlers, a Go program's
// own tool), so what runs is the replacement, with the batch's per-item semantics.
func PerItemBatch(spec *toolspec.Spec, h Handler, concurrency int) BatchHandler {
	return func(ctx context.Context, items []map[string]any) ([]toolspec.BatchItem, *toolspec.Usage, int, error) {
		results := make([]toolspec.BatchItem, len(items))
		var (
			mu       sync.Mutex
			usage    *toolspec.Usage
			requests int
			firstErr error
			wg       sync.WaitGroup
		)
		slots := make(chan struct{}, max(1, concurrency))
		for i, raw := range items {
			if raw == nil {
				raw = map[string]any{}
			}
			raw, _ = spec.Canonical(raw)
			if err := spec.ValidateInputs(raw); err != nil {
				results[i] = itemError(spec, &InputError{Msg: "invalid inputs: " + validationText(err)})
				continue
			}
			wg.Add(1)
			slots <- struct{}{}
			go func() {
				defer func() { <-slots; wg.Done() }()
				out, u, err := h(ctx, raw)
				var it toolspec.BatchItem
				var ae *temporal.ApplicationError
				switch {
				case err != nil && (itemCaused(err) || (errors.As(err, &ae) && ae.NonRetryable())):
					it = itemError(spec, err)
				case err == nil:
					var raw []byte
					if raw, err = json.Marshal(out); err != nil {
						err = fmt.Errorf("%s: output is not JSON: %w", spec.Name, err)
					}
					it = toolspec.BatchItem{Output: json.RawMessage(raw), Usage: u}
				}
				mu.Lock()
				defer mu.Unlock()
				usage = sumUsage(usage, u)
				requests++
				if err != nil && it.Error == "" {
					if firstErr == nil {
						firstErr = err
					}
					return
				}
				results[i] = it
			}()
		}
		wg.Wait()
		return results, usage, requests, firstErr
	}
}

// PerItemConcurrency is how many items a worker's PerItemBatch runs at once.
const PerItemConcurrency = 8
