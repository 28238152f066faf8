package auth_test

import (
	"net/http"
	"net/http/httptest"
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
	require.True(t, keys.Valid(k1))
	require.True(t, keys.Valid(k2))
	require.True(t, keys.Valid("env-key"))
	require.False(t, keys.Valid("nope"))
	require.NoError(t, auth.RevokeKey(f, id1))
	require.False(t, keys.Valid(k1), "a revoked key is refused without reloading by hand")
	require.True(t, keys.Valid(k2))
	require.Error(t, auth.RevokeKey(f, "unknown"))
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
