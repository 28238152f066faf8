package mcp

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/auth"
)

// TestIdleSessionsEnd: a session without requests for sessionIdleTTL is ended (its id then gets
// 404), one whose tool calls keep coming or whose event stream is open is not.
func TestIdleSessionsEnd(t *testing.T) {
	old := sessionIdleTTL
	// Long enough that a busy session's calls, 50 ms apart, never leave a gap of it even under -race
	// on a loaded machine (300 ms did: TestIdleSessionsEnd failed a CI run so).
	sessionIdleTTL = 1500 * time.Millisecond
	t.Cleanup(func() { sessionIdleTTL = old })
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	key, _, err := auth.GenerateNamedKey(keyFile, "a", nil)
	require.NoError(t, err)
	keys, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	g := New(Options{Version: "test", CheckResults: true, Address: "127.0.0.1:1", Namespace: "default"})
	srv := httptest.NewServer(g.HTTPHandler(keys, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(srv.Close)

	v := map[string]string{"MCP-Protocol-Version": "2025-06-18"}
	open := func() string {
		status, hdr, out, _ := post(t, http.MethodPost, srv.URL, key, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
		require.Equal(t, http.StatusOK, status, out)
		return hdr.Get("Mcp-Session-Id")
	}
	with := func(sid string) map[string]string {
		return map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": v["MCP-Protocol-Version"]}
	}
	alive := func(sid string) bool {
		status, _, _, _ := post(t, http.MethodPost, srv.URL, key, strings.NewReader(pingBody), with(sid))
		return status == http.StatusOK
	}
	idle, busy, streaming := open(), open(), open()

	// busy makes tool calls only (served on sessions of their own); streaming keeps a stream open
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/mcp", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range with(streaming) {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	defer resp.Body.Close()

	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"weft_models","arguments":{}}}`
	require.Eventually(t, func() bool {
		status, _, out, _ := post(t, http.MethodPost, srv.URL, key, strings.NewReader(call), with(busy))
		require.Equal(t, http.StatusOK, status, out)
		g.sessions.mu.Lock()
		defer g.sessions.mu.Unlock()
		_, known := g.sessions.owner[idle]
		return !known
	}, 30*time.Second, 50*time.Millisecond, "the idle session was not ended")
	require.False(t, alive(idle), "an ended session's id gets 404")
	require.True(t, alive(busy), "a session whose tool calls keep coming is not idle")
	require.True(t, alive(streaming), "a session with an open stream is not idle")
}
