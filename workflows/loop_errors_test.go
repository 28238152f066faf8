package workflows_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/runwire"
)

// TestLoopOverMaxIterationsFails: a loop given more items than maxIterations fails the step,
// naming the step, the count and the setting, and runs none of them; it used to drop the rest
// silently (issue 21, item 9).
func TestLoopOverMaxIterationsFails(t *testing.T) {
	declared := int(toolspec.Loop.Defaults()["maxIterations"].(float64)) // the default is the declaration's
	tests := []struct {
		name, inputs string
		err          string
	}{
		{"set", `"items":["a","b","c"],"maxIterations":2`, `step "l": loop: inputs.items has 3 items, more than maxIterations (2); nothing ran: raise inputs.maxIterations (at most 10000), or pass fewer items`},
		{"default", `"items":"{{ inputs.many }}"`, fmt.Sprintf(`inputs.items has %d items, more than maxIterations (%d)`, declared+1, declared)},
	}
	many := make([]any, declared+1)
	for i := range many {
		many[i] = "x"
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			def := `{"name":"l","inputs":{"many":{"type":"array"}},"steps":[{"id":"l","tool":"loop","inputs":{` + tt.inputs + `,"as":"doc","step":{"tool":"embed","inputs":{"text":"{{ doc }}"}}}}]}`
			_, err := h.run(t, def, map[string]any{"many": many})
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.err)
			require.Equal(t, 0, h.tools.count("embed"), "no item runs")
		})
	}
	// At the cap, every item runs.
	h := newHarness(t)
	res, err := h.run(t, `{"name":"l","steps":[{"id":"l","tool":"loop","inputs":{"items":["a","b"],"maxIterations":2,"as":"doc","step":{"tool":"embed","inputs":{"text":"{{ doc }}"}}}}],"output":"{{ l.output.iterations }}"}`, nil)
	require.NoError(t, err)
	require.Equal(t, "2", outputJSON(t, res.Output))
}

// TestInlineToolErrorNamesStepOnce: an inline data tool's failure names its step once (issue 21,
// item 9: `step "m": step "m": ...`).
func TestInlineToolErrorNamesStepOnce(t *testing.T) {
	h := newHarness(t)
	_, err := h.run(t, `{"name":"m","inputs":{"x":{"type":"array"}},"steps":[{"id":"m","tool":"merge","inputs":{"arrays":"{{ inputs.x }}"}}]}`, map[string]any{"x": []any{"nope"}})
	require.Error(t, err)
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae))
	require.Equal(t, runwire.ErrStepFailed, ae.Type())
	require.Contains(t, ae.Error(), `step "m": inputs.arrays[0] is a string, not an array`)
	require.Equal(t, 1, strings.Count(ae.Error(), `step "m"`), ae.Error())
}
