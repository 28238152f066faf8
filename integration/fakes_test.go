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

// scriptedLLM is a deterministic model for the agent-replay fixture: it decides from the
// conversation alone (how many tool results it has seen), so any worker gives the same answers.
func scriptedLLM(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
	msgs, _ := in["messages"].([]any)
	tools := 0
	for _, m := range msgs {
		if mm, _ := m.(map[string]any); mm["role"] == "tool" {
			tools++
		}
	}
	call := func(id, name, args string) map[string]any {
		return map[string]any{"text": "", "toolCalls": []any{map[string]any{"id": id, "name": name, "arguments": args}}}
	}
	usage := &toolspec.Usage{PromptTokens: 20, CompletionTokens: 5, TotalTokens: 25}
	if in["tools"] == nil {
		return map[string]any{"text": "recap done", "toolCalls": []any{}}, usage, nil
	}
	switch tools {
	case 0:
		return call("c1", "search", `{"query":"rate limits"}`), usage, nil
	case 1:
		return call("c2", "workflow_agent-child", `{"text":"shout"}`), usage, nil
	case 2:
		return call("c3", "ingest", `{"text":"a note","source":"notes/n.md"}`), usage, nil
	}
	return map[string]any{"text": "final answer", "toolCalls": []any{}}, usage, nil
}

func fakeIngest(se *sideEffects) func(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
	return func(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
		if se != nil {
			se.record("ingest " + fmt.Sprint(in["source"]))
		}
		return map[string]any{"ingested": 1, "source": in["source"]}, nil, nil
	}
}

// chatLLM is a deterministic model for recorded chat histories: in each turn it searches once,
// then answers naming the turn.
func chatLLM(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
	msgs, _ := in["messages"].([]any)
	users, sinceUser := 0, 0
	for _, m := range msgs {
		switch m.(map[string]any)["role"] {
		case "user":
			users++
			sinceUser = 0
		case "tool":
			sinceUser++
		}
	}
	usage := &toolspec.Usage{PromptTokens: 10, CompletionTokens: 2, TotalTokens: 12}
	if sinceUser == 0 {
		return map[string]any{"text": "", "toolCalls": []any{map[string]any{"id": fmt.Sprintf("t%d", users), "name": "search", "arguments": `{"query":"q"}`}}}, usage, nil
	}
	return map[string]any{"text": fmt.Sprintf("answer %d", users), "toolCalls": []any{}}, usage, nil
}
