package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/events"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows"
)

// embedFlow is a forEach of embed over inputs.xs; batch is "" (the default), "true" or "false".
func embedFlow(batch string, extra string) string {
	b := ""
	if batch != "" {
		b = `"batch":` + batch + `,`
	}
	return `{"name":"f","inputs":{"xs":{"type":"array"}},"steps":[
	  {"id":"each","tool":"embed","forEach":"{{ inputs.xs }}",` + b + extra + `"concurrency":3,"inputs":{"text":"{{ index }}:{{ item }}"}},
	  {"id":"after","tool":"template","dependsOn":["each"],"inputs":{"text":"done"}}
	],"output":"{{ each.output }}"}`
}

// batchOutcome is what people see of a forEach: its output, the step's state and its item events.
type batchOutcome struct {
	runErr   string
	output   string
	step     *weftv1.StepState
	afterRan bool
	items    map[string]int // item event type -> count
}

func runEmbedFlow(t *testing.T, h *harness, flow string, xs []any) batchOutcome {
	t.Helper()
	var o batchOutcome
	res, err := h.run(t, flow, map[string]any{"xs": xs})
	if err != nil {
		o.runErr = err.Error()
	} else {
		o.output = outputJSON(t, res.Output)
	}
	v, err := h.env.QueryWorkflow(runwire.QueryState)
	require.NoError(t, err)
	var state weftv1.ExecutionState
	require.NoError(t, v.Get(&state))
	for _, s := range state.Steps {
		switch s.Id {
		case "each":
			o.step = s
		case "after":
			o.afterRan = s.Status == runwire.StatusCompleted
		}
	}
	o.items = map[string]int{}
	for since := int64(0); ; {
		p := readEvents(t, h, since)
		for _, e := range p.Events {
			if strings.HasPrefix(e.Type, "item_") {
				o.items[e.Type]++
			}
			since = e.Seq
		}
		if len(p.Events) == 0 || since >= p.Last {
			break
		}
	}
	return o
}

// TestBatchedForEachKeepsPerItemSemantics runs the same forEach one activity per item
// ("batch": false) and in provider batches, and requires what people see to be the same:
// outputs in order, the failing item's own error, continueOnError, progress, item events and
// usage. Only the number of activities differs.
func TestBatchedForEachKeepsPerItemSemantics(t *testing.T) {
	xs := func(n int, bad ...int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = fmt.Sprintf("x%d", i)
		}
		for _, b := range bad {
			out[b] = "bad"
		}
		return out
	}
	script := func(in map[string]any) (any, *toolspec.Usage, error) {
		text := fmt.Sprint(in["text"])
		if strings.HasSuffix(text, ":bad") {
			return nil, nil, temporal.NewNonRetryableApplicationError("embed: cannot embed "+text, toolspec.ErrInvalidInput, nil)
		}
		return map[string]any{"text": text, "vector": []any{float64(len(text))}}, &toolspec.Usage{EmbeddingTokens: int64(len(text))}, nil
	}
	for _, tc := range []struct {
		name     string
		extra    string
		xs       []any
		failed   bool // the run fails
		errItem  string
		afterRan bool
	}{
		{name: "all succeed", xs: xs(300), afterRan: true},
		{name: "empty list", xs: []any{}, afterRan: true},
		{name: "one bad item", xs: xs(5, 3), failed: true, errItem: "cannot embed 3:bad"},
		{name: "one bad item, continueOnError", extra: `"continueOnError":true,`, xs: xs(5, 3), errItem: "cannot embed 3:bad", afterRan: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			outcomes := map[string]batchOutcome{}
			for _, batch := range []string{"false", "true"} {
				h := newHarness(t)
				h.tools.scripts["embed"] = script
				outcomes[batch] = runEmbedFlow(t, h, embedFlow(batch, tc.extra), tc.xs)
				if batch == "true" {
					require.Zero(t, h.tools.count("embed"), "a batched forEach calls no per-item activity")
					if len(tc.xs) > 0 {
						require.Equal(t, (len(tc.xs)+127)/128, h.tools.count("embed.batch"), "one request per 128 items")
					}
				} else {
					require.Zero(t, h.tools.count("embed.batch"))
				}
			}
			one, batched := outcomes["false"], outcomes["true"]
			require.Equal(t, tc.failed, batched.runErr != "", "run error: %s", batched.runErr)
			require.Equal(t, one.runErr != "", batched.runErr != "")
			require.Equal(t, one.output, batched.output, "outputs, in order")
			require.Equal(t, tc.afterRan, batched.afterRan)
			require.Equal(t, one.afterRan, batched.afterRan)
			require.Equal(t, one.step.Status, batched.step.Status)
			if tc.errItem != "" {
				require.Contains(t, one.step.Error, tc.errItem)
				require.Contains(t, batched.step.Error, tc.errItem, "the bad item's own error")
				require.Contains(t, batched.step.Error, "item 3", "which item")
				require.Equal(t, 1, batched.items[events.ItemFailed])
			} else {
				require.Equal(t, len(tc.xs), batched.items[events.ItemCompleted])
				require.Equal(t, int32(len(tc.xs)), batched.step.ItemsDone)
				require.Equal(t, one.step.ItemsDone, batched.step.ItemsDone)
				require.Equal(t, one.step.Usage.GetEmbeddingTokens(), batched.step.Usage.GetEmbeddingTokens(), "usage in total")
			}
			require.Equal(t, one.step.ItemsTotal, batched.step.ItemsTotal)
			require.Equal(t, one.items[events.ItemStarted] > 0, batched.items[events.ItemStarted] > 0)
		})
	}
}

// TestBatchedForEachRetriesABatch: a request that fails for a passing reason is retried as a
// whole, and the items' outputs arrive once each.
func TestBatchedForEachRetriesABatch(t *testing.T) {
	h := newHarness(t)
	failed := false
	h.tools.scripts["embed"] = func(in map[string]any) (any, *toolspec.Usage, error) {
		if !failed {
			failed = true
			return nil, nil, errors.New("the provider is down") // retryable: the batch's attempt fails
		}
		return map[string]any{"text": in["text"], "dimensions": 3}, nil, nil
	}
	res, err := h.run(t, embedFlow("", ""), map[string]any{"xs": []any{"a", "b", "c"}})
	require.NoError(t, err)
	require.JSONEq(t, `{"count":3,"results":[{"text":"0:a","dimensions":3},{"text":"1:b","dimensions":3},{"text":"2:c","dimensions":3}]}`, outputJSON(t, res.Output))
	require.Equal(t, 2, h.tools.count("embed.batch"), "one failed attempt, one retry")
}

// TestBatchedForEachLimitsRequests: the step's concurrency is the number of requests in flight,
// and items are grouped by the declared limit (128 items).
func TestBatchedForEachLimitsRequests(t *testing.T) {
	h := newHarness(t)
	flight := countInFlight(h, "embed.batch")
	var sizes, storeAbove []int
	h.env.OnActivity("embed.batch", anyCtx, anyArg).Return(func(ctx context.Context, in toolspec.BatchIn) (toolspec.BatchOut, error) {
		defer flight.returned()
		out := toolspec.BatchOut{Items: make([]toolspec.BatchItem, len(in.Items)), Attempt: 1, Requests: 1}
		for i, it := range in.Items {
			out.Items[i] = toolspec.BatchItem{Output: it["text"]}
		}
		h.tools.mu.Lock()
		sizes = append(sizes, len(in.Items))
		storeAbove = append(storeAbove, in.StoreAbove)
		h.tools.mu.Unlock()
		return out, nil
	})
	xs := make([]any, 600)
	for i := range xs {
		xs[i] = i
	}
	res, err := h.run(t, embedFlow("", ""), map[string]any{"xs": xs})
	require.NoError(t, err)
	require.ElementsMatch(t, []int{128, 128, 128, 128, 88}, sizes)
	for _, sa := range storeAbove {
		require.Positive(t, sa)
		require.LessOrEqual(t, sa, 1<<20, "a request's outputs over 1 MB go to the store, whatever the step's budget: a result carries 2 MB")
	}
	require.Equal(t, 3, flight.max(), "requests in flight at once: the step's concurrency")
	out := res.Output.GetStructValue().AsMap()
	results := out["results"].([]any)
	require.Len(t, results, 600)
	for i, r := range results {
		require.Equal(t, fmt.Sprintf("%d:%d", i, i), r, "item %d in its place", i)
	}
}

// TestBatchedForEachSplitsByTokens: long texts go fewer to a request, within the declared
// token limit.
func TestBatchedForEachSplitsByTokens(t *testing.T) {
	h := newHarness(t)
	long := strings.Repeat("word ", 6000) // 30,000 bytes, ~10k estimated tokens: 9 fit in 100k
	xs := make([]any, 20)
	for i := range xs {
		xs[i] = long
	}
	_, err := h.run(t, embedFlow("", ""), map[string]any{"xs": xs})
	require.NoError(t, err)
	require.Equal(t, 3, h.tools.count("embed.batch"), "20 items of ~10k tokens: 9 + 9 + 2")
}

// TestBatchedLoopCollectsItemErrors runs the same loop over embed one activity per item
// ("batch": false) and in provider batches: a loop collects its items' errors instead of
// failing, and both layouts give the same output (results in order, null where an item failed,
// the errors in order), progress and usage, from 3 requests instead of 300 activities.
func TestBatchedLoopCollectsItemErrors(t *testing.T) {
	xs := make([]any, 300)
	for i := range xs {
		xs[i] = fmt.Sprintf("x%d", i)
	}
	for _, b := range []int{7, 150, 299} {
		xs[b] = "bad"
	}
	flow := func(batch string) string {
		b := ""
		if batch != "" {
			b = `"batch":` + batch + `,`
		}
		return `{"name":"f","inputs":{"xs":{"type":"array"}},"steps":[
		  {"id":"each","tool":"loop",` + b + `"inputs":{"items":"{{ inputs.xs }}","as":"x","concurrency":2,"maxIterations":1000,
		    "step":{"tool":"embed","inputs":{"text":"{{ index }}:{{ x }}"}}}}
		],"output":"{{ each.output }}"}`
	}
	script := func(in map[string]any) (any, *toolspec.Usage, error) {
		text := fmt.Sprint(in["text"])
		if strings.HasSuffix(text, ":bad") {
			return nil, nil, temporal.NewNonRetryableApplicationError("embed: cannot embed "+text, toolspec.ErrInvalidInput, nil)
		}
		return map[string]any{"text": text}, &toolspec.Usage{EmbeddingTokens: int64(len(text))}, nil
	}
	outcomes := map[string]batchOutcome{}
	for _, batch := range []string{"false", ""} {
		h := newHarness(t)
		h.tools.scripts["embed"] = script
		outcomes[batch] = runEmbedFlow(t, h, flow(batch), xs)
		if batch == "" {
			require.Zero(t, h.tools.count("embed"), "a batched loop calls no per-item activity")
			require.Equal(t, 3, h.tools.count("embed.batch"), "one request per 128 items")
		} else {
			require.Equal(t, 300, h.tools.count("embed"))
			require.Zero(t, h.tools.count("embed.batch"))
		}
	}
	one, batched := outcomes["false"], outcomes[""]
	require.Empty(t, batched.runErr, "a loop does not fail on its items' errors")
	require.Equal(t, one.output, batched.output, "results and errors, in order")
	var out struct {
		Iterations int
		Results    []any
		Errors     []struct {
			Index int
			Error string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(batched.output), &out))
	require.Equal(t, 300, out.Iterations)
	require.Len(t, out.Errors, 3)
	for k, i := range []int{7, 150, 299} {
		require.Equal(t, i, out.Errors[k].Index)
		require.Equal(t, fmt.Sprintf("embed: cannot embed %d:bad", i), out.Errors[k].Error, "the item's own error, as the per-item loop gives it")
		require.Nil(t, out.Results[i])
	}
	require.Equal(t, map[string]any{"text": "8:x8"}, out.Results[8])
	require.Equal(t, int32(300), batched.step.ItemsDone)
	require.Equal(t, one.step.ItemsDone, batched.step.ItemsDone)
	require.Equal(t, one.step.Usage.GetEmbeddingTokens(), batched.step.Usage.GetEmbeddingTokens(), "usage in total")
}

// TestBatchedSimilarity: similarity declares Batch too; a forEach over it goes out in requests
// of 64 items (128 texts) and gives what one call per item gives.
func TestBatchedSimilarity(t *testing.T) {
	flow := func(batch string) string {
		return `{"name":"f","inputs":{"xs":{"type":"array"}},"steps":[
		  {"id":"each","tool":"similarity","forEach":"{{ inputs.xs }}","batch":` + batch + `,"inputs":{"text1":"{{ item }}","text2":"q"}}
		],"output":"{{ each.output }}"}`
	}
	xs := make([]any, 150)
	for i := range xs {
		xs[i] = fmt.Sprint("text ", i)
	}
	outputs := map[string]string{}
	for _, batch := range []string{"false", "true"} {
		h := newHarness(t)
		h.tools.scripts["similarity"] = func(in map[string]any) (any, *toolspec.Usage, error) {
			return map[string]any{"similarity": float64(len(fmt.Sprint(in["text1"]))) / 10}, nil, nil
		}
		res, err := h.run(t, flow(batch), map[string]any{"xs": xs})
		require.NoError(t, err)
		outputs[batch] = outputJSON(t, res.Output)
		if batch == "true" {
			require.Equal(t, 3, h.tools.count("similarity.batch"), "64 items a request")
			require.Zero(t, h.tools.count("similarity"))
		}
	}
	require.Equal(t, outputs["false"], outputs["true"])
}

// TestBatchedForEachInChildren: a batched forEach over more items than one history takes runs
// in batch child workflows that send their items in provider requests; since
// ChangeProviderBatchChildren a child holds up to 8,192 items (64 requests of 128, enough to
// keep its share of the step's concurrency busy), and a run recorded before keeps children of
// 1,000. Both give every output in its place and one request per 128 items.
func TestBatchedForEachInChildren(t *testing.T) {
	const n = 60_000
	xs := make([]any, n)
	for i := range xs {
		xs[i] = fmt.Sprintf("x%d", i)
	}
	flow := `{"name":"f","inputs":{"xs":{"type":"array"}},"steps":[
	  {"id":"each","tool":"embed","forEach":"{{ inputs.xs }}","concurrency":32,"inputs":{"text":"{{ item }}"}}],
	  "output":{"count":"{{ each.output.count }}","first":"{{ each.output.results[0].text }}","last":"{{ each.output.results[59999].text }}"}}`
	for _, tc := range []struct {
		name     string
		recorded bool // a run recorded before ChangeProviderBatchChildren
		children int
	}{
		{name: "new run: children of up to 8,192 items", children: 8},
		{name: "run recorded before: children of 1,000", recorded: true, children: 60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.tools.scripts["embed"] = func(in map[string]any) (any, *toolspec.Usage, error) {
				return map[string]any{"text": in["text"]}, &toolspec.Usage{EmbeddingTokens: 1}, nil
			}
			if tc.recorded {
				h.env.OnGetVersion(workflows.ChangeProviderBatchChildren, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
			}
			children := 0
			h.env.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, _ converter.EncodedValues) {
				if info.WorkflowType.Name == workflows.BatchWorkflowType {
					children++
				}
			})
			res, err := h.run(t, flow, map[string]any{"xs": xs})
			require.NoError(t, err)
			require.JSONEq(t, `{"count":60000,"first":"x0","last":"x59999"}`, outputJSON(t, res.Output))
			require.Equal(t, tc.children, children)
			per := n / tc.children
			requests := tc.children * ((per + 127) / 128)
			require.Equal(t, requests, h.tools.count("embed.batch"), "each child's items in requests of 128")
			require.Zero(t, h.tools.count("embed"))
			require.EqualValues(t, n, res.Usage.EmbeddingTokens)
			require.EqualValues(t, n, res.Steps[0].ItemsDone)
		})
	}
}
