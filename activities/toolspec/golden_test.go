package toolspec_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/toolspec"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestSchemasGolden pins every tool's input and output schema: they are what MCP clients, the
// validator and the console see, so a change to a declaration's Go types shows here as a diff to
// review (go test ./activities/toolspec -run TestSchemasGolden -update rewrites the file).
func TestSchemasGolden(t *testing.T) {
	all := map[string]any{}
	for _, s := range toolspec.All() {
		var in any
		_, err := s.Schema()
		require.NoError(t, err, s.Name)
		require.NoError(t, json.Unmarshal([]byte(s.InputJSON()), &in), s.Name)
		all[s.Name] = map[string]any{"input": in, "output": s.OutputSchema()}
	}
	got, err := json.MarshalIndent(all, "", "  ")
	require.NoError(t, err)
	path := filepath.Join("testdata", "schemas.golden.json")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, append(got, '\n'), 0o644))
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var want map[string]any
	require.NoError(t, json.Unmarshal(data, &want))
	for _, s := range toolspec.All() {
		t.Run(s.Name, func(t *testing.T) {
			w, _ := json.MarshalIndent(want[s.Name], "", "  ")
			g, _ := json.MarshalIndent(all[s.Name], "", "  ")
			require.Equal(t, string(w), string(g), "the schemas of %s changed: review the diff, then run with -update", s.Name)
		})
	}
}
