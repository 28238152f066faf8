package integration

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/mcp"
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
	key, _, err := mcp.GenerateKey(keyFile)
	require.NoError(t, err)
	keys, err := mcp.LoadKeys(keyFile)
	require.NoError(t, err)
	g := mcp.New(mcp.Options{Version: "test", Address: server.Address, Namespace: server.Namespace})
	srv := httptest.NewServer(g.HTTPHandler(keys, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer srv.Close()
	c := sdk.NewClient(&sdk.Implementation{Name: "sdk-test", Version: "1"}, nil)
	s, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{key, http.DefaultTransport}}, MaxRetries: -1}, nil)
	require.NoError(t, err)
	defer s.Close()
	checkSession(t, s)

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
	bin := filepath.Join(t.TempDir(), "weft")
	build := exec.Command("go", "build", "-o", bin, "../cmd/weft")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())
	cmd := exec.Command(bin, "mcp", "--address", server.Address)
	c := sdk.NewClient(&sdk.Implementation{Name: "sdk-stdio", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := c.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer s.Close()
	checkSession(t, s)
}
