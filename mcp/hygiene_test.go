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

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/auth"
)

// hygieneGateway serves a gateway (Temporal unreachable) over real HTTP, with bodies cut after
// bodyTimeout.
func hygieneGateway(t *testing.T, bodyTimeout time.Duration) (*httptest.Server, string) {
	t.Helper()
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	key, _, err := auth.GenerateKey(keyFile)
	require.NoError(t, err)
	keys, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	old := bodyReadTimeout
	bodyReadTimeout = bodyTimeout
	t.Cleanup(func() { bodyReadTimeout = old })
	g := New(Options{Version: "test", CheckResults: true, Address: "127.0.0.1:1", Namespace: "default"})
	srv := httptest.NewServer(g.HTTPHandler(keys, []string{"127.0.0.1", "localhost"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(srv.Close)
	return srv, key
}

// post sends body to /mcp with the key and extra headers; the client gives up after 10 s.
func post(t *testing.T, method, url, key string, body io.Reader, header map[string]string) (int, http.Header, string, time.Duration) {
	t.Helper()
	req, err := http.NewRequest(method, url+"/mcp", body)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	require.NoError(t, err, "the gateway must answer, not hold the request")
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(out), time.Since(start)
}

const pingBody = `{"jsonrpc":"2.0","id":1,"method":"ping"}`

// TestOriginChecked: a page from a host the gateway does not serve is refused (the MCP spec's
// MUST against DNS rebinding), saying how to allow it; clients that send no Origin, and pages
// from an allowed host, go through.
func TestOriginChecked(t *testing.T) {
	srv, key := hygieneGateway(t, BodyReadTimeout)
	cases := []struct {
		name, origin string
		status       int
		want         string
	}{
		{"no Origin (a non-browser client)", "", http.StatusOK, `"result"`},
		{"an allowed host", "http://localhost:5173", http.StatusOK, `"result"`},
		{"an allowed host, another case", "http://LOCALHOST", http.StatusOK, `"result"`},
		{"a foreign host", "https://evil.example", http.StatusForbidden, "start weft mcp with --allowed-host evil.example"},
		{"a foreign host on an allowed port", "http://evil.example:3100", http.StatusForbidden, `origin \"http://evil.example:3100\" are refused`},
		{"the null origin", "null", http.StatusForbidden, "only pages from an allowed host (--allowed-host)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := map[string]string{}
			if c.origin != "" {
				h["Origin"] = c.origin
			}
			status, hdr, out, _ := post(t, http.MethodPost, srv.URL, key, strings.NewReader(pingBody), h)
			require.Equal(t, c.status, status, out)
			require.Contains(t, out, c.want)
			if status == http.StatusForbidden {
				require.Equal(t, "application/json", hdr.Get("Content-Type"))
				require.Contains(t, out, `"error":"forbidden origin"`)
			}
		})
	}
}

// TestGetMCPIs405: the stateless gateway opens no event stream; GET /mcp answers at once.
func TestGetMCPIs405(t *testing.T) {
	srv, key := hygieneGateway(t, BodyReadTimeout)
	status, hdr, out, took := post(t, http.MethodGet, srv.URL, key, nil, map[string]string{"Accept": "text/event-stream"})
	require.Equal(t, http.StatusMethodNotAllowed, status, out)
	require.Equal(t, http.MethodPost, hdr.Get("Allow"))
	require.Contains(t, out, "send each JSON-RPC request with POST /mcp")
	require.Less(t, took, 5*time.Second)
}

// TestSlowBodyIsCut: a body that never finishes arriving (with a valid key) is cut at the read
// deadline with 408, instead of holding the connection.
func TestSlowBodyIsCut(t *testing.T) {
	srv, key := hygieneGateway(t, 200*time.Millisecond)
	pr, pw := io.Pipe()
	t.Cleanup(func() { _ = pw.Close() })
	go func() { _, _ = pw.Write([]byte(`{"jsonrpc":"2.0","id":1,`)) }() // and nothing more
	status, _, out, took := post(t, http.MethodPost, srv.URL, key, pr, nil)
	require.Equal(t, http.StatusRequestTimeout, status, out)
	require.Contains(t, out, "did not arrive within 200ms")
	require.Less(t, took, 5*time.Second)
}

// TestBatchRefused: a JSON-RPC batch gets an error saying batches are not supported.
func TestBatchRefused(t *testing.T) {
	srv, key := hygieneGateway(t, BodyReadTimeout)
	status, _, out, _ := post(t, http.MethodPost, srv.URL, key, strings.NewReader(" \n["+pingBody+","+pingBody+"]"), nil)
	require.Equal(t, http.StatusBadRequest, status, out)
	require.Contains(t, out, `"code":-32600`)
	require.Contains(t, out, "JSON-RPC batches (a JSON array of messages) are not supported: MCP 2025-06-18 removed them")
}

// TestInitializeStillWorks: a client initializes and lists tools through the checks, with a
// short body deadline and an allowed Origin.
func TestInitializeStillWorks(t *testing.T) {
	srv, key := hygieneGateway(t, 200*time.Millisecond)
	c, err := client.NewStreamableHttpClient(srv.URL+"/mcp", transport.WithHTTPHeaders(map[string]string{
		"Authorization": "Bearer " + key, "Origin": "http://127.0.0.1:8080"}))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, c.Start(ctx))
	defer c.Close()
	req := mcplib.InitializeRequest{}
	req.Params.ProtocolVersion = mcplib.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcplib.Implementation{Name: "weft-test", Version: "1"}
	res, err := c.Initialize(ctx, req)
	require.NoError(t, err)
	require.Equal(t, "weft", res.ServerInfo.Name)
	tools, err := c.ListTools(ctx, mcplib.ListToolsRequest{})
	require.NoError(t, err)
	require.NotEmpty(t, tools.Tools)
}

// TestLongCallNotCutByBodyDeadline: the read deadline is lifted once the body is read, so a call
// that outlasts it keeps its context (the server's background read would otherwise hit the
// deadline and cancel it).
func TestLongCallNotCutByBodyDeadline(t *testing.T) {
	const deadline = 100 * time.Millisecond
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			http.Error(w, "cancelled: "+context.Cause(r.Context()).Error(), http.StatusInternalServerError)
		case <-time.After(5 * deadline): // a call lasting well past the body deadline
			_, _ = io.WriteString(w, "done")
		}
	})
	srv := httptest.NewServer(&hygiene{hosts: []string{"127.0.0.1"}, next: next, timeout: deadline})
	defer srv.Close()
	status, _, out, _ := post(t, http.MethodPost, srv.URL, "", strings.NewReader(pingBody), nil)
	require.Equal(t, http.StatusOK, status, out)
	require.Equal(t, "done", out)
}
