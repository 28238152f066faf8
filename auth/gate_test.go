package auth_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/auth"
)

// TestGate: a request with a key the key file holds is its identity; no key or a wrong one is a
// 401 saying what to send; past the burst of failures an address gets 429 with a wait, while the
// right key still works at once.
func TestGate(t *testing.T) {
	f := filepath.Join(t.TempDir(), "k.json")
	key, _, err := auth.GenerateNamedKey(f, "ana", []string{auth.RoleReader})
	require.NoError(t, err)
	keys, err := auth.LoadKeys(f)
	require.NoError(t, err)
	g := auth.NewGate(keys)
	req := func(header string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/v1/runs", nil)
		if header != "" {
			r.Header.Set("Authorization", header)
		}
		return r
	}
	for _, c := range []struct {
		name, header, want string
		status             int
	}{
		{"no key", "", "send Authorization: Bearer", 401},
		{"not bearer", "Basic " + key, "send Authorization: Bearer", 401},
		{"wrong key", "Bearer nope", "revoked or mistyped", 401},
		{"right key", "Bearer " + key, "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			id, refused := g.Check(req(c.header))
			if c.status == 0 {
				require.Nil(t, refused)
				require.Equal(t, "ana", id.Name)
				return
			}
			require.NotNil(t, refused)
			require.Equal(t, c.status, refused.Status)
			require.Contains(t, refused.Message, c.want)
		})
	}
	var last *auth.Refusal
	for range auth.FailureBurst + 1 {
		_, last = g.Check(req("Bearer guess"))
	}
	require.Equal(t, http.StatusTooManyRequests, last.Status)
	require.Positive(t, last.RetryAfterSeconds())
	id, refused := g.Check(req("Bearer " + key))
	require.Nil(t, refused, "the right key works at once")
	require.Equal(t, "ana", id.Name)
}
