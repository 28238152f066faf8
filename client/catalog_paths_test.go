package client

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/internal/safefile"
)

// TestCatalogNamesFilesWithoutTheWorkersPaths: a broken file of the workflows directory is
// reported by its name there, never with the directory's path on the machine (the gateway and
// the console show these problems to clients); a file refused before reading keeps its kind.
func TestCatalogNamesFilesWithoutTheWorkersPaths(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "srv-weft-workflows")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "broken.json"), []byte(`{"name":"broken","steps":[{"id":"a","tool":"serch"}]}`), 0o644))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe.json"), 0o644))
	got := map[string]error{}
	for _, e := range Catalog(dir, false) {
		got[e.Name] = e.Err
	}
	require.ErrorContains(t, got["broken"], "broken.json:")
	require.ErrorContains(t, got["pipe"], "pipe.json")
	require.ErrorIs(t, got["pipe"], safefile.ErrNotRegular, "the refusal keeps its kind")
	for name, err := range got {
		require.NotContains(t, err.Error(), dir, name)
	}
}
