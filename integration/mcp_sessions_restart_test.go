package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/mongostore"
	"github.com/weftworks/weft/auth"
	"github.com/weftworks/weft/mcp"
)

// rawMCP posts JSON-RPC messages to a gateway as one key, with a session id or none.
type rawMCP struct {
	t   *testing.T
	url string
	key string
}

// send posts body with session sid ("": none) and returns the status, the Mcp-Session-Id
// answered, and the JSON-RPC response (read from JSON or from the SSE stream).
func (m rawMCP) send(method, sid, body string) (int, string, map[string]any) {
	m.t.Helper()
	req, err := http.NewRequest(method, m.url+"/mcp", strings.NewReader(body))
	require.NoError(m.t, err)
	req.Header.Set("Authorization", "Bearer "+m.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	require.NoError(m.t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(m.t, err)
	var msg map[string]any
	text := string(out)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(text, "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(data, `"id"`) {
				text = data
			}
		}
	}
	_ = json.Unmarshal([]byte(text), &msg)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), msg
}

// call calls tool with args on session sid and returns its structured content (failing on an
// error result).
func (m rawMCP) call(sid, tool string, args map[string]any) map[string]any {
	m.t.Helper()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	require.NoError(m.t, err)
	status, _, msg := m.send(http.MethodPost, sid, string(b))
	require.Equal(m.t, http.StatusOK, status, "%v", msg)
	res, _ := msg["result"].(map[string]any)
	require.NotNil(m.t, res, "%v", msg)
	require.NotEqual(m.t, true, res["isError"], "%v", res)
	out, _ := res["structuredContent"].(map[string]any)
	return out
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"restart","version":"1"}}}`

// TestMCPSessionsSurviveARestart: sessions are kept in the gateway's store, so a gateway
// restarted on the same store takes an Mcp-Session-Id the one before it issued: the session's
// tool calls work for the key that opened it, its resource subscription comes back (a change of
// the subscribed run reaches the session's GET /mcp stream on the new gateway), and the record
// keeps its log level and elicitation capability; another key's request with the id is 404 and
// does not take it over; a session ended with DELETE before the restart stays ended.
func TestMCPSessionsSurviveARestart(t *testing.T) {
	c := dial(t)
	queue := "mcp-sessions-restart"
	startWorker(t, c, queue, nil)
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	anaKey, _, err := auth.GenerateNamedKey(keyFile, "ana", []string{auth.RoleRunner, auth.RoleReviewer})
	require.NoError(t, err)
	bobKey, _, err := auth.GenerateNamedKey(keyFile, "bob", nil)
	require.NoError(t, err)
	keys, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	const db = "mcp_sessions_restart"
	cfg := activities.Config{MongoDBURI: store.URI, Database: db}
	gateway := func() *httptest.Server {
		g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: server.Address, Namespace: server.Namespace, TaskQueue: queue, Wait: 30 * time.Second, Config: cfg})
		return httptest.NewServer(g.HTTPHandler(keys, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	}

	first := gateway()
	ana := rawMCP{t: t, url: first.URL, key: anaKey}
	status, sid, msg := ana.send(http.MethodPost, "", initializeBody)
	require.Equal(t, http.StatusOK, status, "%v", msg)
	require.NotEmpty(t, sid)
	status, _, msg = ana.send(http.MethodPost, sid, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`)
	require.Equal(t, http.StatusOK, status, "%v", msg)
	out := ana.call(sid, "weft_run_workflow", map[string]any{"definition": map[string]any{"name": "restart-review", "steps": []any{
		map[string]any{"id": "check", "tool": "review", "inputs": map[string]any{"title": "ok?", "data": map[string]any{"n": 1}}}}}})
	run := out["executionId"].(string)
	uri := "weft://executions/" + run
	status, _, msg = ana.send(http.MethodPost, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":%q}}`, uri))
	require.Equal(t, http.StatusOK, status, "%v", msg)
	require.Nil(t, msg["error"], "%v", msg)
	status, ended, _ := ana.send(http.MethodPost, "", initializeBody)
	require.Equal(t, http.StatusOK, status)
	status, _, _ = ana.send(http.MethodDelete, ended, "")
	require.Equal(t, http.StatusOK, status, "ana ends her second session")
	first.Close()

	second := gateway() // the same store
	defer second.Close()
	ana.url = second.URL
	bob := rawMCP{t: t, url: second.URL, key: bobKey}
	models := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"weft_models","arguments":{}}}`
	status, _, _ = bob.send(http.MethodPost, sid, models)
	require.Equal(t, http.StatusNotFound, status, "another key's request with ana's session id")
	status, _, _ = bob.send(http.MethodPost, sid, `{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	require.Equal(t, http.StatusNotFound, status)
	status, _, _ = ana.send(http.MethodPost, ended, models)
	require.Equal(t, http.StatusNotFound, status, "a session ended before the restart stays ended")

	ana.call(sid, "weft_models", map[string]any{}) // the old id works on the new gateway
	st, err := mongostore.Open(context.Background(), store.URI)
	require.NoError(t, err)
	defer func() { _ = st.Close(context.Background()) }()
	rec, found, err := st.GetMCPSession(context.Background(), db, sid)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, mongostore.MCPSession{ID: sid, Key: "ana", Level: "debug", Subscriptions: []string{run}, Elicit: true, LastSeen: rec.LastSeen}, rec)
	_, found, err = st.GetMCPSession(context.Background(), db, ended)
	require.NoError(t, err)
	require.False(t, found, "the ended session is not kept")

	// the subscription came back: a change of the run reaches the session's stream
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, second.URL+"/mcp", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+anaKey)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	updated := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "notifications/resources/updated") {
				updated <- sc.Text()
			}
		}
		close(updated)
	}()
	require.Eventually(t, func() bool {
		st := ana.call(sid, "weft_execution", map[string]any{"id": run})
		pending, _ := st["pendingReviews"].([]any)
		return len(pending) == 1
	}, 20*time.Second, 100*time.Millisecond)
	ana.call(sid, "weft_review", map[string]any{"id": run, "decision": "approve"})
	select {
	case line, ok := <-updated:
		require.True(t, ok, "the stream ended without an update")
		require.Contains(t, line, uri)
	case <-time.After(30 * time.Second):
		t.Fatal("no notifications/resources/updated for the subscribed run on the restarted gateway")
	}

	// DELETE on the new gateway ends it for good
	status, _, _ = ana.send(http.MethodDelete, sid, "")
	require.Equal(t, http.StatusOK, status)
	status, _, _ = ana.send(http.MethodPost, sid, models)
	require.Equal(t, http.StatusNotFound, status)
	third := gateway()
	defer third.Close()
	ana.url = third.URL
	status, _, _ = ana.send(http.MethodPost, sid, models)
	require.Equal(t, http.StatusNotFound, status, "ended, it stays ended after another restart")
}
