package starter

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWeftDirIsIgnored: the repository ignores .weft/, and weft dev's default data folder ignores
// itself in any project (issue 21: .weft/ was not in .gitignore).
func TestWeftDirIsIgnored(t *testing.T) {
	data, err := os.ReadFile("../.gitignore")
	require.NoError(t, err)
	require.Contains(t, "\n"+string(data), "\n.weft/\n", "the repository's .gitignore ignores weft dev's data")

	for _, tc := range []struct {
		dataDir string
		ignored bool
	}{
		{".weft/dev", true},
		{"./.weft/other", true},
		{"data", false},
		{filepath.Join(t.TempDir(), ".weft", "dev"), false}, // absolute: the user's to manage
	} {
		t.Run(tc.dataDir, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			require.NoError(t, ignoreWeftDir(tc.dataDir))
			got, err := os.ReadFile(filepath.Join(dir, ".weft", ".gitignore"))
			if !tc.ignored {
				require.ErrorIs(t, err, os.ErrNotExist)
				return
			}
			require.NoError(t, err)
			require.Contains(t, string(got), "\n*\n")
			// A .gitignore the user wrote stays.
			require.NoError(t, os.WriteFile(filepath.Join(dir, ".weft", ".gitignore"), []byte("mine\n"), 0o644))
			require.NoError(t, ignoreWeftDir(tc.dataDir))
			got, err = os.ReadFile(filepath.Join(dir, ".weft", ".gitignore"))
			require.NoError(t, err)
			require.Equal(t, "mine\n", string(got))
		})
	}
}
