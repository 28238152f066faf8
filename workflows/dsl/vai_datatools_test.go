package dsl_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

// TestVaiDataToolSemantics: a merge or transform step of a file in vai's dialect carries
// dsl.VaiSemantics (the data tool then computes what vai computes), with a warning where weft's
// own dialect would answer otherwise; the same step in a weft file carries nothing and warns of
// nothing.
func TestVaiDataToolSemantics(t *testing.T) {
	tests := []struct {
		name, tool, inputs string
		warning            string // at steps[0].inputs, in vai's dialect; "" for none
	}{
		{"merge dedup alone", "merge", `{"arrays": [[1]], "dedup": true}`,
			"steps[0].inputs.dedup: vai's merge drops duplicates only when dedup_field is set too: this merge keeps every item (in weft's dialect, dedup alone drops duplicate items)"},
		{"merge dedup_field alone", "merge", `{"arrays": [[1]], "dedup_field": "source"}`,
			"steps[0].inputs.dedup_field: vai's merge drops duplicates only when dedup is true too: this merge keeps every item (in weft's dialect, dedup_field alone drops duplicates)"},
		{"merge dedup false, dedup_field", "merge", `{"arrays": [[1]], "dedup": false, "dedup_field": "source"}`,
			"steps[0].inputs.dedup_field: vai's merge drops duplicates only when dedup is true too: this merge keeps every item (in weft's dialect, dedup_field alone drops duplicates)"},
		{"merge both", "merge", `{"arrays": [[1]], "dedup": true, "dedup_field": "source"}`, ""},
		{"merge dedup from an input", "merge", `{"arrays": [[1]], "dedup": "{{ inputs.d }}", "dedup_field": "source"}`, ""},
		{"transform fields and mapping", "transform", `{"array": [1], "fields": ["a"], "mapping": {"b": "c"}}`,
			"steps[0].inputs.mapping: vai's transform uses fields and ignores mapping when both are given: mapping is ignored (in weft's dialect, both apply)"},
		{"transform mapping", "transform", `{"array": [1], "mapping": {"b": "c"}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := fmt.Sprintf(`{"name": "t", "inputs": {"d": {"type": "boolean"}}, "steps": [{"id": "s", "tool": %q, "inputs": %s}]}`, tt.tool, tt.inputs)
			vai, err := dsl.LoadVai("t.json", []byte(file), "")
			require.NoError(t, err)
			cs, _ := vai.Step("s")
			require.Equal(t, true, cs.Lazy[dsl.VaiSemantics])
			var got []string
			for _, d := range vai.Warnings {
				got = append(got, d.Where+": "+d.Message)
			}
			if tt.warning == "" {
				require.Empty(t, got)
			} else {
				require.Equal(t, []string{tt.warning}, got)
			}

			weft, err := dsl.Load("t.weft.json", []byte(file))
			require.NoError(t, err)
			require.Equal(t, dsl.DialectWeft, weft.Dialect)
			cs, _ = weft.Step("s")
			require.NotContains(t, cs.Lazy, dsl.VaiSemantics)
			require.Empty(t, weft.Warnings)
		})
	}
}
