package starter_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/auth"
)

// TestKeyCommands: generate-key --name/--role writes them, the key identifies as them, list-keys
// and revoke-key show them, and a bad role is refused saying what roles are.
func TestKeyCommands(t *testing.T) {
	f := filepath.Join(t.TempDir(), "keys.json")
	code, out, errOut := weft(t, "", "mcp", "--key-file", f, "generate-key", "--name", "ana", "--role", "reviewer", "--role", "finance")
	require.Equal(t, 0, code, errOut)
	key := strings.SplitN(out, "\n", 2)[0]
	require.Contains(t, out, "for ana (reviewer, finance)")
	keys, err := auth.LoadKeys(f)
	require.NoError(t, err)
	id, ok := keys.Identify(key)
	require.True(t, ok)
	require.Equal(t, auth.Identity{Name: "ana", Roles: []string{"reviewer", "finance"}}, id)

	code, out, _ = weft(t, "", "mcp", "--key-file", f, "generate-key")
	require.Equal(t, 0, code)
	require.Contains(t, out, "(admin)", "no role: an admin, said so")

	code, _, errOut = weft(t, "", "mcp", "--key-file", f, "generate-key", "--name", "fin", "--role", "finance")
	require.Equal(t, 0, code)
	require.Contains(t, errOut, "grants nothing by itself")

	code, out, _ = weft(t, "", "mcp", "--key-file", f, "list-keys")
	require.Equal(t, 0, code)
	require.Regexp(t, `(?m)^[0-9a-f]{8}\s+ana\s+reviewer,finance\s`, out)
	require.NotContains(t, out, key, "keys are never shown again")

	stored, err := auth.ListKeys(f)
	require.NoError(t, err)
	code, out, _ = weft(t, "", "mcp", "--key-file", f, "revoke-key", stored[0].ID)
	require.Equal(t, 0, code)
	require.Contains(t, out, "revoked "+stored[0].ID+": ana (reviewer, finance)")
	_, ok = keys.Identify(key)
	require.False(t, ok)

	code, _, errOut = weft(t, "", "mcp", "--key-file", f, "generate-key", "--name", "bob", "--role", "role:finance")
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, "built-in: reader, runner, reviewer, admin")
}
