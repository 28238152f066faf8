package workflows_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/weftworks/weft/runwire"
)

// TestSizeGate: a value over MaxValueBytes that workflow code would put into history (an inline
// data step's output, a tool's inputs, the run's result) fails its step or the run with a
// non-retryable error naming the step, the size, the limit and what to do; on a real server it
// would have failed every workflow task with PayloadsTooLarge forever. Values under it pass.
func TestSizeGate(t *testing.T) {
	doc := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name   string
		def    string
		inputs map[string]any
		err    []string // empty: the run completes
	}{
		{
			name:   "template producing 2.7 MB",
			def:    `{"name":"g","inputs":{"doc":{"type":"string"}},"steps":[{"id":"t","tool":"template","inputs":{"text":"{{ inputs.doc }}{{ inputs.doc }}{{ inputs.doc }}{{ inputs.doc }}"}}],"output":"{{ t.output.text.length }}"}`,
			inputs: map[string]any{"doc": doc(700 << 10)},
			err: []string{`step "t": the template step's output is 2.7 MB of JSON, more than weft puts into a run's history (1.5 MB; Temporal refuses payloads over 2 MB)`,
				"produce it in a tool step"},
		},
		{
			name:   "split of a 1 MB input",
			def:    `{"name":"g","inputs":{"doc":{"type":"string"}},"steps":[{"id":"parts","tool":"template","inputs":{"text":"{{ split(inputs.doc, ',') }}"}}],"output":"{{ parts.output.text.length }}"}`,
			inputs: map[string]any{"doc": strings.Repeat("a,", 512<<10)},
			err:    []string{`step "parts": the template step's output is`, "more than weft puts into a run's history (1.5 MB"},
		},
		{
			name: "two outputs under the limit, together a tool's 2 MB input",
			def: `{"name":"g","inputs":{"doc":{"type":"string"}},"steps":[{"id":"t","tool":"template","inputs":{"text":"{{ inputs.doc }}"}},
			  {"id":"e","tool":"embed","inputs":{"text":"{{ t.output.text }}{{ t.output.text }}"}}]}`,
			inputs: map[string]any{"doc": doc(1 << 20)},
			err:    []string{`step "e": the inputs of embed is 2.0 MB of JSON, more than weft puts into a run's history (1.5 MB`},
		},
		{
			name:   "run output of 1.8 MB",
			def:    `{"name":"g","inputs":{"doc":{"type":"string"}},"steps":[{"id":"t","tool":"template","inputs":{"text":"{{ inputs.doc }}"}}],"output":"{{ t.output.text }}{{ t.output.text }}"}`,
			inputs: map[string]any{"doc": doc(900 << 10)},
			err:    []string{"the run's output is 1.8 MB, more than weft puts into a run's history (1.5 MB", "make the output smaller"},
		},
		{
			name:   "1 MB passes",
			def:    `{"name":"g","inputs":{"doc":{"type":"string"}},"steps":[{"id":"t","tool":"template","inputs":{"text":"{{ inputs.doc }}"}},{"id":"e","tool":"embed","inputs":{"text":"{{ t.output.text }}"}}],"output":"{{ e.output.text.length }}"}`,
			inputs: map[string]any{"doc": doc(1 << 20)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			res, err := h.run(t, tt.def, tt.inputs)
			if len(tt.err) == 0 {
				require.NoError(t, err)
				require.LessOrEqual(t, proto.Size(res), runwire.MaxValueBytes)
				return
			}
			require.Error(t, err)
			for _, want := range tt.err {
				require.Contains(t, err.Error(), want)
			}
		})
	}
}

// TestStateFitsTheLimit: the state query's answer of a run whose step outputs are each under
// OutputCap but together over MaxValueBytes leaves them out (output_truncated) instead of
// failing the query; the pending review is still there.
func TestStateFitsTheLimit(t *testing.T) {
	var steps []string
	for i := range 30 {
		steps = append(steps, fmt.Sprintf(`{"id":"t%d","tool":"template","inputs":{"text":"{{ inputs.doc }}"}}`, i))
	}
	steps = append(steps, `{"id":"ok","tool":"review","dependsOn":["t0"],"inputs":{"title":"Ship it?","data":"small"}}`)
	def := `{"name":"s","inputs":{"doc":{"type":"string"}},"steps":[` + strings.Join(steps, ",") + `]}`
	h := newHarness(t)
	u := newUpdates(t, h)
	h.env.RegisterDelayedCallback(func() {
		st := pendingState(t, h)
		require.LessOrEqual(t, proto.Size(st), runwire.MaxValueBytes)
		require.Len(t, st.PendingReviews, 1)
		require.Equal(t, "small", st.PendingReviews[0].Data.GetStringValue())
		require.True(t, st.Steps[0].OutputTruncated)
		u.accept(`{"step":"ok","decision":"approve"}`)
	}, time.Hour)
	_, err := h.run(t, def, map[string]any{"doc": strings.Repeat("x", 60<<10)})
	require.NoError(t, err)
}
