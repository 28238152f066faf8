package integration

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weftworks/weft/auth"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/mcp"
	"github.com/weftworks/weft/worker"
)

// The official MCP Go SDK as the client: a client nobody here wrote.

type bearer struct {
	key  string
	base http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.base.RoundTrip(r)
}

func sdkText(r *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func checkSession(t *testing.T, s *sdk.ClientSession) {
	ctx := context.Background()
	tools, err := s.ListTools(ctx, nil)
	require.NoError(t, err)
	names := map[string]*sdk.Tool{}
	for _, tl := range tools.Tools {
		names[tl.Name] = tl
	}
	require.Contains(t, names, "weft_query")
	require.Contains(t, names, "weft_run_workflow")
	require.NotNil(t, names["weft_ingest"].Annotations.DestructiveHint)
	require.False(t, *names["weft_ingest"].Annotations.DestructiveHint)

	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "weft_estimate", Arguments: map[string]any{"docs": 1000, "queries": 100}})
	require.NoError(t, err)
	require.False(t, res.IsError, sdkText(res))
	var est map[string]any
	require.NoError(t, json.Unmarshal([]byte(sdkText(res)), &est))
	require.NotEmpty(t, est["estimates"])

	res, err = s.CallTool(ctx, &sdk.CallToolParams{Name: "weft_explain", Arguments: map[string]any{"topic": "nonsense"}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Contains(t, sdkText(res), "topics:")
}

func TestOfficialSDKOverHTTP(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	key, _, err := auth.GenerateKey(keyFile)
	require.NoError(t, err)
	keys, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	tc := dial(t)
	queue := "sdk-http"
	cfg := activities.Config{MongoDBURI: store.URI, Database: "sdk"}
	w, err := worker.New(tc, worker.Options{TaskQueue: queue, Config: cfg})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: server.Address, Namespace: server.Namespace, TaskQueue: queue, Config: cfg, Wait: 30 * time.Second})
	srv := httptest.NewServer(g.HTTPHandler(keys, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer srv.Close()
	c := sdk.NewClient(&sdk.Implementation{Name: "sdk-test", Version: "1"}, nil)
	s, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{key, http.DefaultTransport}}, MaxRetries: -1}, nil)
	require.NoError(t, err)
	defer s.Close()
	checkSession(t, s)

	// Every knowledge tool, with the official client.
	ctx := context.Background()
	call := func(name string, args map[string]any) map[string]any {
		res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err)
		require.False(t, res.IsError, "%s: %s", name, sdkText(res))
		var out map[string]any
		require.NoError(t, json.Unmarshal([]byte(sdkText(res)), &out))
		return out
	}
	call("weft_ingest", map[string]any{"text": "Tokens expire after an hour; sign in again to get a new one.", "source": "tokens.md", "collection": "kb"})
	call("weft_ingest", map[string]any{"text": "Invoices are emailed on the first day of each month.", "source": "invoices.md", "collection": "kb"})
	require.Equal(t, "tokens.md", call("weft_search", map[string]any{"query": "when does my token expire", "collection": "kb"})["results"].([]any)[0].(map[string]any)["source"])
	require.Equal(t, "tokens.md", call("weft_query", map[string]any{"query": "token expiry", "collection": "kb", "limit": 1})["results"].([]any)[0].(map[string]any)["source"])
	require.Equal(t, float64(1), call("weft_rerank", map[string]any{"query": "monthly invoice", "documents": []any{"tokens expire", "invoices each month"}})["results"].([]any)[0].(map[string]any)["index"])
	require.Equal(t, float64(100), call("weft_embed", map[string]any{"text": "hello"})["dimensions"])
	require.Contains(t, call("weft_similarity", map[string]any{"text1": "a", "text2": "b"}), "similarity")
	require.Len(t, call("weft_collections", map[string]any{})["collections"], 1)
	require.NotEmpty(t, call("weft_models", map[string]any{})["models"])
	require.NotEmpty(t, call("weft_explain", map[string]any{"topic": "rag"})["content"])
	require.NotEmpty(t, call("weft_estimate", map[string]any{"docs": 10})["estimates"])

	// A workflow to completion, with its review approved through MCP.
	id := call("weft_run_workflow", map[string]any{"name": "approval-demo"})["executionId"].(string)
	require.Eventually(t, func() bool {
		pending, _ := call("weft_execution", map[string]any{"id": id})["pendingReviews"].([]any)
		return len(pending) == 1
	}, 20*time.Second, 100*time.Millisecond)
	call("weft_review", map[string]any{"id": id, "decision": "approve", "reviewer": "sdk"})
	require.Eventually(t, func() bool { return call("weft_execution", map[string]any{"id": id})["status"] == "completed" }, 20*time.Second, 100*time.Millisecond)

	_, err = sdk.NewClient(&sdk.Implementation{Name: "nokey", Version: "1"}, nil).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp", MaxRetries: -1}, nil)
	require.Error(t, err, "no key, no session")
}

// TestOfficialSDKOverStdio builds the weft binary and talks to `weft mcp` over stdio, the way a
// desktop client starts it.
func TestOfficialSDKOverStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the weft binary")
	}
	bin := weftBinary(t)
	cmd := exec.Command(bin, "mcp", "--address", server.Address)
	c := sdk.NewClient(&sdk.Implementation{Name: "sdk-stdio", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := c.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer s.Close()
	checkSession(t, s)
}
