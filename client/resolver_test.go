package client_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/client"
)

// TestFileResolverTakesNamesOnly: a called workflow is a name in the workflows directory or a
// built-in; a path is refused before anything is read, and nothing of the file leaks.
func TestFileResolverTakesNamesOnly(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "child.json"), []byte(`{"name": "child", "steps": [{"id": "t", "tool": "template", "inputs": {"text": "hi"}}]}`), 0o600))
	secret := filepath.Join(t.TempDir(), "secret.json")
	require.NoError(t, os.WriteFile(secret, []byte("password=hunter2"), 0o600))
	resolve := client.FileResolver(dir)
	w, err := resolve("child")
	require.NoError(t, err)
	require.Equal(t, "child", w.Def.Name)
	_, err = resolve("multi-collection-search")
	require.NoError(t, err, "built-ins by name")
	rel, err := filepath.Rel(dir, secret)
	require.NoError(t, err)
	for _, p := range []string{secret, rel, "/etc/passwd", "../" + filepath.Base(dir) + "/child"} {
		_, err := resolve(p)
		require.ErrorContains(t, err, "is not a name", p)
		require.NotContains(t, err.Error(), "hunter2")
		require.NotContains(t, err.Error(), "root:")
	}
}
