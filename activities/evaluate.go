package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"go.temporal.io/sdk/temporal"

	"github.com/weftworks/weft/activities/toolspec"
)

// Evaluator evaluates jobs against env, whose stored values are already read, and returns one
// value per job. workflows.Evaluate implements it with the interpreter's own template engine; the
// worker passes it in, since this package never imports workflows/. An error means the template
// or step is wrong (its message is the one the interpreter gives): it is not retried.
type Evaluator func(jobs []toolspec.EvalJob, env map[string]any) ([]any, error)

// maxEvalResult bounds what one evaluation hands back into workflow history.
const maxEvalResult = 1 << 20

// maxStoredDepth bounds references inside stored values inside stored values.
const maxStoredDepth = 8

// Evaluate is the ActivityEvaluate activity: it reads the stored values the request's environment
// refers to, evaluates the jobs with ev and keeps large results in the store again, as a tool's
// output is. Stores are keyed by content, so a retried attempt writes the same values.
func Evaluate(ev Evaluator, cc ClaimCheck) func(ctx context.Context, req toolspec.EvalRequest) (toolspec.EvalResult, error) {
	return func(ctx context.Context, req toolspec.EvalRequest) (toolspec.EvalResult, error) {
		env := req.Env
		if env == nil {
			env = map[string]any{}
		}
		if toolspec.HoldsBlob(env) {
			if cc.Blobs == nil {
				return toolspec.EvalResult{}, temporal.NewNonRetryableApplicationError(
					"a template reads a value kept in the knowledge store, and this worker has no store to read it from (set MONGODB_URI on the worker)",
					toolspec.ErrMissingConfig, nil)
			}
			if _, err := resolveBlobs(ctx, cc.Blobs, env); err != nil { // in place, one read per value
				return toolspec.EvalResult{}, err // retryable: the store may be back soon
			}
		}
		values, err := ev(req.Jobs, env)
		if err != nil {
			return toolspec.EvalResult{}, temporal.NewNonRetryableApplicationError(err.Error(), toolspec.ErrInvalidInput, nil)
		}
		if len(values) != len(req.Jobs) {
			return toolspec.EvalResult{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("internal: %d values for %d evaluations", len(values), len(req.Jobs)), toolspec.ErrInvalidInput, nil)
		}
		if cc.Blobs != nil {
			if values, err = storeResults(ctx, cc.Blobs, cc.Above, req.Jobs, values); err != nil {
				return toolspec.EvalResult{}, temporal.NewApplicationErrorWithOptions(err.Error(), ErrProviderUnavailable, temporal.ApplicationErrorOptions{Cause: err})
			}
		}
		return toolspec.EvalResult{Values: values}, nil
	}
}

// storedReader replaces references by the values they stand for, references inside those
// included, reading each stored value once.
type storedReader struct {
	blobs Blobs
	read  map[string]any
}

func (r *storedReader) resolve(ctx context.Context, v any, depth int) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x[BlobKey].(string); ok {
			id, item, isItem := splitItemRef(ref)
			out, err := r.value(ctx, id, depth)
			if err != nil {
				return nil, err
			}
			if isItem {
				// one output of a batch whose outputs were stored together (batch.go)
				list, _ := out.([]any)
				if item >= len(list) {
					return nil, fmt.Errorf("stored value %s has no item %d", id, item)
				}
				return list[item], nil
			}
			return out, nil
		}
		for k, e := range x {
			out, err := r.resolve(ctx, e, depth)
			if err != nil {
				return nil, err
			}
			x[k] = out
		}
	case []any:
		for i, e := range x {
			out, err := r.resolve(ctx, e, depth)
			if err != nil {
				return nil, err
			}
			x[i] = out
		}
	}
	return v, nil
}

// value reads stored value id (once per reader), references inside it resolved.
func (r *storedReader) value(ctx context.Context, id string, depth int) (any, error) {
	if out, ok := r.read[id]; ok {
		return out, nil
	}
	if depth >= maxStoredDepth {
		return nil, fmt.Errorf("stored value %s: references nested more than %d deep", id, maxStoredDepth)
	}
	data, err := r.blobs.GetBlob(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("reading stored value %s: %w", id, err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("stored value %s: %w", id, err)
	}
	if out, err = r.resolve(ctx, out, depth+1); err != nil {
		return nil, err
	}
	r.read[id] = out
	return out, nil
}

// storeResults claim-checks each job's value like a tool's output (a list of items stays a list,
// its large items stored one by one), then stores whole the largest values while together they
// are more than one history event should hold.
func storeResults(ctx context.Context, blobs Blobs, above int, jobs []toolspec.EvalJob, values []any) ([]any, error) {
	sizes := make([]int, len(values))
	total := 0
	for i, v := range values {
		var err error
		switch jobs[i].Kind {
		case toolspec.EvalBool:
		case toolspec.EvalItems:
			v, err = storeItems(ctx, blobs, above, v)
		default:
			v, err = claimCheck(ctx, blobs, above, v)
		}
		if err != nil {
			return nil, err
		}
		values[i] = v
		b, _ := json.Marshal(v)
		sizes[i] = len(b)
		total += len(b)
	}
	order := make([]int, len(values))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return sizes[order[a]] > sizes[order[b]] })
	for _, i := range order {
		if total <= maxEvalResult {
			break
		}
		if k := jobs[i].Kind; k == toolspec.EvalBool || k == toolspec.EvalItems || sizes[i] < 1<<10 {
			continue
		}
		b, _ := json.Marshal(values[i])
		id, err := blobs.PutBlob(ctx, b)
		if err != nil {
			return nil, fmt.Errorf("storing a template's %d KiB value: %w (set MONGODB_URI)", len(b)>>10, err)
		}
		ref := blobRef(id, b)
		rb, _ := json.Marshal(ref)
		total += len(rb) - sizes[i]
		values[i] = ref
	}
	return values, nil
}

// storeItems keeps a list over the threshold as a list of references to its larger items (with
// short previews: a forEach hands them on as its items).
func storeItems(ctx context.Context, blobs Blobs, above int, v any) (any, error) {
	list, ok := v.([]any)
	if !ok {
		return claimCheck(ctx, blobs, above, v)
	}
	data, err := json.Marshal(list)
	if err != nil || len(data) <= above {
		return v, err
	}
	out := make([]any, len(list))
	for i, e := range list {
		b, err := json.Marshal(e)
		if err != nil {
			return nil, err
		}
		if len(b) <= 256 {
			out[i] = e
			continue
		}
		id, err := blobs.PutBlob(ctx, b)
		if err != nil {
			return nil, fmt.Errorf("storing item %d of a %d KiB list: %w (set MONGODB_URI)", i, len(data)>>10, err)
		}
		out[i] = shortBlobRef(id, b)
	}
	return out, nil
}
