package workflows_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// inputsSeen wraps a script step and records the llm activity's input of each call.
type inputsSeen struct {
	mu  sync.Mutex
	ins []map[string]any
}

func (s *inputsSeen) wrap(f func(map[string]any) map[string]any) func(map[string]any) map[string]any {
	return func(in map[string]any) map[string]any {
		s.mu.Lock()
		s.ins = append(s.ins, in)
		s.mu.Unlock()
		return f(in)
	}
}

// TestAgentToolChoice: toolChoice goes with each model call, a tool as the model names it.
func TestAgentToolChoice(t *testing.T) {
	for _, tc := range []struct{ choice, want string }{{"required", "required"}, {"search", "search"}, {"none", "none"}} {
		t.Run(tc.choice, func(t *testing.T) {
			h := newHarness(t)
			seen := &inputsSeen{}
			withModel(h, &scriptedModel{answers: []func(map[string]any) map[string]any{
				seen.wrap(callTools([3]string{"c1", "search", `{"query":"x"}`})),
				seen.wrap(say("done")),
			}})
			def := strings.Replace(agentFlow, `"maxIterations":4`, `"maxIterations":4,"toolChoice":"`+tc.choice+`"`, 1)
			_, err := h.run(t, def, nil)
			require.NoError(t, err)
			require.Len(t, seen.ins, 2)
			for _, in := range seen.ins {
				require.Equal(t, tc.want, in["toolChoice"])
			}
		})
	}
	t.Run("no choice sends none", func(t *testing.T) {
		h := newHarness(t)
		seen := &inputsSeen{}
		withModel(h, &scriptedModel{answers: []func(map[string]any) map[string]any{seen.wrap(say("done"))}})
		_, err := h.run(t, agentFlow, nil)
		require.NoError(t, err)
		require.NotContains(t, seen.ins[0], "toolChoice")
	})
}
