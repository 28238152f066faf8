package integration

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWeftDoesNotLinkTheStack: the weft binary leaves Temporal's server, its UI and FerretDB to
// weft-stack, so that commands that do not run them start quickly (docs/performance.md).
func TestWeftDoesNotLinkTheStack(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../cmd/weft").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, pkg := range strings.Fields(string(out)) {
		for _, heavy := range []string{"go.temporal.io/server", "github.com/temporalio/ui-server", "github.com/FerretDB/FerretDB", "github.com/weftworks/weft/devserver", "github.com/weftworks/weft/devdb"} {
			require.False(t, strings.HasPrefix(pkg, heavy), "cmd/weft links %s; only cmd/weft-stack may", pkg)
		}
	}
}

// TestStackCommandsWithoutWeftStack: `weft dev` (server, store) with no weft-stack beside weft
// or on PATH says where to get it; flag errors are still weft's own, before any hand-over.
func TestStackCommandsWithoutWeftStack(t *testing.T) {
	bin := weftBinary(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"dev", "--data-dir", t.TempDir()}, 1, "weft-stack binary, which is neither next to weft nor on PATH: `make build` builds both"},
		{[]string{"server", "--db", "postgres://x@127.0.0.1:1/"}, 1, "weft-stack binary"},
		{[]string{"dev", "--port", "nope"}, 2, `invalid argument "nope" for "--port"`},
		{[]string{"server"}, 2, "--db is required"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cmd := exec.Command(bin, tc.args...)
			cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "%s", out)
			require.Equal(t, tc.code, ee.ExitCode(), "%s", out)
			require.Contains(t, string(out), tc.want)
		})
	}
}
