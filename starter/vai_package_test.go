package starter_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/internal/vaipkg/vaipkgtest"
)

// TestVaiPackageReadInVaiDialect: a vai package whose workflow gives a tool a field vai ignores
// (template's format) installs, and its workflow is read as the install read it, in vai's
// dialect, by every command that takes the package's name: run --dry-run, validate, plan, info
// and check.
func TestVaiPackageReadInVaiDialect(t *testing.T) {
	packagesEnv(t)
	dir := vaipkgtest.Dir(t, vaipkgtest.Files{
		"package.json":  `{"name":"vai-workflow-p4","version":"1.0.0","vai":{"workflowVersion":"1.0"}}`,
		"workflow.json": `{"name":"p4","steps":[{"id":"t","tool":"template","inputs":{"text":"hi","format":"md"}}]}`,
	})
	code, out, errOut := weft(t, "", "install", dir)
	require.Equal(t, 0, code, out+errOut)
	for _, args := range [][]string{
		{"run", "vai-workflow-p4", "--dry-run"},
		{"validate", "vai-workflow-p4"},
		{"plan", "vai-workflow-p4"},
		{"info", "vai-workflow-p4"},
		{"check", "vai-workflow-p4"},
	} {
		code, out, errOut := weft(t, "", args...)
		require.Equal(t, 0, code, "%v: %s", args, out+errOut)
	}
	code, out, _ = weft(t, "", "validate", "vai-workflow-p4")
	require.Equal(t, 0, code)
	require.Contains(t, out, "read in vai's dialect: it is the workflow of package vai-workflow-p4")
}
