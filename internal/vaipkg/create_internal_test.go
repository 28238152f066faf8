package vaipkg

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCreateForceRestoresWhatItReplaced: when a rename fails partway through weft create --force,
// the files already replaced get their former content back, the files that did not exist before
// are removed, and nothing of weft's is left in the folder (a temporary file, a backup).
func TestCreateForceRestoresWhatItReplaced(t *testing.T) {
	const workflow = `{"name": "t", "description": "d", "steps": [{"id": "a", "tool": "template", "inputs": {"text": "hi"}}]}`
	names := []string{"README.md", "package.json", DefaultMain} // the order Create renames them in
	for _, tc := range []struct {
		name   string
		failAt int      // the rename that fails (0-based)
		absent []string // files not in the folder before
	}{
		{name: "the first rename fails", failAt: 0},
		{name: "the second rename fails", failAt: 1},
		{name: "the last rename fails", failAt: 2},
		{name: "the last rename fails, one file new", failAt: 2, absent: []string{"README.md"}},
		{name: "the second rename fails, two files new", failAt: 1, absent: []string{"README.md", "package.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "pkg")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			before := map[string]string{}
			for _, n := range names {
				if contains(tc.absent, n) {
					continue
				}
				before[n] = "former " + n
				require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte(before[n]), 0o640))
			}
			calls := 0
			rename = func(from, to string) error {
				if strings.HasPrefix(filepath.Base(from), ".weft-create-") && !strings.HasPrefix(filepath.Base(to), ".weft-create-") {
					if calls++; calls-1 == tc.failAt {
						return &os.LinkError{Op: "rename", Old: from, New: to, Err: errors.New("disk on fire")}
					}
				}
				return os.Rename(from, to)
			}
			t.Cleanup(func() { rename = os.Rename })

			_, err := Create("w.json", []byte(workflow), CreateOptions{Dir: dir, Force: true})
			require.ErrorContains(t, err, "disk on fire")
			require.ErrorContains(t, err, "the package's former files are back")

			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			var left []string
			for _, e := range entries {
				left = append(left, e.Name())
			}
			require.ElementsMatch(t, keys(before), left, "only the files that were there, nothing of weft's")
			for n, want := range before {
				got, err := os.ReadFile(filepath.Join(dir, n))
				require.NoError(t, err)
				require.Equal(t, want, string(got), "%s has its former content", n)
				fi, err := os.Stat(filepath.Join(dir, n))
				require.NoError(t, err)
				require.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "%s keeps its mode", n)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
