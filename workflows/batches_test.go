package workflows_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/weftworks/weft/activities/toolspec"
)

const bigForEach = `{"name":"big","inputs":{"items":{"type":"array","required":true}},"steps":[
  {"id":"each","tool":"chunk","forEach":"{{ inputs.items }}","concurrency":32,"inputs":{"text":"{{ item }}"}}],
  "output":{"count":"{{ each.output.count }}","first":"{{ each.output.results[0].count }}","last":"{{ each.output.results[2499].count }}"}}`

func bigItems(n int) []any {
	items := make([]any, n)
	for i := range items {
		items[i] = fmt.Sprintf("item-%d", i)
	}
	return items
}

// TestLargeForEachRunsInBatches: a forEach over more items than one history holds comfortably
// runs them in batch child workflows, with the same outputs in the same order and the usage of
// every call counted.
func TestLargeForEachRunsInBatches(t *testing.T) {
	h := newHarness(t)
	h.tools.scripts["chunk"] = func(in map[string]any) (any, *toolspec.Usage, error) {
		var n int
		_, _ = fmt.Sscanf(in["text"].(string), "item-%d", &n)
		return map[string]any{"count": n}, &toolspec.Usage{EmbeddingTokens: 1}, nil
	}
	res, err := h.run(t, bigForEach, map[string]any{"items": bigItems(2500)})
	require.NoError(t, err)
	require.JSONEq(t, `{"count":2500,"first":0,"last":2499}`, outputJSON(t, res.Output))
	require.Equal(t, 2500, h.tools.count("chunk"))
	require.EqualValues(t, 2500, res.Usage.EmbeddingTokens)
	require.EqualValues(t, 2500, res.Steps[0].ItemsDone)
}

// TestLargeForEachFailsAtTheFirstFailedItem: one item's non-retryable failure fails the step
// naming the item, as in a small forEach.
func TestLargeForEachFailsAtTheFirstFailedItem(t *testing.T) {
	h := newHarness(t)
	h.tools.scripts["chunk"] = func(in map[string]any) (any, *toolspec.Usage, error) {
		if in["text"] == "item-2100" {
			return nil, nil, temporal.NewNonRetryableApplicationError("cannot split this one", toolspec.ErrInvalidInput, nil)
		}
		return map[string]any{"count": 1}, nil, nil
	}
	_, err := h.run(t, bigForEach, map[string]any{"items": bigItems(2500)})
	require.Error(t, err)
	require.Contains(t, err.Error(), "item 2100")
	require.Contains(t, err.Error(), "cannot split this one")
}
