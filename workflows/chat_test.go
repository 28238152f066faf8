package workflows_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/runwire"
)

// TestChatSession: each message is an update that runs an agent turn on the conversation so far;
// after TurnsPerRun turns the session continues as new, carrying the conversation and usage.
func TestChatSession(t *testing.T) {
	h := newHarness(t)
	m := &scriptedModel{answers: []func(map[string]any) map[string]any{
		callTools([3]string{"c1", "search", `{"query":"retries"}`}),
		say("Retries back off."),
		func(in map[string]any) map[string]any {
			msgs := in["messages"].([]any)
			// The second turn sees the first: system, user, assistant(call), tool, assistant, user.
			return say(fmt.Sprintf("you said %d things before", len(msgs)))(in)
		},
	}}
	withModel(h, m)
	replies := map[int]*runwire.ChatReply{}
	send := func(n int, text string) {
		h.env.UpdateWorkflow(runwire.UpdateChatMessage, fmt.Sprint("m", n), &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(err error) { t.Errorf("message %d refused: %v", n, err) },
			OnComplete: func(v any, err error) {
				require.NoError(t, err)
				replies[n] = v.(*runwire.ChatReply)
			},
		}, runwire.ChatMessage{Text: text})
	}
	h.env.RegisterDelayedCallback(func() {
		h.env.UpdateWorkflow(runwire.UpdateChatMessage, "empty", &testsuite.TestUpdateCallback{
			OnAccept: func() { t.Error("an empty message was accepted") }, OnReject: func(error) {}, OnComplete: func(any, error) {},
		}, runwire.ChatMessage{Text: "  "})
		send(1, "how do retries work?")
	}, time.Second)
	h.env.RegisterDelayedCallback(func() { send(2, "and what did I ask?") }, time.Minute)
	h.env.ExecuteWorkflow(runwire.ChatWorkflowType, &runwire.ChatSession{Tools: []string{"search"}, Collection: "docs", TurnsPerRun: 2})
	require.True(t, h.env.IsWorkflowCompleted())
	err := h.env.GetWorkflowError()
	require.True(t, workflow.IsContinueAsNewError(err), "after two turns the session continues as new: %v", err)
	require.Equal(t, "Retries back off.", replies[1].Turn.Answer)
	require.Len(t, replies[1].Turn.ToolCalls, 1)
	require.Equal(t, "you said 6 things before", replies[2].Turn.Answer)
	require.EqualValues(t, 330, replies[1].Turn.Usage.TotalTokens+replies[2].Turn.Usage.TotalTokens)
	require.Equal(t, 1, h.tools.count("search"))
}
