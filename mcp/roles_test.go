package mcp_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/internal/testkit/reviewfake"
	"github.com/weftworks/weft/mcp"
)

// rolesGateway serves a gateway (Temporal unreachable) with one key per identity: rita reads,
// ana reviews, carl runs, fin has only a routing role, and an entry of an old key file (no name,
// no roles) is an admin. A call that passes the role check fails at Temporal ("set
// TEMPORAL_ADDRESS"); a refused one never gets there.
func rolesGateway(t *testing.T) (*httptest.Server, map[string]string) {
	t.Helper()
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	// an entry as `weft mcp generate-key` wrote it before keys had names: sha256("old-key")
	require.NoError(t, os.WriteFile(keyFile, []byte(`{"keys":[{"id":"0a0b0c0d","sha256":"`+
		`762c08fc17a1cc5f00d248f8b50f2f2f4d17ff2934ac31e64deacb3f5bb3f2ec","created":"2024-01-01T00:00:00Z"}]}`), 0o600))
	keys := map[string]string{"old": "old-key"}
	for name, roles := range map[string][]string{"rita": {"reader"}, "ana": {"reviewer", "finance"}, "carl": {"runner"}, "fin": {"finance"}} {
		k, _, err := auth.GenerateNamedKey(keyFile, name, roles)
		require.NoError(t, err)
		keys[name] = k
	}
	loaded, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: "127.0.0.1:1", Namespace: "default"})
	srv := httptest.NewServer(g.HTTPHandler(loaded, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(srv.Close)
	return srv, keys
}

func toolNames(t *testing.T, c *client.Client) map[string]bool {
	t.Helper()
	tools, err := c.ListTools(context.Background(), mcplib.ListToolsRequest{})
	require.NoError(t, err)
	out := map[string]bool{}
	for _, tl := range tools.Tools {
		out[tl.Name] = true
	}
	return out
}

// TestKeysSeeAndCallWhatTheirRolesAllow tries every boundary of the roles through the real HTTP
// handler: what each key is offered in tools/list, and which calls are refused with the role
// named and the command that grants it.
func TestKeysSeeAndCallWhatTheirRolesAllow(t *testing.T) {
	srv, keys := rolesGateway(t)
	all := toolNames(t, connect(t, srv.URL, keys["old"]))
	require.True(t, all["weft_run_workflow"] && all["weft_review"] && all["wf_approval_demo"] && all["weft_ingest"], "an old key without roles is an admin")

	run := map[string]any{"definition": map[string]any{"name": "x", "steps": []any{map[string]any{"id": "t", "tool": "template", "inputs": map[string]any{"text": "hi"}}}}}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"weft_run_workflow", run},
		{"weft_run_workflow", map[string]any{"name": "approval-demo"}},
		{"wf_approval_demo", map[string]any{"version": "1"}},
		{"weft_review", map[string]any{"id": "weft-x", "decision": "approve"}},
		{"weft_cancel", map[string]any{"id": "weft-x"}},
		{"weft_retry", map[string]any{"id": "weft-x"}},
		{"weft_chat_start", map[string]any{}},
		{"weft_ingest", map[string]any{"text": "x", "source": "x.md", "collection": "c"}},
		{"weft_execution", map[string]any{"id": "weft-x"}},
		{"weft_executions", map[string]any{}},
	}
	for _, tc := range []struct {
		who string
		// the role each call is refused for ("" allowed), in the order of calls
		refused []string
		sees    []string
		hidden  []string
	}{
		{"rita", []string{"runner", "runner", "runner", "reviewer", "runner", "runner", "runner", "runner", "", ""},
			[]string{"weft_execution", "weft_executions", "weft_workflows", "weft_validate_workflow", "weft_query", "weft_search", "weft_chat_read"},
			[]string{"weft_run_workflow", "weft_review", "weft_cancel", "weft_retry", "weft_ingest", "weft_chat_start", "weft_chat_send", "weft_schedule", "wf_approval_demo"}},
		{"ana", []string{"runner", "runner", "runner", "", "runner", "runner", "runner", "runner", "", ""},
			[]string{"weft_review", "weft_execution", "weft_query"},
			[]string{"weft_run_workflow", "weft_cancel", "weft_ingest", "wf_approval_demo"}},
		{"carl", []string{"", "", "", "reviewer", "", "", "", "", "", ""},
			[]string{"weft_run_workflow", "wf_approval_demo", "weft_cancel", "weft_ingest", "weft_execution"},
			[]string{"weft_review"}},
		{"fin", []string{"runner", "runner", "runner", "reviewer", "runner", "runner", "runner", "runner", "reader", "reader"},
			nil,
			[]string{"weft_execution", "weft_query", "weft_run_workflow", "weft_review"}},
	} {
		t.Run(tc.who, func(t *testing.T) {
			c := connect(t, srv.URL, keys[tc.who])
			seen := toolNames(t, c)
			for _, n := range tc.sees {
				require.True(t, seen[n], "%s sees %s", tc.who, n)
			}
			for _, n := range tc.hidden {
				require.False(t, seen[n], "%s does not see %s", tc.who, n)
			}
			if tc.who == "fin" {
				require.Empty(t, seen, "a routing role alone grants nothing")
			}
			for i, cl := range calls {
				res := call(t, c, cl.tool, cl.args)
				msg := text(res)
				if tc.refused[i] == "" {
					require.NotContains(t, msg, "needs the role", "%s may call %s", tc.who, cl.tool)
					continue
				}
				require.True(t, res.IsError, "%s calling %s", tc.who, cl.tool)
				require.Contains(t, msg, cl.tool+` needs the role "`+tc.refused[i]+`"`)
				require.Contains(t, msg, "weft mcp generate-key --name "+tc.who, "the refusal says how the operator grants it")
				require.Contains(t, msg, "--role "+tc.refused[i])
				require.NotContains(t, msg, "TEMPORAL_ADDRESS", "a refused call never reaches Temporal")
			}
		})
	}
}

// TestResourcesNeedReader: reading a resource needs the reader role too.
func TestResourcesNeedReader(t *testing.T) {
	srv, keys := rolesGateway(t)
	read := func(who string) error {
		req := mcplib.ReadResourceRequest{}
		req.Params.URI = "weft://workflows/approval-demo"
		_, err := connect(t, srv.URL, keys[who]).ReadResource(context.Background(), req)
		return err
	}
	require.NoError(t, read("rita"))
	err := read("fin")
	require.Error(t, err)
	require.Contains(t, err.Error(), `needs the role "reader"`)
}

// TestLookupsAndActsAreOwnerScoped crosses the read and act rules through the real HTTP handler,
// over a Temporal of runs started by bob, carl and the operator (reviewfake.Owners): a near miss
// of an id suggests only runs the key may read, whichever tool looks it up, and weft_cancel,
// weft_retry and weft_schedule act only for the run's starter and an admin.
func TestLookupsAndActsAreOwnerScoped(t *testing.T) {
	const probe = "weft-finance-approval-"
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	keys := map[string]string{}
	for name, roles := range map[string][]string{"rita": {"reader"}, "carl": {"runner"}, "bob": {"runner"}, "root": {"admin"}} {
		k, _, err := auth.GenerateNamedKey(keyFile, name, roles)
		require.NoError(t, err)
		keys[name] = k
	}
	loaded, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	f := &reviewfake.Runs{N: 6, Prefix: probe, MemoKey: weftclient.MemoStartedBy, StartedBy: reviewfake.Owners,
		Stuck: func(i int) bool { return i == 3 }}
	g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: "127.0.0.1:1", Namespace: "default"})
	g.UseClient(weftclient.New(f, "test"))
	srv := httptest.NewServer(g.HTTPHandler(loaded, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(srv.Close)

	near := map[string]string{ // what each key is told it may have meant (newest first, three at most)
		"rita": probe + "5, " + probe + "2?",
		"carl": probe + "5, " + probe + "4, " + probe + "2?",
		"bob":  probe + "5, " + probe + "3, " + probe + "2?",
		"root": probe + "5, " + probe + "4, " + probe + "3?",
	}
	for who, want := range near {
		c := connect(t, srv.URL, keys[who])
		for _, tool := range []string{"weft_execution", "weft_cancel", "weft_retry"} {
			if who == "rita" && tool != "weft_execution" {
				continue // a reader may not call them at all (TestKeysSeeAndCallWhatTheirRolesAllow)
			}
			res := call(t, c, tool, map[string]any{"id": probe})
			require.True(t, res.IsError, "%s %s", who, tool)
			require.Contains(t, text(res), `no run "`+probe+`" (did you mean `+want+")", "%s %s", who, tool)
		}
	}

	const bobs, operators = probe + "0", probe + "2"
	for _, tc := range []struct {
		who, tool, id string
		want          string // in the answer
		refused       bool
	}{
		{"carl", "weft_cancel", bobs, "run " + bobs + " was started by bob: carl may read only", true},
		{"carl", "weft_retry", bobs, "run " + bobs + " was started by bob: carl may read only", true},
		{"carl", "weft_cancel", operators, "cannot cancel run " + operators + ": it is the operator's", true},
		{"carl", "weft_retry", operators, "cannot retry run " + operators + ": it is the operator's", true},
		{"carl", "weft_schedule", "nightly", "cannot pause schedule nightly: it is the operator's", true},
		{"bob", "weft_retry", bobs, "is still running: cancel it first", true}, // the check passed: the run's own state answers
		{"bob", "weft_cancel", bobs, `"cancelRequested":true`, false},
		{"root", "weft_retry", probe + "3", "is still running: cancel it first", true},
		{"root", "weft_cancel", probe + "3", `"terminated":true`, false}, // its workflow task keeps failing: the caller is told it was terminated
	} {
		args := map[string]any{"id": tc.id}
		if tc.tool == "weft_schedule" {
			args["action"] = "pause"
		}
		res := call(t, connect(t, srv.URL, keys[tc.who]), tc.tool, args)
		require.Equal(t, tc.refused, res.IsError, "%s %s %s: %s", tc.who, tc.tool, tc.id, text(res))
		require.Contains(t, text(res), tc.want, "%s %s %s", tc.who, tc.tool, tc.id)
	}
	require.Equal(t, []string{bobs, probe + "3"}, f.Cancelled(), "only the starter's and the admin's cancels reached Temporal")
	require.Equal(t, []string{probe + "3"}, f.Terminated(), "the stuck run was terminated, and only it")
}
