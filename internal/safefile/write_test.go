package safefile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/internal/safefile"
)

// TestCheckNameRefusesWhatLeavesTheFolder: a name that could point outside the folder, hide
// there, or is not a .json file is refused, naming it.
func TestCheckNameRefusesWhatLeavesTheFolder(t *testing.T) {
	for _, name := range []string{"", "../x.json", "a/b.json", `a\b.json`, "..json", "x..json", ".versions.json", ".json",
		"x.txt", "x", "a\x00.json", "a\n.json", strings.Repeat("a", 130) + ".json"} {
		err := safefile.CheckName(name, ".json")
		require.ErrorIs(t, err, safefile.ErrBadName, "%q", name)
		require.Contains(t, err.Error(), "plain file name", "%q", name)
	}
	for _, name := range []string{"x.json", "approval-demo.json", "a.b_c-1.json"} {
		require.NoError(t, safefile.CheckName(name, ".json"), "%q", name)
	}
}

// TestWriteAtomic: the file is replaced whole, with the mode asked, no temporary file is left,
// and nothing outside dir, a directory or a symbolic link is written.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, safefile.WriteAtomic(dir, "w.json", ".json", []byte("one"), 0o640, "workflow file"))
	require.NoError(t, safefile.WriteAtomic(dir, "w.json", ".json", []byte("two"), 0o640, "workflow file"))
	data, err := os.ReadFile(filepath.Join(dir, "w.json"))
	require.NoError(t, err)
	require.Equal(t, "two", string(data))
	st, err := os.Stat(filepath.Join(dir, "w.json"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), st.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left")

	err = safefile.WriteAtomic(dir, "../out.json", ".json", []byte("x"), 0o644, "workflow file")
	require.ErrorIs(t, err, safefile.ErrBadName)
	_, statErr := os.Stat(filepath.Join(filepath.Dir(dir), "out.json"))
	require.True(t, errors.Is(statErr, os.ErrNotExist), "nothing was written outside dir")

	require.NoError(t, os.Mkdir(filepath.Join(dir, "d.json"), 0o755))
	require.ErrorIs(t, safefile.WriteAtomic(dir, "d.json", ".json", []byte("x"), 0o644, "workflow file"), safefile.ErrNotRegular)
	target := filepath.Join(t.TempDir(), "elsewhere.json")
	require.NoError(t, os.WriteFile(target, []byte("keep"), 0o644))
	require.NoError(t, os.Symlink(target, filepath.Join(dir, "l.json")))
	err = safefile.WriteAtomic(dir, "l.json", ".json", []byte("x"), 0o644, "workflow file")
	require.ErrorIs(t, err, safefile.ErrNotRegular)
	require.Contains(t, err.Error(), "symbolic link")
	data, err = os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "keep", string(data), "the link's target is untouched")
}
