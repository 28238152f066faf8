package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// The tests that start weft (and weft-stack) as processes share one build of each per run of the
// package: every build linked the binary anew (weft 5 s, weft-stack 20 s on 2 busy cores), six
// times for weft and twice for weft-stack. Each test gets the binaries in a folder of its own (a
// hard link), so what it puts beside them stays its own.
var built struct {
	mu   sync.Mutex
	dir  string            // removed by TestMain
	bins map[string]string // cmd name: its one build
}

// builtBinary is the path of the package's one build of ./cmd/NAME, built on first use.
func builtBinary(t *testing.T, name string) string {
	t.Helper()
	built.mu.Lock()
	defer built.mu.Unlock()
	if bin, ok := built.bins[name]; ok {
		return bin
	}
	if dir := os.Getenv("WEFT_TEST_BINARIES"); dir != "" {
		// built beforehand (make flakes: every round runs the same code, whatever the
		// working tree holds meanwhile)
		bin := filepath.Join(dir, name)
		_, err := os.Stat(bin)
		require.NoError(t, err, "WEFT_TEST_BINARIES=%s holds no %s: build ./cmd/%s there, or unset it", dir, name, name)
		if built.bins == nil {
			built.bins = map[string]string{}
		}
		built.bins[name] = bin
		return bin
	}
	if built.dir == "" {
		dir, err := os.MkdirTemp("", "weft-test-bin-")
		require.NoError(t, err)
		built.dir, built.bins = dir, map[string]string{}
	}
	bin := filepath.Join(built.dir, name)
	build := exec.Command("go", "build", "-o", bin, "./cmd/"+name)
	build.Dir = ".."
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building ./cmd/%s: %s", name, out)
	built.bins[name] = bin
	return bin
}

// weftBinary is a copy of the weft binary alone in a folder of the test's (no weft-stack beside it).
func weftBinary(t *testing.T) string {
	t.Helper()
	return copyBuilt(t, t.TempDir(), "weft")
}

// buildWeft is the weft binary with weft-stack next to it, in a folder of the test's, for tests
// that start the stack as processes; it returns weft's path.
func buildWeft(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	copyBuilt(t, dir, "weft-stack")
	return copyBuilt(t, dir, "weft")
}

// copyBuilt hard-links (or, across file systems, copies) the package's build of name into dir.
func copyBuilt(t *testing.T, dir, name string) string {
	t.Helper()
	src, dst := builtBinary(t, name), filepath.Join(dir, name)
	if os.Link(src, dst) == nil {
		return dst
	}
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(dst, data, 0o755))
	return dst
}

// removeBuilt removes the package's builds (TestMain, after the tests).
func removeBuilt() {
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
}
