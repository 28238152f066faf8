package integration

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/auth"
	"github.com/weftworks/weft/mcp"
	"github.com/weftworks/weft/worker"
)

// TestAgentRunsReviewsAndReads drives weft through the MCP gateway the way an agent would:
// ingest, search, start a workflow, see it wait for review, approve it, read the result.
func TestAgentRunsReviewsAndReads(t *testing.T) {
	c := dial(t)
	queue := "mcp"
	cfg := activities.Config{MongoDBURI: store.URI, Database: "mcp"}
	w, err := worker.New(c, worker.Options{TaskQueue: queue, Config: cfg})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	keyFile := filepath.Join(t.TempDir(), "keys.json")
	key, _, err := auth.GenerateNamedKey(keyFile, "agent", nil) // decisions record the key's name
	require.NoError(t, err)
	keys, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: server.Address, Namespace: server.Namespace, TaskQueue: queue, Config: cfg, Wait: 30 * time.Second})
	srv := httptest.NewServer(g.HTTPHandler(keys, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer srv.Close()

	session := newMCPSession(t, srv.URL+"/mcp", key, "agent")
	callTool := func(name string, args map[string]any) map[string]any {
		out, txt, isErr := session.call(name, args)
		require.False(t, isErr, "%s: %s", name, txt)
		return out
	}

	out := callTool("weft_ingest", map[string]any{"text": "Reviews pause a run until someone approves, edits or rejects it.", "source": "review.md", "collection": "agent"})
	require.Equal(t, float64(1), out["chunksCreated"], "ingest ran as a durable execution on the worker")
	out = callTool("weft_search", map[string]any{"query": "who decides on a paused run", "collection": "agent"})
	require.Equal(t, "review.md", out["results"].([]any)[0].(map[string]any)["source"])

	out = callTool("weft_run_workflow", map[string]any{"name": "approval-demo", "inputs": map[string]any{"version": "7.0"}})
	id := out["executionId"].(string)
	require.NotEmpty(t, id)
	require.Eventually(t, func() bool {
		st := callTool("weft_execution", map[string]any{"id": id})
		pending, _ := st["pendingReviews"].([]any)
		return len(pending) == 1
	}, 20*time.Second, 100*time.Millisecond)
	require.Eventually(t, func() bool {
		list := callTool("weft_executions", map[string]any{"awaitingReview": true})
		for _, e := range list["executions"].([]any) {
			if e.(map[string]any)["id"] == id {
				return true
			}
		}
		return false
	}, 15*time.Second, 200*time.Millisecond)
	out = callTool("weft_review", map[string]any{"id": id, "decision": "approve", "reviewer": "agent"})
	require.Equal(t, true, out["recorded"])
	require.Eventually(t, func() bool {
		st := callTool("weft_execution", map[string]any{"id": id})
		return st["status"] == "completed"
	}, 20*time.Second, 100*time.Millisecond)
	st := callTool("weft_execution", map[string]any{"id": id})
	require.Equal(t, "Release 7.0: 3 changes (approved by agent)", st["output"].(map[string]any)["announcement"])
}
