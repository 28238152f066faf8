package starter

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	weftclient "github.com/weftworks/weft/client"
)

// TestChatStreamsTheAnswer: weft chat prints the llm_delta events Stream makes of each read of the
// model's text, starts a new line for the agent's next model call and for a retry, and finishes with the rest of the
// answer (or the whole answer when what streamed did not begin it).
func TestChatStreamsTheAnswer(t *testing.T) {
	llm := func(id, text string) []weftclient.PendingActivity {
		return []weftclient.PendingActivity{{ActivityID: id, Type: "llm", Details: text}, {ActivityID: "chat/c1#2", Type: "search"}}
	}
	for _, tc := range []struct {
		name   string
		reads  [][]weftclient.PendingActivity
		answer string
		want   string
	}{
		{"one call", [][]weftclient.PendingActivity{llm("chat#1", "They are"), llm("chat#1", "They are retried")},
			"They are retried with backoff.", "They are retried with backoff.\n"},
		{"nothing streamed", nil, "Noted.", "Noted.\n"},
		{"the next iteration's call", [][]weftclient.PendingActivity{llm("chat#1", "Let me search."), llm("chat#3", "Retries")},
			"Retries back off.", "Let me search.\nRetries back off.\n"},
		{"a retry starts over", [][]weftclient.PendingActivity{llm("chat#1", "Firs"), llm("chat#1", "Second")},
			"Second try.", "Firs\nSecond try.\n"},
		{"an answer that is not what streamed", [][]weftclient.PendingActivity{llm("chat#1", "Draft")},
			"Final.", "Draft\nFinal.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			var p streamPrinter
			var follow weftclient.TextFollower
			for _, r := range tc.reads {
				for _, d := range follow.Next(weftclient.LLMText(r)) {
					p.add(&out, weftclient.Event{Type: weftclient.EventLLMDelta, Activity: d.ActivityID, Attempt: d.Attempt, Offset: d.Offset, Text: d.New})
				}
			}
			p.finish(&out, tc.answer)
			require.Equal(t, tc.want, out.String())
		})
	}
}
