package client

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestForkResume: the conversation is cut before the model answer of iteration N+1, the tool
// calls of later iterations are dropped, the message is appended (or replaces the prompt at 0),
// and a handoff made by then says which agent goes on.
func TestForkResume(t *testing.T) {
	out := map[string]any{"iterations": 3.0, "messages": []any{
		map[string]any{"role": "system", "content": "s"},
		map[string]any{"role": "user", "content": "q"},
		map[string]any{"role": "assistant", "toolCalls": []any{}}, // 1
		map[string]any{"role": "tool", "content": "r1"},
		map[string]any{"role": "assistant", "toolCalls": []any{}}, // 2
		map[string]any{"role": "tool", "content": "r2"},
		map[string]any{"role": "assistant", "content": "answer"}, // 3
	}, "toolCalls": []any{map[string]any{"iteration": 1.0, "id": "a"}, map[string]any{"iteration": 2.0, "id": "b"}},
		"handoffs": []any{map[string]any{"iteration": 2.0, "from": "ag", "to": "billing"}}}
	tests := []struct {
		name            string
		o               ForkOptions
		msgs, calls     int
		last, agent, er string
	}{
		{"from the start with an edited prompt", ForkOptions{Iteration: 0, Message: "q2"}, 2, 0, "q2", "", ""},
		{"after iteration 1", ForkOptions{Iteration: 1, Message: "try b"}, 5, 1, "try b", "", ""},
		{"after iteration 2, handed off", ForkOptions{Iteration: 2}, 6, 2, "r2", "billing", ""},
		{"past the end", ForkOptions{Iteration: 4}, 0, 0, "", "", "recorded 3 iterations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := forkResume(out, tt.o, "r1", "ag")
			if tt.er != "" {
				require.ErrorContains(t, err, tt.er)
				return
			}
			require.NoError(t, err)
			msgs := res["messages"].([]any)
			require.Len(t, msgs, tt.msgs)
			require.Equal(t, tt.last, msgs[len(msgs)-1].(map[string]any)["content"])
			require.Len(t, res["toolCalls"], tt.calls)
			require.Equal(t, tt.o.Iteration, res["iteration"])
			if tt.o.Message != "" {
				require.Equal(t, true, res["edited"], "the input guardrails check the fork's message")
			} else {
				require.NotContains(t, res, "edited")
			}
			if tt.agent != "" {
				require.Equal(t, tt.agent, res["agent"])
			} else {
				require.NotContains(t, res, "agent")
			}
		})
	}
}
