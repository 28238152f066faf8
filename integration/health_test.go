package integration

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/auth"
	"github.com/weftworks/weft/mcp"
)

// TestHealthChecksOnTheStack: weft ping and the gateway's GET /health (both client.CheckHealth)
// find the embedded Temporal and store answering, and say so when nothing listens.
func TestHealthChecksOnTheStack(t *testing.T) {
	code, out, errOut := weftEnv(t, nil, "ping", "--temporal", server.Address)
	require.Equal(t, 0, code, out+errOut)
	require.Equal(t, "ok\n", out)
	code, out, errOut = weftEnv(t, nil, "ping", "--mongodb", store.URI)
	require.Equal(t, 0, code, out+errOut)
	code, _, errOut = weftEnv(t, nil, "ping", "--temporal", "127.0.0.1:1", "--timeout", "1s")
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, "cannot reach Temporal at 127.0.0.1:1")

	for _, tc := range []struct {
		name, uri, mongodb string
	}{
		{"with a store", store.URI, "ok"},
		{"without one", "", "not configured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Revision: "eb97aed", Modified: true, Address: server.Address, Namespace: server.Namespace, TaskQueue: "health", Config: activities.Config{MongoDBURI: tc.uri, Database: "health"}})
			srv := httptest.NewServer(g.HTTPHandler(&auth.Keys{}, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
			defer srv.Close()
			resp, err := http.Get(srv.URL + "/health")
			require.NoError(t, err)
			defer resp.Body.Close()
			var h mcp.Health
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
			require.Equal(t, mcp.Health{Status: "ok", Version: "test", Revision: "eb97aed", Modified: true, Uptime: h.Uptime, Temporal: "ok", MongoDB: tc.mongodb}, h)
		})
	}
}
