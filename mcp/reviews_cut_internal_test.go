package mcp

import (
	"context"
	"fmt"
	"testing"

	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/internal/testkit/reviewfake"
)

// TestReviewListingsSayWhereTheyWereCut: weft_executions with awaitingReview and the review
// prompt read the newest waiting executions (limit, and 50 for the prompt); when more wait they
// say so, with how many reviews wait at least and how to read more, and say nothing of a cut when
// they read every execution waiting.
func TestReviewListingsSayWhereTheyWereCut(t *testing.T) {
	const cut20 = "At least 20 waiting: the reviews of the 20 newest runs waiting are listed; older runs wait too, and they may have waited longest. weft_executions with awaitingReview and limit 100 reads more."
	const cut100 = "At least 100 waiting: the reviews of the 100 newest runs waiting are listed; older runs wait too, and they may have waited longest. The older ones are listed once newer ones are decided."
	const cut50 = "At least 50 waiting: the reviews of the 50 newest runs waiting are listed; older runs wait too, and they may have waited longest. weft_executions with awaitingReview and limit 100 reads more. Tell the person so: the reviews below are not all that wait."
	for _, tc := range []struct {
		name     string
		n, limit int
		cut      string // weft_executions' cut ("" none)
		prompt   string // what the prompt says of it ("" nothing: checked by "At least" being absent)
	}{
		{"every execution read", 10, 20, "", ""},
		{"cut at the default limit", 150, 20, cut20, cut50},
		{"cut at the highest limit", 150, 100, cut100, cut50},
		{"cut by the prompt only", 30, 50, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := New(Options{})
			g.client = weftclient.New(&reviewfake.Runs{N: tc.n}, "test")
			res := callTool(t, g, "weft_executions", map[string]any{"awaitingReview": true, "limit": float64(tc.limit)})
			require.False(t, res.IsError)
			out, ok := res.StructuredContent.(map[string]any)
			require.True(t, ok, "a structured result: %T", res.StructuredContent)
			require.Len(t, out["reviews"], min(tc.n, tc.limit))
			if tc.cut == "" {
				require.NotContains(t, out, "cut")
			} else {
				require.Equal(t, tc.cut, out["cut"])
			}

			p, err := g.reviewPrompt(context.Background(), mcplib.GetPromptRequest{})
			require.NoError(t, err)
			require.Len(t, p.Messages, 1)
			text, ok := p.Messages[0].Content.(mcplib.TextContent)
			require.True(t, ok)
			require.Contains(t, text.Text, fmt.Sprintf("%d review(s) wait", min(tc.n, reviewPromptRuns)))
			if tc.prompt == "" {
				require.NotContains(t, text.Text, "At least")
			} else {
				require.Contains(t, text.Text, tc.prompt)
			}
		})
	}
}

// TestReviewListingsCutShowingNone: when the newest executions waiting show no review (decided
// since visibility marked them, or none the reader may see) and more wait, weft_executions and
// the prompt say that no review waits among them and older ones wait too, not "at least 0".
func TestReviewListingsCutShowingNone(t *testing.T) {
	g := New(Options{})
	g.client = weftclient.New(&reviewfake.Runs{N: 150, Decided: true}, "test")
	res := callTool(t, g, "weft_executions", map[string]any{"awaitingReview": true})
	out, ok := res.StructuredContent.(map[string]any)
	require.True(t, ok)
	require.Equal(t, "No review you may see waits in the 20 newest runs waiting; older runs wait too, and they may have waited longest. weft_executions with awaitingReview and limit 100 reads more.", out["cut"])

	p, err := g.reviewPrompt(context.Background(), mcplib.GetPromptRequest{})
	require.NoError(t, err)
	text, ok := p.Messages[0].Content.(mcplib.TextContent)
	require.True(t, ok)
	require.Equal(t, "No review you may see waits in the 50 newest runs waiting; older runs wait too, and they may have waited longest. weft_executions with awaitingReview and limit 100 reads more. Tell the person so.", text.Text)
}

// TestExecutionsLimitInRange: weft_executions takes a limit of 1 to 100, its schema's range; one
// out of it (or not a whole number) is refused with the range, not read as the client's default
// of 100 (0) or passed on (500).
func TestExecutionsLimitInRange(t *testing.T) {
	g := New(Options{})
	g.client = weftclient.New(&reviewfake.Runs{N: 150}, "test")
	call := func(args map[string]any) *mcplib.CallToolResult { return callTool(t, g, "weft_executions", args) }
	for _, limit := range []any{0.0, -3.0, 101.0, 500.0, 2.5, "20"} {
		res := call(map[string]any{"awaitingReview": true, "limit": limit})
		require.True(t, res.IsError, "limit %v", limit)
		require.Contains(t, res.Content[0].(mcplib.TextContent).Text, "give a whole number of executions from 1 to 100", "limit %v", limit)
	}
	for _, limit := range []float64{1, 100} {
		res := call(map[string]any{"awaitingReview": true, "limit": limit})
		require.False(t, res.IsError, "limit %v", limit)
		require.Len(t, res.StructuredContent.(map[string]any)["reviews"], int(limit))
	}
	res := call(map[string]any{"awaitingReview": true, "search": "queue"})
	require.True(t, res.IsError)
	require.NotContains(t, res.Content[0].(mcplib.TextContent).Text, "every waiting one at once", "awaitingReview reads the limit newest, not every one")
}

// callTool calls a tool's registered handler (its arguments checked and decoded as a call's are).
func callTool(t *testing.T, g *Gateway, name string, args map[string]any) *mcplib.CallToolResult {
	t.Helper()
	st := g.srv.GetTool(name)
	require.NotNil(t, st, "tool %s", name)
	req := mcplib.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := st.Handler(context.Background(), req)
	require.NoError(t, err)
	return res
}
