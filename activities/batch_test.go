package activities_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/internal/testkit/fakeembed"
)

func embedBatch(t *testing.T, cfg activities.Config, claim ...activities.ClaimCheck) (func(context.Context, toolspec.BatchIn) (toolspec.BatchOut, error), *activities.Tools) {
	t.Helper()
	tools := activities.NewTools(cfg)
	h := tools.BatchHandlers()["embed"]
	require.NotNil(t, h, "embed declares Batch and binds a batch handler")
	return activities.BatchActivity(toolspec.Embed.Spec, h, claim...), tools
}

func fakeProvider(t *testing.T) (*fakeembed.Server, activities.Config) {
	t.Helper()
	f, err := fakeembed.Start(0)
	require.NoError(t, err)
	t.Cleanup(f.Close)
	return f, activities.Config{OpenAIBaseURL: f.URL(), OpenAIAPIKey: "k", EmbeddingModel: "text-embedding-3-small"}
}

func texts(n int) []map[string]any {
	items := make([]map[string]any, n)
	for i := range items {
		items[i] = map[string]any{"text": fmt.Sprintf("text number %d", i), "dimensions": 256.0}
	}
	return items
}

// TestEmbedBatchIsOneRequest: a batch's items go to the provider in one request, and each gets
// its own vector, in order, with its share of the usage.
func TestEmbedBatchIsOneRequest(t *testing.T) {
	f, cfg := fakeProvider(t)
	run, _ := embedBatch(t, cfg)
	items := texts(100)
	out, err := run(context.Background(), toolspec.BatchIn{Items: items})
	require.NoError(t, err)
	requests, inputs := f.Counts()
	require.Equal(t, 1, requests)
	require.Equal(t, 100, inputs)
	require.Equal(t, 1, out.Requests)
	require.Len(t, out.Items, 100)
	var shares int64
	for i, it := range out.Items {
		require.Empty(t, it.Error)
		m := asMap(t, it.Output)
		require.Equal(t, items[i]["text"], m["text"], "item %d in its place", i)
		require.Len(t, m["vector"], 256)
		shares += it.Usage.EmbeddingTokens
	}
	require.Positive(t, out.Usage.EmbeddingTokens)
	require.InDelta(t, out.Usage.EmbeddingTokens, shares, 100, "the items' shares add up to the batch's usage (rounded down each)")
}

// TestEmbedBatchIsolatesBadItems: an item the schema refuses, and an item the provider refuses
// (the whole request fails with a 400), each get their own error; every other item its vector.
func TestEmbedBatchIsolatesBadItems(t *testing.T) {
	f, cfg := fakeProvider(t)
	f.MaxInputChars = 100
	run, _ := embedBatch(t, cfg)
	items := texts(10)
	items[2]["text"] = ""                       // invalid: minLength 1
	items[6]["text"] = strings.Repeat("x", 200) // the provider refuses the request holding it
	out, err := run(context.Background(), toolspec.BatchIn{Items: items})
	require.NoError(t, err)
	for i, it := range out.Items {
		switch i {
		case 2:
			require.Equal(t, toolspec.ErrInvalidInput, it.ErrorType)
			require.Contains(t, it.Error, "text")
		case 6:
			require.Equal(t, activities.ErrProviderRejected, it.ErrorType)
			require.Contains(t, it.Error, "maximum context length")
		default:
			require.Empty(t, it.Error, "item %d", i)
			require.Len(t, asMap(t, it.Output)["vector"], 256, "item %d", i)
		}
	}
	requests, _ := f.Counts()
	require.Equal(t, out.Requests, requests)
	require.LessOrEqual(t, requests, 8, "halving isolates one bad item of 9 in about 2·log2(9) requests")
}

// TestEmbedBatchFailsWholeWhenTheProviderIsDown: a 500 is the batch's, retried by Temporal.
func TestEmbedBatchFailsWholeWhenTheProviderIsDown(t *testing.T) {
	f, cfg := fakeProvider(t)
	f.FailWhen(func(int) bool { return true })
	run, _ := embedBatch(t, cfg)
	_, err := run(context.Background(), toolspec.BatchIn{Items: texts(4)})
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae), "%v", err)
	require.Equal(t, activities.ErrProviderUnavailable, ae.Type())
	require.False(t, ae.NonRetryable())
	requests, _ := f.Counts()
	require.Equal(t, 1, requests, "a provider error is not split")
}

// TestEmbedBatchGroupFailsAlone: items that name a model the worker has no provider for (a
// Voyage model without a Voyage key) each get that error as their own; the items of the other
// models get their vectors, in one request, and the usage is theirs alone. Without other models
// the error is the batch's, as before.
func TestEmbedBatchGroupFailsAlone(t *testing.T) {
	tests := []struct {
		name    string
		voyage  []int // items that ask for voyage-3
		n       int
		batchOK bool
	}{
		{name: "one model of two has no provider", voyage: []int{1, 4}, n: 6, batchOK: true},
		{name: "the only model has no provider", voyage: []int{0, 1, 2}, n: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, cfg := fakeProvider(t)
			run, _ := embedBatch(t, cfg)
			items := texts(tt.n)
			for _, i := range tt.voyage {
				items[i]["model"] = "voyage-3"
				delete(items[i], "dimensions")
			}
			out, err := run(context.Background(), toolspec.BatchIn{Items: items})
			if !tt.batchOK {
				var ae *temporal.ApplicationError
				require.True(t, errors.As(err, &ae), "%v", err)
				require.Equal(t, toolspec.ErrMissingConfig, ae.Type())
				require.True(t, ae.NonRetryable())
				return
			}
			require.NoError(t, err)
			var shares int64
			for i, it := range out.Items {
				if slices.Contains(tt.voyage, i) {
					require.Equal(t, toolspec.ErrMissingConfig, it.ErrorType, "item %d", i)
					require.Contains(t, it.Error, "VOYAGE_API_KEY", "item %d", i)
					require.Nil(t, it.Usage, "item %d", i)
					continue
				}
				require.Empty(t, it.Error, "item %d", i)
				require.Len(t, asMap(t, it.Output)["vector"], 256, "item %d", i)
				shares += it.Usage.EmbeddingTokens
			}
			requests, inputs := f.Counts()
			require.Equal(t, 1, requests)
			require.Equal(t, tt.n-len(tt.voyage), inputs)
			require.InDelta(t, out.Usage.EmbeddingTokens, shares, float64(tt.n), "the usage is shared among the items that got vectors")
		})
	}
}

// TestEmbedBatchStoresLargeOutputs: outputs together over StoreAbove are kept in the store and
// the items hold references to them.
func TestEmbedBatchStoresLargeOutputs(t *testing.T) {
	_, cfg := fakeProvider(t)
	cfg.MongoDBURI = storeURI
	tools := activities.NewTools(cfg)
	run := activities.BatchActivity(toolspec.Embed.Spec, tools.BatchHandlers()["embed"], activities.ClaimCheck{Blobs: tools, Above: 256 << 10})
	out, err := run(context.Background(), toolspec.BatchIn{Items: texts(20), StoreAbove: 10 << 10})
	require.NoError(t, err)
	var ids []string
	for i, it := range out.Items {
		ref := asMap(t, it.Output)
		id, ok := ref[toolspec.BlobKey].(string)
		require.True(t, ok, "item %d is a reference: %v", i, ref)
		base, at, found := strings.Cut(id, "@")
		require.True(t, found, "the reference names its element: %s", id)
		require.Equal(t, fmt.Sprint(i), at)
		_, err := tools.GetBlob(context.Background(), id)
		require.Error(t, err, "a reader that does not know item references finds nothing, never the whole list")
		ids = append(ids, base)
		data, err := tools.GetBlob(context.Background(), base)
		require.NoError(t, err)
		var list []map[string]any
		require.NoError(t, json.Unmarshal(data, &list))
		require.Equal(t, fmt.Sprintf("text number %d", i), list[i]["text"])
	}
	require.Len(t, slices.Compact(ids), 1, "one write for the batch")
	small, err := run(context.Background(), toolspec.BatchIn{Items: texts(2), StoreAbove: 1 << 20})
	require.NoError(t, err)
	require.Contains(t, asMap(t, small.Items[0].Output), "vector", "under StoreAbove the outputs stay as they are")
}

// TestPerItemBatch: a replaced handler batches by being called per item, with the same
// per-item errors.
func TestPerItemBatch(t *testing.T) {
	var calls atomic.Int32
	h := activities.PerItemBatch(toolspec.Embed.Spec, func(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
		calls.Add(1)
		if in["text"] == "bad" {
			return nil, nil, &activities.InputError{Msg: "cannot embed bad"}
		}
		return map[string]any{"text": in["text"]}, &toolspec.Usage{EmbeddingTokens: 2}, nil
	}, activities.PerItemConcurrency)
	out, err := activities.BatchActivity(toolspec.Embed.Spec, h)(context.Background(), toolspec.BatchIn{Items: []map[string]any{
		{"text": "a"}, {"text": "bad"}, {"text": ""}, {"text": "d"},
	}})
	require.NoError(t, err)
	require.EqualValues(t, 3, calls.Load(), "the invalid item is not called")
	require.Equal(t, "a", asMap(t, out.Items[0].Output)["text"])
	require.Equal(t, "embed: cannot embed bad", out.Items[1].Error)
	require.Equal(t, toolspec.ErrInvalidInput, out.Items[2].ErrorType)
	require.Equal(t, "d", asMap(t, out.Items[3].Output)["text"])
	require.Equal(t, int64(4), out.Usage.EmbeddingTokens)
}

// asMap reads an item's output, which a batch activity hands on as JSON.
func asMap(t *testing.T, v any) map[string]any {
	t.Helper()
	if m, ok := v.(map[string]any); ok {
		return m
	}
	raw, ok := v.(json.RawMessage)
	require.True(t, ok, "output %T", v)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	return m
}

// TestSimilarityBatch: a batch of similarity items sends both texts of every item in one
// request, and each item's similarity is the one its own call gives; an item the provider
// refuses gets its own error.
func TestSimilarityBatch(t *testing.T) {
	f, cfg := fakeProvider(t)
	f.MaxInputChars = 100
	tools := activities.NewTools(cfg)
	h := tools.BatchHandlers()["similarity"]
	require.NotNil(t, h, "similarity declares Batch and binds a batch handler")
	run := activities.BatchActivity(toolspec.Similarity.Spec, h)
	items := make([]map[string]any, 20)
	for i := range items {
		items[i] = map[string]any{"text1": fmt.Sprintf("query %d", i), "text2": fmt.Sprintf("document %d", i%3)}
	}
	items[11]["text2"] = strings.Repeat("y", 200)
	out, err := run(context.Background(), toolspec.BatchIn{Items: items})
	require.NoError(t, err)
	requests, _ := f.Counts()
	require.Less(t, requests, 12, "one request, then the halves that isolate item 11")
	one := activities.NewTools(cfg).Handlers()["similarity"]
	for i, it := range out.Items {
		if i == 11 {
			require.Contains(t, it.Error, "maximum context length")
			continue
		}
		require.Empty(t, it.Error, "item %d", i)
		res, _, err := one(context.Background(), items[i])
		require.NoError(t, err)
		require.Equal(t, asMap(t, res)["similarity"], asMap(t, it.Output)["similarity"], "item %d: the same as its own call", i)
	}
}
