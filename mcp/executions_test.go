package mcp_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	weftclient "github.com/weftworks/weft/client"
)

// TestExecutionsCursorIsCheckedFirst: weft_executions names its cursor field when the cursor is
// not one a listing gave, and refuses cursor or search with awaitingReview, before it asks
// Temporal anything (the gateway's Temporal is unreachable); a token a listing gave passes on.
func TestExecutionsCursorIsCheckedFirst(t *testing.T) {
	srv, keys := rolesGateway(t)
	c := connect(t, srv.URL, keys["rita"])
	good := weftclient.PageToken(weftclient.RunSummary{ID: "weft-1"})
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"not a token", map[string]any{"cursor": "not-a-token"}, `cursor: page token "not-a-token" is not one a listing gave: start again from the first page`},
		{"cursor with awaitingReview", map[string]any{"cursor": good, "awaitingReview": true}, "cursor and search page and filter the listing"},
		{"search with awaitingReview", map[string]any{"search": "x", "awaitingReview": true}, "leave them out"},
		{"a token a listing gave", map[string]any{"cursor": good, "search": "demo", "limit": 5}, "set TEMPORAL_ADDRESS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, c, "weft_executions", tc.args)
			require.True(t, res.IsError)
			require.Contains(t, text(res), tc.want)
		})
	}
}
