package dsl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/dsl"
)

// TestMayWait: review steps and agents may wait for a person themselves; no other tool's
// steps do (a child workflow's reviews are its own steps').
func TestMayWait(t *testing.T) {
	for _, s := range toolspec.All() {
		want := s.Kind == toolspec.KindReview || s.Kind == toolspec.KindAgent
		require.Equal(t, want, dsl.MayWait(s), s.Name)
	}
	require.False(t, dsl.MayWait(nil))
}

// TestPlanCountsALoopPerItem: a loop's plan counts its nested step's calls once per item, its
// items known when written out or read from the run's inputs, unknown (per item) otherwise.
func TestPlanCountsALoopPerItem(t *testing.T) {
	def := func(items string) []byte {
		return []byte(`{"name":"l","inputs":{"xs":{"type":"array"},"q":{"type":"string"}},"steps":[{"id":"l","tool":"loop","inputs":{"items":` + items + `,"as":"doc","step":{"tool":"embed","inputs":{"text":"{{ doc }}"}}}}]}`)
	}
	tests := []struct {
		name, items string
		inputs      map[string]any
		n           int // items known; 0: not
		embed       int
	}{
		{"written out", `["a","b","c"]`, nil, 3, 3},
		{"from the inputs", `"{{ inputs.xs }}"`, map[string]any{"xs": []any{"a", "b"}}, 2, 2},
		{"known when it runs", `"{{ inputs.xs }}"`, nil, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := dsl.Load("l.json", def(tt.items))
			require.NoError(t, err)
			p := dsl.NewPlan(w, tt.inputs, nil)
			require.Len(t, p.Steps, 1)
			if tt.n == 0 {
				require.Nil(t, p.Steps[0].Items)
				require.True(t, p.PerItem)
			} else {
				require.NotNil(t, p.Steps[0].Items)
				require.Equal(t, tt.n, *p.Steps[0].Items)
			}
			require.Equal(t, tt.embed, p.Steps[0].Calls.Embed)
		})
	}
}
