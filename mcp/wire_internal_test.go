package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
)

// TestProgressOfSessionlessCallsArrives: a tool call of protocol 2026-07-28 (no session) whose
// steps end just before it returns gets every progress notification, in order, before its
// result, call after call. mcp-go dropped one the forwarder held when the call returned (wire);
// before the gateway waited for them to be written, a few of these calls lost one.
func TestProgressOfSessionlessCallsArrives(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	key, _, err := auth.GenerateNamedKey(keyFile, "a", nil)
	require.NoError(t, err)
	keys, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	g := New(Options{Version: "test", Address: "127.0.0.1:1", Namespace: "default", NoBuiltins: true})
	const steps = 5
	// a run's steps ending one after another, the last right before the result
	g.srv.AddTool(mcplib.NewTool("wf_steps"), func(ctx context.Context, _ mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
		rep := g.reporterFor(ctx, steps)
		for i := 1; i <= steps; i++ {
			rep.event(weftclient.Event{Type: weftclient.EventStepCompleted, Step: fmt.Sprint("s", i), Run: "r"})
		}
		return mcplib.NewToolResultText("done"), nil
	})
	srv := httptest.NewServer(g.HTTPHandler(keys, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(srv.Close)

	want := []string{"1", "2", "3", "4", "5", "result"}
	const calls = 300
	lost := 0
	for i := 0; i < calls; i++ {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{"progressToken":%d,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}},"name":"wf_steps","arguments":{}}}`, i+1, i)
		status, _, out, _ := post(t, http.MethodPost, srv.URL, key, strings.NewReader(body), map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "wf_steps"})
		require.Equal(t, http.StatusOK, status, out)
		if got := sseSequence(t, out); !slices.Equal(got, want) {
			lost++
			t.Logf("call %d: %v", i, got)
		}
	}
	require.Zero(t, lost, "%d of %d calls lost progress", lost, calls)
}

// sseSequence is the progress values and "result" of an SSE answer, in order.
func sseSequence(t *testing.T, out string) []string {
	var seen []string
	for _, line := range strings.Split(out, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var m struct {
			Method string `json:"method"`
			Params struct {
				Progress float64 `json:"progress"`
			} `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		require.NoError(t, json.Unmarshal([]byte(data), &m))
		if m.Method == string(mcplib.MethodNotificationProgress) {
			seen = append(seen, fmt.Sprint(m.Params.Progress))
		} else if m.Result != nil {
			seen = append(seen, "result")
		}
	}
	return seen
}
