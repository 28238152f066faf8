package mcp_test

import (
	"context"
	"testing"

	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
)

// TestCodeToolsOverMCP: the gateway offers the code tools as vai does (weft_code_index and so on)
// with the registry's schemas and annotations. code_index writes: it is offered to keys with the
// runner role only and runs on the worker as a durable execution, like ingest; the others read
// and run in the gateway for readers.
func TestCodeToolsOverMCP(t *testing.T) {
	srv, keys := rolesGateway(t)
	tools, err := connect(t, srv.URL, keys["old"]).ListTools(context.Background(), mcplib.ListToolsRequest{})
	require.NoError(t, err)
	byName := map[string]mcplib.Tool{}
	for _, tl := range tools.Tools {
		byName[tl.Name] = tl
	}
	readOnly := map[string]bool{"weft_code_index": false, "weft_code_search": true, "weft_code_query": true, "weft_code_find_similar": true, "weft_code_status": true}
	for name, ro := range readOnly {
		require.Contains(t, byName, name)
		require.Equal(t, ro, *byName[name].Annotations.ReadOnlyHint, name)
	}
	require.Equal(t, []string{"query"}, byName["weft_code_query"].InputSchema.Required, "the schema is the registry's")
	require.Contains(t, byName["weft_code_query"].InputSchema.Properties, "filter")
	require.Empty(t, byName["weft_code_index"].InputSchema.Required, "path or repo: the tool says which is missing")
	require.Contains(t, byName["weft_code_index"].InputSchema.Properties, "repo")

	reader := connect(t, srv.URL, keys["rita"])
	seen := toolNames(t, reader)
	for name, ro := range readOnly {
		require.Equal(t, ro, seen[name], "a reader sees %s: %v", name, ro)
	}
	res := call(t, reader, "weft_code_index", map[string]any{"path": "/src", "collection": "code"})
	require.True(t, res.IsError)
	require.Contains(t, text(res), `weft_code_index needs the role "runner"`)
	res = call(t, reader, "weft_code_query", map[string]any{"query": "where are tokens signed", "collection": "code"})
	require.True(t, res.IsError)
	require.Contains(t, text(res), "set MONGODB_URI", "a read runs in the gateway (which has no store here)")
	res = call(t, reader, "weft_code_search", map[string]any{"query": "x", "collection": "code", "filter": map[string]any{"$where": "1"}})
	require.True(t, res.IsError)
	require.Contains(t, text(res), `filter field "$where" is not chunk metadata code_index writes`, "the filter is checked before the store is reached")

	res = call(t, connect(t, srv.URL, keys["carl"]), "weft_code_index", map[string]any{"path": "/src", "collection": "code"})
	require.True(t, res.IsError)
	require.Contains(t, text(res), "set TEMPORAL_ADDRESS", "a runner's code_index runs on the worker, as a durable execution")
}
