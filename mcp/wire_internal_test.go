package mcp

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
	"slices"
	"strings"
	"testing"

	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/auth"
	"github.com/weftworks/weft/events"
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
	g := stepsGateway()
	srv := httptest.NewServer(g.HTTPHandler(keys, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(srv.Close)

	const calls = 300
	lost := 0
	for i := 0; i < calls; i++ {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{"progressToken":%d,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}},"name":"wf_steps","arguments":{}}}`, i+1, i)
		status, _, out, _ := post(t, http.MethodPost, srv.URL, key, strings.NewReader(body), map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "wf_steps"})
		require.Equal(t, http.StatusOK, status, out)
		if got := sseSequence(t, out); !slices.Equal(got, wantSteps) {
			lost++
			t.Logf("call %d: %v", i, got)
		}
	}
	require.Zero(t, lost, "%d of %d calls lost progress", lost, calls)
}

const steps = 5

var wantSteps = []string{"1", "2", "3", "4", "5", "result"}

// stepsGateway offers wf_steps, a tool whose run's steps end one after another, the last right
// before its result.
func stepsGateway() *Gateway {
	g := New(Options{Version: "test", CheckResults: true, Address: "127.0.0.1:1", Namespace: "default", NoBuiltins: true})
	g.srv.AddTool(mcplib.NewTool("wf_steps"), func(ctx context.Context, _ mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
		rep := g.reporterFor(ctx, steps)
		for i := 1; i <= steps; i++ {
			rep.event(events.Event{Type: events.StepCompleted, Step: fmt.Sprint("s", i), Run: "r"})
		}
		return mcplib.NewToolResultText("done"), nil
	})
	return g
}

// TestProgressOverStdioBeforeTheResult: over stdio, on both protocol eras, a call's progress
// notifications are all written before its result, call after call. mcp-go writes them from
// another goroutine than the result (wire); before the gateway waited for them, the last ones
// often came after it.
func TestProgressOverStdioBeforeTheResult(t *testing.T) {
	for _, version := range []string{"2025-06-18", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			g := stepsGateway()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			served := make(chan error, 1)
			go func() { served <- g.serveStdio(ctx, inR, outW) }()
			t.Cleanup(func() {
				cancel()
				_ = inW.Close()
				_ = outR.Close()
				<-served
			})
			lines := bufio.NewScanner(outR)
			lines.Buffer(make([]byte, 1<<20), 1<<20)
			send := func(msg string) {
				_, err := io.WriteString(inW, msg+"\n")
				require.NoError(t, err)
			}
			meta := ""
			if version == "2026-07-28" {
				meta = `,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}`
			} else {
				send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
				require.True(t, lines.Scan(), "the initialize result")
				send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			}
			const calls = 200
			late := 0
			for i := 1; i <= calls; i++ {
				send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{"progressToken":%d%s},"name":"wf_steps","arguments":{}}}`, i, i, meta))
				var got []string
				for len(got) < len(wantSteps) && lines.Scan() {
					var m struct {
						Method string `json:"method"`
						Params struct {
							Token    float64 `json:"progressToken"`
							Progress float64 `json:"progress"`
						} `json:"params"`
						Result json.RawMessage `json:"result"`
					}
					require.NoError(t, json.Unmarshal(lines.Bytes(), &m), lines.Text())
					switch {
					case m.Method == string(mcplib.MethodNotificationProgress) && m.Params.Token == float64(i):
						got = append(got, fmt.Sprint(m.Params.Progress))
					case m.Result != nil:
						got = append(got, "result")
					}
				}
				if !slices.Equal(got, wantSteps) {
					late++
					t.Logf("call %d: %v", i, got)
				}
			}
			require.Zero(t, late, "%d of %d calls had progress after their result", late, calls)
		})
	}
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

// TestNotificationsCountsOnlyNotifications: the written-notification count takes a message
// that is a progress or log notification, as mcp-go marshals it, on a stdio line or in an SSE
// event, and not a result whose data holds the same words (a tool may return anything): on
// stdio one such result counted would have let every later call's result overtake its progress.
func TestNotificationsCountsOnlyNotifications(t *testing.T) {
	line := func(v any) string {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return string(b)
	}
	// as mcp-go's server sends them: a JSONRPCNotification
	note := func(method mcplib.MCPMethod, params map[string]any) string {
		return line(mcplib.JSONRPCNotification{JSONRPC: mcplib.JSONRPC_VERSION, Notification: mcplib.Notification{
			Method: string(method), Params: mcplib.NotificationParams{AdditionalFields: params}}})
	}
	progress := note(mcplib.MethodNotificationProgress, map[string]any{"progressToken": "tok", "progress": 1, "total": 5})
	logMsg := note(mcplib.MethodNotificationMessage, map[string]any{"level": "info", "logger": "weft", "data": "step s1 completed"})
	result := line(mcplib.JSONRPCResponse{JSONRPC: "2.0", ID: mcplib.NewRequestId(int64(7)), Result: map[string]any{
		"structuredContent": map[string]any{"method": mcplib.MethodNotificationProgress, "echo": `"method":"notifications/message"`}}})
	for _, tc := range []struct {
		name string
		p    string
		want int
	}{
		{"a progress line", progress + "\n", 1},
		{"a log line", logMsg + "\n", 1},
		{"an SSE event", "event: message\ndata: " + progress + "\n\n", 1},
		{"two lines in one write", progress + "\n" + logMsg + "\n", 2},
		{"a result holding the words", result + "\n", 0},
		{"the result as an SSE event", "event: message\ndata: " + result + "\n\n", 0},
		{"a line without its end", progress, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, notifications([]byte(tc.p)))
		})
	}
}
