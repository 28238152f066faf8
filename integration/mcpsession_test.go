package integration

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
)

// mcpSession is an MCP client over streamable HTTP to the gateway at url (…/mcp) with a bearer
// key, initialized as clientName; closed when the test ends.
type mcpSession struct {
	t  testing.TB
	mc *client.Client
}

func newMCPSession(t testing.TB, url, key, clientName string) *mcpSession {
	t.Helper()
	mc, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}))
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, mc.Start(ctx))
	t.Cleanup(func() { _ = mc.Close() })
	init := mcplib.InitializeRequest{}
	init.Params.ProtocolVersion = mcplib.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcplib.Implementation{Name: clientName, Version: "1"}
	_, err = mc.Initialize(ctx, init)
	require.NoError(t, err)
	return &mcpSession{t: t, mc: mc}
}

// call calls a tool and returns its structured content, its text and whether it is an error.
func (s *mcpSession) call(name string, args map[string]any) (map[string]any, string, bool) {
	s.t.Helper()
	req := mcplib.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := s.mc.CallTool(context.Background(), req)
	require.NoError(s.t, err)
	var txt strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcplib.TextContent); ok {
			txt.WriteString(tc.Text)
		}
	}
	out, _ := res.StructuredContent.(map[string]any)
	return out, txt.String(), res.IsError
}
