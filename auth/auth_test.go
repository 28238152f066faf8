package auth_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/auth"
)

func TestKeys(t *testing.T) {
	f := filepath.Join(t.TempDir(), "k.json")
	k1, id1, err := auth.GenerateKey(f)
	require.NoError(t, err)
	k2, _, err := auth.GenerateKey(f)
	require.NoError(t, err)
	keys, err := auth.LoadKeys(f, "env-key")
	require.NoError(t, err)
	valid := func(k string) bool { _, ok := keys.Identify(k); return ok }
	require.True(t, valid(k1))
	require.True(t, valid(k2))
	require.True(t, valid("env-key"))
	require.False(t, valid("nope"))
	gone, err := auth.RevokeKey(f, id1)
	require.NoError(t, err)
	require.Equal(t, id1, gone.ID)
	require.False(t, valid(k1), "a revoked key is refused without reloading by hand")
	require.True(t, valid(k2))
	_, err = auth.RevokeKey(f, "unknown")
	require.ErrorContains(t, err, "weft mcp list-keys")
}

// TestNamedKeys: a key made with a name and roles identifies as them; keys of an old file (no
// name, no roles) and WEFT_MCP_KEY are admins.
func TestNamedKeys(t *testing.T) {
	f := filepath.Join(t.TempDir(), "k.json")
	old := `{"keys":[{"id":"0a0b0c0d","sha256":"` + sha("old-key") + `","created":"2024-01-01T00:00:00Z"}]}`
	require.NoError(t, os.WriteFile(f, []byte(old), 0o600))
	ana, anaID, err := auth.GenerateNamedKey(f, "ana", []string{"reviewer", "finance", "reviewer"})
	require.NoError(t, err)
	bob, _, err := auth.GenerateNamedKey(f, "bob", []string{"reader"})
	require.NoError(t, err)
	keys, err := auth.LoadKeys(f, "the-env-key")
	require.NoError(t, err)

	for _, tc := range []struct {
		key, name string
		roles     []string
	}{
		{ana, "ana", []string{"reviewer", "finance"}},
		{bob, "bob", []string{"reader"}},
		{"old-key", "key-0a0b0c0d", []string{"admin"}},
		{"the-env-key", "env-key", []string{"admin"}},
	} {
		id, ok := keys.Identify(tc.key)
		require.True(t, ok, tc.name)
		require.Equal(t, auth.Identity{Name: tc.name, Roles: tc.roles}, id)
	}
	stored, err := auth.ListKeys(f)
	require.NoError(t, err)
	require.Len(t, stored, 3)
	require.Equal(t, anaID, stored[1].ID)
	require.Equal(t, "ana", stored[1].Name, "the file keeps the name")
	require.Empty(t, stored[0].Roles, "the old entry is left as it was")

	_, _, err = auth.GenerateNamedKey(f, "ana smith", nil)
	require.ErrorContains(t, err, "--name")
	_, _, err = auth.GenerateNamedKey(f, "ana", []string{"role:finance"})
	require.ErrorContains(t, err, "--role")
}

func TestIdentityHas(t *testing.T) {
	for _, tc := range []struct {
		roles []string
		role  string
		want  bool
	}{
		{[]string{"reader"}, "reader", true},
		{[]string{"reader"}, "runner", false},
		{[]string{"reader"}, "reviewer", false},
		{[]string{"runner"}, "reader", true},
		{[]string{"runner"}, "reviewer", false},
		{[]string{"reviewer"}, "reader", true},
		{[]string{"reviewer"}, "runner", false},
		{[]string{"admin"}, "runner", true},
		{[]string{"admin"}, "finance", true},
		{[]string{"finance"}, "reader", false},
		{[]string{"finance"}, "finance", true},
		{nil, "reader", false},
	} {
		require.Equal(t, tc.want, auth.Identity{Name: "x", Roles: tc.roles}.Has(tc.role), "%v has %s", tc.roles, tc.role)
	}
	msg := auth.Identity{Name: "ana", Roles: []string{"reviewer", "finance"}}.Refusal("weft_run_workflow", "runner")
	require.Contains(t, msg, `needs the role "runner"`)
	require.Contains(t, msg, "weft mcp generate-key --name ana --role reviewer --role finance --role runner")
}

func TestIdentityInContext(t *testing.T) {
	_, ok := auth.IdentityFrom(context.Background())
	require.False(t, ok, "nobody authenticated")
	id, ok := auth.IdentityFrom(auth.WithIdentity(context.Background(), auth.Identity{Name: "ana", Roles: []string{"reader"}}))
	require.True(t, ok)
	require.Equal(t, "ana", id.Name)
}

func TestKeyFileBounded(t *testing.T) {
	dir := t.TempDir()
	_, err := auth.LoadKeys(dir)
	require.ErrorContains(t, err, "not a regular file")
	big := filepath.Join(dir, "big.json")
	require.NoError(t, os.WriteFile(big, make([]byte, auth.MaxKeyFileBytes+1), 0o600))
	_, err = auth.LoadKeys(big)
	require.ErrorContains(t, err, "more than a key file's")
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestFailureLimiter(t *testing.T) {
	l := auth.NewFailureLimiter(3, 1)
	now := time.Unix(0, 0)
	for i := range 3 {
		_, ok := l.Fail("a", now)
		require.True(t, ok, "failure %d is within the burst", i+1)
	}
	wait, ok := l.Fail("a", now)
	require.False(t, ok)
	require.Equal(t, time.Second, wait)
	_, ok = l.Fail("b", now)
	require.True(t, ok, "other clients keep their own budget")
	_, ok = l.Fail("a", now.Add(time.Second))
	require.True(t, ok, "the budget refills at the rate")
}

func TestHostGuard(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	h := auth.HostGuard([]string{"localhost", "127.0.0.1"}, "--allowed-host", ok)
	for _, tc := range []struct {
		host string
		want int
	}{{"127.0.0.1:8234", http.StatusNoContent}, {"LOCALHOST", http.StatusNoContent}, {"evil.example", http.StatusForbidden}} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Host = tc.host
		h.ServeHTTP(rec, req)
		require.Equal(t, tc.want, rec.Code, tc.host)
		if tc.want == http.StatusForbidden {
			require.Contains(t, rec.Body.String(), "--allowed-host")
		}
	}
}
