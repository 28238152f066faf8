package starter_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestValidateCountsInEnglish: weft validate says "1 step" and "1 warning", not "1 steps" or
// "1 warning(s)".
func TestValidateCountsInEnglish(t *testing.T) {
	dir := t.TempDir()
	one := filepath.Join(dir, "one.json")
	require.NoError(t, os.WriteFile(one, []byte(`{"name":"one","steps":[{"id":"a","tool":"template","inputs":{"text":"x"},"concurrency":2}]}`), 0o644))
	code, out, errOut := weft(t, "", "validate", one)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "one.json: valid, 1 step, 1 warning\n")

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"name":"bad","steps":[{"id":"a","tool":"nope"}]}`), 0o644))
	_, out, _ = weft(t, "", "validate", bad)
	require.Contains(t, out, "bad.json: invalid, 1 error, 0 warnings\n")
}
