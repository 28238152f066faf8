package integration

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/mcp"
)

// TestIdentityOnStartsAndDecisions: through the real gateway on the embedded stack, a runner's
// starts record its name (origin client for its own definition, operator for a catalog name), a
// reviewer's decision records its name and roles as authenticated whatever reviewer it types,
// and neither may do the other's part.
func TestIdentityOnStartsAndDecisions(t *testing.T) {
	c := dial(t)
	queue := "identity"
	startWorker(t, c, queue, nil)
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	carl, _, err := auth.GenerateNamedKey(keyFile, "carl", []string{"runner"})
	require.NoError(t, err)
	ana, _, err := auth.GenerateNamedKey(keyFile, "ana", []string{"reviewer", "finance"})
	require.NoError(t, err)
	keys, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: server.Address, Namespace: server.Namespace, TaskQueue: queue, Wait: 30 * time.Second})
	srv := httptest.NewServer(g.HTTPHandler(keys, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer srv.Close()

	as := func(key string) func(name string, args map[string]any) (map[string]any, string, bool) {
		return newMCPSession(t, srv.URL+"/mcp", key, "identity").call
	}
	runner, reviewer := as(carl), as(ana)

	// carl's own definition: origin client, started by carl
	inline := map[string]any{"name": "inline-review", "steps": []any{
		map[string]any{"id": "check", "tool": "review", "inputs": map[string]any{"title": "ok?", "data": map[string]any{"amount": 12}}}}}
	out, msg, isErr := runner("weft_run_workflow", map[string]any{"definition": inline})
	require.False(t, isErr, msg)
	inlineID := out["executionId"].(string)
	req := startRequest(t, c, inlineID)
	require.Equal(t, weftclient.OriginClient, req.GetOrigin())
	require.Equal(t, "carl", req.GetStartedBy())

	// a catalog workflow by name: the operator's definition, started by carl
	out, msg, isErr = runner("weft_run_workflow", map[string]any{"name": "approval-demo"})
	require.False(t, isErr, msg)
	named := startRequest(t, c, out["executionId"].(string))
	require.Equal(t, weftclient.OriginOperator, named.GetOrigin())
	require.Equal(t, "carl", named.GetStartedBy())

	// ana may not start; carl may not decide
	_, msg, isErr = reviewer("weft_run_workflow", map[string]any{"name": "approval-demo"})
	require.True(t, isErr)
	require.Contains(t, msg, `needs the role "runner"`)
	_, msg, isErr = runner("weft_review", map[string]any{"id": inlineID, "decision": "approve"})
	require.True(t, isErr)
	require.Contains(t, msg, `needs the role "reviewer"`)

	var digest string
	require.Eventually(t, func() bool {
		st, _, _ := reviewer("weft_execution", map[string]any{"id": inlineID})
		pending, _ := st["pendingReviews"].([]any)
		if len(pending) != 1 {
			return false
		}
		digest, _ = pending[0].(map[string]any)["digest"].(string)
		return true
	}, 20*time.Second, 100*time.Millisecond)
	out, msg, isErr = reviewer("weft_review", map[string]any{"id": inlineID, "decision": "approve", "reviewer": "mallory", "digest": digest})
	require.False(t, isErr, msg)
	require.Equal(t, "ana", out["reviewer"], "the key decides; the typed reviewer is ignored")
	require.Equal(t, true, out["authenticated"])
	require.Eventually(t, func() bool {
		// decided, the run is carl's again: a reviewer reads only runs waiting for its decision
		st, _, _ := runner("weft_execution", map[string]any{"id": inlineID})
		return st["status"] == "completed"
	}, 20*time.Second, 100*time.Millisecond)
}
