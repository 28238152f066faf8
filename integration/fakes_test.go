package integration

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/weftworks/weft/activities/toolspec"
)

// fakeSearch stands in for the knowledge store: two hits per collection, one shared by all.
func fakeSearch(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
	coll := fmt.Sprint(in["collection"])
	return map[string]any{"query": in["query"], "results": []any{
		map[string]any{"source": coll + "/guide.md", "content": "about " + fmt.Sprint(in["query"]), "score": 0.9},
		map[string]any{"source": "shared.md", "content": "shared", "score": 0.4},
	}}, &toolspec.Usage{EmbeddingTokens: 5}, nil
}

func fakeRerank(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
	return map[string]any{"query": in["query"], "results": in["documents"]}, nil, nil
}

// activityEvents returns the activity types and summaries scheduled by a run, in history order.
func activityEvents(t *testing.T, c client.Client, id string) (types, summaries []string) {
	it := c.GetWorkflowHistory(context.Background(), id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			types = append(types, a.GetActivityType().GetName())
			var s string
			if p := ev.GetUserMetadata().GetSummary(); p != nil {
				_ = converterFromPayload(p, &s)
			}
			summaries = append(summaries, s)
		}
	}
	return types, summaries
}
