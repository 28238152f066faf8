package starter_test

import (
	"flag"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/spf13/cobra/doc"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/starter"
)

var updateCLIReference = flag.Bool("update", false, "rewrite docs/cli from the cobra commands")

// TestCLIReference: docs/cli is what cobra's GenMarkdownTree writes for the weft command tree,
// one page per command, so the reference cannot drift from the flags. After changing a command,
// rewrite it with `go test ./starter -run TestCLIReference -update`.
func TestCLIReference(t *testing.T) {
	got := generateCLIReference(t)
	const dir = "../docs/cli"
	if *updateCLIReference {
		require.NoError(t, os.RemoveAll(dir))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for name, text := range got {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
		}
	}
	want := map[string]string{}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err, "docs/cli holds the CLI reference: write it with -update")
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		want[e.Name()] = string(data)
	}
	require.Equal(t, sortedKeys(got), sortedKeys(want),
		"docs/cli's pages are not the commands' (go test ./starter -run TestCLIReference -update)")
	for name, text := range got {
		require.Equal(t, text, want[name],
			"docs/cli/%s is stale: go test ./starter -run TestCLIReference -update", name)
	}
	require.Contains(t, got, "weft.md")
	require.Contains(t, got, "weft_run.md")
}

// generateCLIReference renders the command tree's pages in memory, keyed by file name.
func generateCLIReference(t *testing.T) map[string]string {
	t.Helper()
	// Flag defaults read the environment (TEMPORAL_ADDRESS, the user, the config directory):
	// render them as they are for a user "you" on a machine with nothing else set.
	for _, k := range []string{"TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "MONGODB_URI", "WEFT_DB", "WEFT_DEV_STATE"} {
		t.Setenv(k, "")
	}
	t.Setenv("USER", "you")
	t.Setenv("HOME", "/home/you")
	t.Setenv("XDG_CONFIG_HOME", "/home/you/.config")
	root := starter.NewRootCommand()
	root.DisableAutoGenTag = true
	tmp := t.TempDir()
	require.NoError(t, doc.GenMarkdownTree(root, tmp))
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	out := map[string]string{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(tmp, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = string(data)
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
