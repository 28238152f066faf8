package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"

	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/internal/testkit/fakellm"
	"github.com/weftworks/weft/workflows"
)

// TestChatFollowsTheSessionsEvents: weft chat follows a turn with the session's events: it
// announces the approval a tool call waits for from the review_requested event, and reads the
// next events when the session's history grows instead of reading the state every 250 ms, with
// no wait Update of its own in the session's history.
func TestChatFollowsTheSessionsEvents(t *testing.T) {
	c := dial(t)
	queue := "chat-events"
	fake := fakellm.New(
		fakellm.ToolCall("c1", "similarity", `{"text1":"retries","text2":"backoff"}`),
		fakellm.Text("They are close."),
	)
	defer fake.Close()
	startWorkerWithConfig(t, queue, activities.Config{OpenAIBaseURL: fake.BaseURL, ChatModel: "gpt-4o-mini"}, nil)
	wc := weftclient.New(c, queue)
	id := "chat-events-1"

	approved := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for ctx.Err() == nil {
			if st, err := wc.State(ctx, id); err == nil && len(st.PendingReviews) > 0 {
				_, err := wc.Review(ctx, id, weftclient.Decision{ID: st.PendingReviews[0].Id, Decision: "approve", Reviewer: "ana"})
				approved <- err
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
		approved <- ctx.Err()
	}()
	code, out, errOut := weftIn(t, queue, "are retries and backoff close?\n/exit\n", "chat", "--session", id, "--tools", "similarity", "--approve", "similarity")
	require.Equal(t, 0, code, out+errOut)
	require.NoError(t, <-approved)
	require.Contains(t, out, "⏸ chat wants to call similarity with")
	require.Contains(t, out, "decide: weft review "+id+" approve|edit|reject --id '")
	require.Contains(t, out, "They are close.")

	waits := 0
	it := c.GetWorkflowHistory(context.Background(), id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		if a := e.GetWorkflowExecutionUpdateAcceptedEventAttributes(); a != nil && a.GetAcceptedRequest().GetInput().GetName() == workflows.UpdateWaitEvents {
			waits++
		}
	}
	require.Zero(t, waits, "weft chat followed the session without writing to its history")
}
