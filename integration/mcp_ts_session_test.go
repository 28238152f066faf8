package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/auth"
	"github.com/weftworks/weft/mcp"
)

// TestMCPTypeScriptSessionAcrossARestart: the official TypeScript SDK's client keeps its
// Mcp-Session-Id across a restart of the gateway behind the same address (a new gateway over the
// same store replaces the first, whose sessions were in its memory), and its next call on the
// same transport succeeds: the session is resumed from the store for the key that opened it.
// Without kept sessions the SDK's call fails with the gateway's 404 for an unknown session.
func TestMCPTypeScriptSessionAcrossARestart(t *testing.T) {
	script := mcpTSScript(t, "session.mjs")
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	key, _, err := auth.GenerateNamedKey(keyFile, "ts-session", []string{auth.RoleRunner})
	require.NoError(t, err)
	keys, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	cfg := activities.Config{MongoDBURI: store.URI, Database: "mcp_ts_session"}
	gateway := func() http.Handler {
		g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: server.Address, Namespace: server.Namespace, TaskQueue: "mcp-ts-session", Wait: 30 * time.Second, Config: cfg})
		return g.HTTPHandler(keys, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}
	var current atomic.Pointer[http.Handler]
	first := gateway()
	current.Store(&first)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*current.Load()).ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script, srv.URL+"/mcp", key)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	lines := bufio.NewScanner(stdout)
	require.True(t, lines.Scan(), "session.mjs printed nothing: %s", stderr.String())
	var opened struct {
		Session string `json:"session"`
	}
	require.NoError(t, json.Unmarshal(lines.Bytes(), &opened), lines.Text())
	require.NotEmpty(t, opened.Session)

	// the restart: a new gateway over the same store behind the same address
	second := gateway()
	current.Store(&second)
	_, err = io.WriteString(stdin, "restarted\n")
	require.NoError(t, err)
	require.True(t, lines.Scan(), "session.mjs stopped after the restart: %s", stderr.String())
	var after struct {
		Session, Before string
		After           struct {
			IsError bool `json:"isError"`
			Models  int  `json:"models"`
		} `json:"after"`
	}
	require.NoError(t, json.Unmarshal(lines.Bytes(), &after), lines.Text())
	require.NoError(t, cmd.Wait(), stderr.String())
	require.Equal(t, opened.Session, after.Session, "the client kept its session id")
	require.False(t, after.After.IsError)
	require.Positive(t, after.After.Models, "the call after the restart answered")
}
