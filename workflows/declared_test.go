package workflows_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/toolspec"
)

// withDefault stands for a release that changed the declared default of tool's input field to
// value (the weft tag of its input type), until the test ends.
func withDefault(t *testing.T, tool, field string, value any) {
	t.Helper()
	spec, ok := toolspec.Lookup(tool)
	require.True(t, ok, tool)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(spec.InputJSON()), &doc))
	props, _ := doc["properties"].(map[string]any)
	p, _ := props[field].(map[string]any)
	require.NotNil(t, p, "%s declares %s", tool, field)
	require.Contains(t, p, "default", "%s.%s declares a default", tool, field)
	p["default"] = value
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	t.Cleanup(toolspec.TightenForTest(tool, string(b)))
	require.Equal(t, value, spec.Defaults()[field])
}

// TestKindsReadDefaultsFromDeclarations: the step kinds the interpreter runs itself read the
// settings a step leaves out from their tool's declaration, not from constants of their own:
// a declaration whose default changes changes what runs (a constant that disagreed, or was
// used in its place, fails this test).
func TestKindsReadDefaultsFromDeclarations(t *testing.T) {
	tests := []struct {
		name, tool, field string
		value             any
		def               string
		delay             bool // a review waits: the test environment skips its timer
		want, wantErr     string
	}{
		{name: "loop maxIterations", tool: "loop", field: "maxIterations", value: 2.0,
			def:     `{"name":"l","steps":[{"id":"l","tool":"loop","inputs":{"items":["a","b","c"],"as":"doc","step":{"tool":"embed","inputs":{"text":"{{ doc }}"}}}}]}`,
			wantErr: `inputs.items has 3 items, more than maxIterations (2)`},
		{name: "review onTimeout", tool: "review", field: "onTimeout", value: "approve",
			def:  `{"name":"r","steps":[{"id":"rv","tool":"review","inputs":{"title":"ok?","data":"proposal","timeout":"2h"}}],"output":"{{ rv.output.decision }}"}`,
			want: `"approve"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withDefault(t, tt.tool, tt.field, tt.value)
			h := newHarness(t)
			res, err := h.run(t, tt.def, nil)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, outputJSON(t, res.Output))
		})
	}
}
