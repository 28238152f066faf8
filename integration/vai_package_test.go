package integration

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/internal/vaipkg/vaipkgtest"
	"github.com/weftworks/weft/starter"
)

// TestRunAnInstalledVaiPackage: a vai package whose workflow gives a tool a field vai ignores
// (template's format) runs on a worker by its package name, not only in a dry run: the worker
// compiles the text the run carries, which says itself that it is vai's (vaipkg.MarkVai).
func TestRunAnInstalledVaiPackage(t *testing.T) {
	t.Setenv("WEFT_PACKAGES_DIR", filepath.Join(t.TempDir(), "packages"))
	dir := vaipkgtest.Dir(t, vaipkgtest.Files{
		"package.json":  `{"name":"vai-workflow-p4","version":"1.0.0","vai":{"workflowVersion":"1.0"}}`,
		"workflow.json": `{"name":"p4","steps":[{"id":"t","tool":"template","inputs":{"text":"hi from p4","format":"md"}}],"output":"{{ t.output.text }}"}`,
	})
	var out, errb bytes.Buffer
	require.Equal(t, 0, starter.Execute([]string{"install", dir}, strings.NewReader(""), &out, &errb), out.String()+errb.String())

	queue := "vai-package"
	startWorker(t, dial(t), queue, nil)
	code, stdout, stderr := weft(t, queue, "run", "vai-workflow-p4")
	require.Equal(t, 0, code, stdout+stderr)
	require.Contains(t, stdout, "hi from p4")
}
