package starter_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunPrintsCompileWarnings: weft run prints the compile's warnings to stderr, as weft
// validate and weft plan do (checked with --dry-run, which needs no server): a vai field that is
// ignored is never ignored silently.
func TestRunPrintsCompileWarnings(t *testing.T) {
	file := filepath.Join(t.TempDir(), "w.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"name":"w","steps":[
		{"id":"p","tool":"http","inputs":{"url":"https://example.com","followRedirects":true}}]}`), 0o644))
	code, out, errOut := weft(t, "", "run", file, "--dry-run")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, `warning: steps[0].inputs.followRedirects: unknown field "followRedirects": http does not take it, so it is ignored`)
	require.NotContains(t, out, "followRedirects", "warnings go to stderr, the plan to stdout")
}
