package mcp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
)

// TestResultLeavesOutNulls: a tool's result is sent without the members that hold null, whether
// the tool handed back plain JSON values (copied, never changed) or Go values (encoded first).
func TestResultLeavesOutNulls(t *testing.T) {
	type item struct {
		Name string   `json:"name"`
		Tags []string `json:"tags"`
	}
	for _, c := range []struct {
		name string
		in   any
		want string
	}{
		{"plain", map[string]any{"a": 1.0, "b": nil, "c": map[string]any{"d": nil, "e": "x"}}, `{"a":1,"c":{"e":"x"}}`},
		{"plain list keeps its nulls", map[string]any{"l": []any{nil, map[string]any{"x": nil}}}, `{"l":[null,{}]}`},
		{"typed nil map and list", map[string]any{"m": map[string]any(nil), "l": []any(nil), "k": true}, `{"k":true}`},
		{"ints", map[string]any{"n": 3, "m": int64(4)}, `{"m":4,"n":3}`},
		{"go values", map[string]any{"items": []item{{Name: "a"}}}, `{"items":[{"name":"a"}]}`},
		{"a struct", item{Name: "b"}, `{"name":"b"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			before, err := json.Marshal(c.in)
			require.NoError(t, err)
			r := result(c.in)
			require.False(t, r.IsError)
			got, err := json.Marshal(r.StructuredContent)
			require.NoError(t, err)
			require.JSONEq(t, c.want, string(got))
			require.JSONEq(t, c.want, r.Content[0].(mcplib.TextContent).Text, "the text is the same JSON")
			after, err := json.Marshal(c.in)
			require.NoError(t, err)
			require.Equal(t, string(before), string(after), "the tool's value is not changed")
		})
	}
}

// TestCheckResultsRefusesWhatTheSchemaDoesNot: with CheckResults a result that does not fit its
// tool's output schema is refused by the server; without it the result goes out as it is.
func TestCheckResultsRefusesWhatTheSchemaDoesNot(t *testing.T) {
	for _, check := range []bool{true, false} {
		g := New(Options{Version: "test", CheckResults: check})
		tool := mcplib.NewTool("odd", mcplib.WithOutputSchema[struct {
			N int `json:"n"`
		}]())
		g.srv.AddTool(tool, func(context.Context, mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
			return result(map[string]any{"n": "not a number"}), nil
		})
		c, err := client.NewInProcessClient(g.srv)
		require.NoError(t, err)
		ctx := context.Background()
		require.NoError(t, c.Start(ctx))
		_, err = c.Initialize(ctx, mcplib.InitializeRequest{})
		require.NoError(t, err)
		req := mcplib.CallToolRequest{}
		req.Params.Name = "odd"
		res, err := c.CallTool(ctx, req)
		if check {
			require.True(t, err != nil || res.IsError, "checked: the server refuses the result")
		} else {
			require.NoError(t, err)
			require.False(t, res.IsError)
		}
		require.NoError(t, c.Close())
	}
}
