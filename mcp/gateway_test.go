package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftworks/weft/auth"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/mcp"
)

// gateway serves a gateway whose Temporal is unreachable, over real HTTP.
func gateway(t *testing.T) (*httptest.Server, string) {
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	key, _, err := auth.GenerateKey(keyFile)
	require.NoError(t, err)
	keys, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: "127.0.0.1:1", Namespace: "default"})
	srv := httptest.NewServer(g.HTTPHandler(keys, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(srv.Close)
	return srv, key
}

func connect(t *testing.T, url, key string) *client.Client {
	c, err := client.NewStreamableHttpClient(url+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}))
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, c.Start(ctx))
	req := mcplib.InitializeRequest{}
	req.Params.ProtocolVersion = mcplib.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcplib.Implementation{Name: "weft-test", Version: "1"}
	_, err = c.Initialize(ctx, req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func call(t *testing.T, c *client.Client, name string, args map[string]any) *mcplib.CallToolResult {
	req := mcplib.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := c.CallTool(context.Background(), req)
	require.NoError(t, err, "a tool failure is a result, not a protocol error")
	return res
}

func text(r *mcplib.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(mcplib.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestToolsAndAnnotations(t *testing.T) {
	srv, key := gateway(t)
	c := connect(t, srv.URL, key)
	tools, err := c.ListTools(context.Background(), mcplib.ListToolsRequest{})
	require.NoError(t, err)
	byName := map[string]mcplib.Tool{}
	for _, tl := range tools.Tools {
		byName[tl.Name] = tl
	}
	// the declarations say what the gateway offers: the registry's tools that set MCP, its own
	for _, n := range mcp.KnowledgeTools {
		require.Contains(t, byName, mcp.Prefix+n)
	}
	for _, n := range append(mcp.OwnTools(), "wf_multi_collection_search") {
		require.Contains(t, byName, n)
	}
	require.Len(t, mcp.KnowledgeTools, 15)
	require.Len(t, mcp.OwnTools(), 13)
	ingest := byName["weft_ingest"].Annotations
	require.False(t, *ingest.ReadOnlyHint)
	require.False(t, *ingest.DestructiveHint, "annotations are explicit: ingest does not destroy data")
	q := byName["weft_query"].Annotations
	require.True(t, *q.ReadOnlyHint)
	require.True(t, *q.OpenWorldHint)
	require.False(t, *byName["weft_models"].Annotations.OpenWorldHint)
	require.Equal(t, []string{"query"}, byName["weft_query"].InputSchema.Required, "the schema is the registry's")
	require.Contains(t, byName["weft_query"].InputSchema.Properties, "filter")
	// On the wire: the TypeScript SDK rejects a null required list, so look at the raw answer.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Contains(t, string(raw), `"wf_approval_demo"`)
	require.NotContains(t, string(raw), `"required":null`)
}

func TestCallsWithoutTemporal(t *testing.T) {
	srv, key := gateway(t)
	c := connect(t, srv.URL, key)

	res := call(t, c, "weft_models", map[string]any{"category": "rerank"})
	require.False(t, res.IsError, text(res))
	require.Len(t, res.StructuredContent.(map[string]any)["models"], 3)

	res = call(t, c, "weft_explain", map[string]any{"topic": "durability"})
	require.False(t, res.IsError)
	require.Contains(t, text(res), "resumes from the last finished step")

	res = call(t, c, "weft_similarity", map[string]any{"text1": "reset my password", "text2": "recover a login"})
	require.False(t, res.IsError, text(res))

	res = call(t, c, "weft_query", map[string]any{"limit": 3})
	require.True(t, res.IsError)
	require.Contains(t, text(res), "invalid arguments for weft_query")

	res = call(t, c, "weft_validate_workflow", map[string]any{"definition": map[string]any{"name": "x", "steps": []any{map[string]any{"id": "a", "tool": "serch"}}}})
	require.False(t, res.IsError)
	require.Contains(t, text(res), `unknown tool \"serch\" (did you mean \"search\"?)`)

	res = call(t, c, "weft_run_workflow", map[string]any{"name": "approval-demo"})
	require.True(t, res.IsError)
	require.Contains(t, text(res), "set TEMPORAL_ADDRESS")

	res = call(t, c, "weft_search", map[string]any{"query": "x", "collection": "docs"})
	require.True(t, res.IsError)
	require.Contains(t, text(res), "set MONGODB_URI")
}

func TestAuthHealthAndHosts(t *testing.T) {
	srv, _ := gateway(t)
	resp, err := http.Post(srv.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Contains(t, string(body), "weft mcp generate-key")

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer weft-mcp-wrong")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	resp, err = http.Get(srv.URL + "/health")
	require.NoError(t, err)
	var h mcp.Health
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
	resp.Body.Close()
	require.Equal(t, "unreachable", h.Temporal)
	require.Equal(t, "degraded", h.Status)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "a health check reads the status code")

	req, _ = http.NewRequest(http.MethodGet, srv.URL+"/health", nil)
	req.Host = "evil.example"
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "DNS rebinding protection")
}

func TestWorkflowsDirChangesUpdateTheTools(t *testing.T) {
	dir := t.TempDir()
	g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: "127.0.0.1:1", WorkflowsDir: dir, NoBuiltins: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go g.WatchWorkflows(ctx, 20*time.Millisecond)
	has := func(name string) bool { return g.Server().GetTool(name) != nil }
	require.False(t, has("wf_notes"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.json"), []byte(`{"name":"notes","mcp":{"expose":true},
	  "inputs":{"text":{"type":"string","required":true}},"steps":[{"id":"t","tool":"template","inputs":{"text":"{{ inputs.text }}"}}]}`), 0o644))
	require.Eventually(t, func() bool { return has("wf_notes") }, 5*time.Second, 20*time.Millisecond)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hidden.json"), []byte(`{"name":"hidden","steps":[{"id":"t","tool":"template","inputs":{"text":"x"}}]}`), 0o644))
	require.NoError(t, os.Remove(filepath.Join(dir, "notes.json")))
	require.Eventually(t, func() bool { return !has("wf_notes") }, 5*time.Second, 20*time.Millisecond)
	require.False(t, has("wf_hidden"), "files without mcp.expose stay private")
}

// TestRevokedKeyRefusedByRunningGateway: revoking a key takes effect at the running gateway's
// next request, without a restart.
func TestRevokedKeyRefusedByRunningGateway(t *testing.T) {
	f := filepath.Join(t.TempDir(), "k.json")
	k1, id1, err := auth.GenerateKey(f)
	require.NoError(t, err)
	k2, _, err := auth.GenerateKey(f)
	require.NoError(t, err)
	keys, err := auth.LoadKeys(f)
	require.NoError(t, err)
	g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: "127.0.0.1:1", NoBuiltins: true})
	srv := httptest.NewServer(g.HTTPHandler(keys, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer srv.Close()
	status := func(key string) int {
		code, _ := ping(t, srv.URL, key)
		return code
	}
	require.Equal(t, http.StatusOK, status(k1))
	_, err = auth.RevokeKey(f, id1)
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, status(k1), "the revoked key is refused at once")
	require.Contains(t, refusal(t, srv.URL, k1), "revoked or mistyped", "a revoked key is told so, not asked to send a key")
	require.Contains(t, refusal(t, srv.URL, ""), "send Authorization: Bearer <key>", "no key: how to send one")
	require.Equal(t, http.StatusOK, status(k2), "the other key still works")
	k3, _, err := auth.GenerateKey(f)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status(k3), "a new key works without a restart")
}

// TestListChangedOnlyOnRealChanges: the gateway notifies clients once per change of its workflow
// tools, never for tools that stayed the same.
func TestListChangedOnlyOnRealChanges(t *testing.T) {
	dir := t.TempDir()
	expose := func(name string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".json"), []byte(`{"name":"`+name+`","mcp":{"expose":true},
		  "steps":[{"id":"t","tool":"template","inputs":{"text":"x"}}]}`), 0o644))
	}
	expose("first")
	g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: "127.0.0.1:1", WorkflowsDir: dir})
	c, err := client.NewInProcessClient(g.Server())
	require.NoError(t, err)
	defer c.Close()
	var mu sync.Mutex
	notes := 0
	c.OnNotification(func(n mcplib.JSONRPCNotification) {
		if n.Method == "notifications/tools/list_changed" {
			mu.Lock()
			notes++
			mu.Unlock()
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, c.Start(ctx))
	_, err = c.Initialize(ctx, mcplib.InitializeRequest{})
	require.NoError(t, err)
	go g.WatchWorkflows(ctx, 10*time.Millisecond)
	has := func(name string) bool { return g.Server().GetTool(name) != nil }
	require.True(t, has("wf_first"))
	// A file that exposes nothing, then a second exposed workflow: the watcher refreshes at least
	// once for each, and only the second changes the tools.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "private.json"), []byte(`{"name":"private","steps":[{"id":"t","tool":"template","inputs":{"text":"x"}}]}`), 0o644))
	expose("second")
	require.Eventually(t, func() bool { return has("wf_second") }, 5*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return notes >= 1 }, 5*time.Second, 10*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, 1, notes, "one notification for the one real change (the built-ins and wf_first were already registered)")
}

// TestWrongKeysAreThrottled: a client guessing keys gets 429 with Retry-After after a burst;
// the right key keeps working from the same address.
func TestWrongKeysAreThrottled(t *testing.T) {
	srv, key := gateway(t)
	status := func(k string) (int, string) { return ping(t, srv.URL, k) }
	codes := map[int]int{}
	retryAfter := ""
	for i := 0; i < 200; i++ {
		code, ra := status(fmt.Sprintf("wrong-%d", i))
		codes[code]++
		if code == http.StatusTooManyRequests {
			retryAfter = ra
		}
	}
	require.LessOrEqual(t, codes[http.StatusUnauthorized], 30, "a burst of wrong keys, then throttled: %v", codes)
	require.Greater(t, codes[http.StatusTooManyRequests], 150, "%v", codes)
	require.NotEmpty(t, retryAfter)
	code, _ := status(key)
	require.Equal(t, http.StatusOK, code, "the right key still works")
}

// TestValidateNamesItsArgument: a call with the wrong argument name says which one it takes.
func TestValidateNamesItsArgument(t *testing.T) {
	g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: "127.0.0.1:1", NoBuiltins: true})
	c, err := client.NewInProcessClient(g.Server())
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	require.NoError(t, c.Start(ctx))
	_, err = c.Initialize(ctx, mcplib.InitializeRequest{})
	require.NoError(t, err)
	req := mcplib.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = "weft_validate_workflow", map[string]any{"workflow": map[string]any{"name": "x"}}
	res, err := c.CallTool(ctx, req)
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Contains(t, res.Content[0].(mcplib.TextContent).Text, `takes the argument "definition"`)
	require.Contains(t, res.Content[0].(mcplib.TextContent).Text, "got [workflow]")
}

// ping sends an MCP ping with a bearer key and returns the status and Retry-After.
// refusal is the message of the gateway's answer to a ping with key ("" : no Authorization).
func refusal(t *testing.T, base, key string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var body struct{ Message string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	return body.Message
}

func ping(t *testing.T, base, key string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

// TestOversizedRequestsRefusedWithTheLimit: a 50 MB request is refused from its Content-Length,
// before it is read, with the limit named; one that hides its length is cut at the limit.
func TestOversizedRequestsRefusedWithTheLimit(t *testing.T) {
	srv, key := gateway(t)
	big := strings.Repeat("a", 50<<20)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"weft_validate_workflow","arguments":{"source":"` + big + `"}}}`
	for _, chunked := range []bool{false, true} {
		var r io.Reader = strings.NewReader(body)
		if chunked {
			r = io.MultiReader(strings.NewReader(body)) // no length known: sent chunked
		}
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", r)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Less(t, time.Since(start), 10*time.Second)
		if chunked {
			require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, string(out))
			require.Contains(t, string(out), "at most 4 MB")
			continue
		}
		require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, string(out))
		require.Contains(t, string(out), "at most 4 MB")
		require.Contains(t, string(out), "50.0 MB")
	}
}
