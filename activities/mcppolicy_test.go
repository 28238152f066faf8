package activities_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/weftworks/weft/activities"
)

func TestLoadMCPPolicy(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	cases := []struct {
		name, path, want string
		servers          []string
	}{
		{"none", "", "", nil},
		{"declared", write("ok.json", `{"mcpServers":{"notes":{"command":"notes-mcp"},"docs":{"url":"https://docs.example/mcp","keyEnv":"DOCS_KEY"}}}`), "", []string{"docs", "notes"}},
		{"both command and url", write("both.json", `{"mcpServers":{"x":{"command":"a","url":"https://b"}}}`), `server "x" needs exactly one of command`, nil},
		{"neither", write("neither.json", `{"mcpServers":{"x":{}}}`), `server "x" needs exactly one of command`, nil},
		{"unknown field", write("typo.json", `{"mcpServers":{"x":{"comand":"a"}}}`), `unknown field "comand"`, nil},
		{"bad name", write("name.json", `{"mcpServers":{"../x":{"command":"a"}}}`), `server name "../x"`, nil},
		{"missing", filepath.Join(dir, "nope.json"), "no such file", nil},
		{"a fifo is not read", fifo, "not a regular file", nil},
		{"a directory", dir, "not a regular file", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := activities.LoadMCPPolicy(tc.path)
			if tc.want != "" {
				require.ErrorContains(t, err, tc.want)
				require.ErrorContains(t, err, "WEFT_MCP_SERVERS")
				return
			}
			require.NoError(t, err)
			require.ElementsMatch(t, tc.servers, p.Names())
		})
	}
}

// mcpList runs the MCPList activity as the worker registers it.
func mcpList(t *testing.T, cfg activities.Config, in map[string]any) error {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(activities.NewTools(cfg).MCPList, activity.RegisterOptions{Name: activities.ActivityMCPList})
	_, err := env.ExecuteActivity(activities.ActivityMCPList, in)
	return err
}

// TestMCPServersByOrigin crosses the worker's own boundary: whatever the workflow sends, a
// client's definition reaches only what the operator declared, and undeclared URLs meet the
// private-address guard.
func TestMCPServersByOrigin(t *testing.T) {
	dir := t.TempDir()
	pwned := filepath.Join(dir, "pwned")
	policy := filepath.Join(dir, "policy.json")
	require.NoError(t, os.WriteFile(policy, []byte(`{"mcpServers":{"notes":{"command":"/nonexistent/notes-mcp"}}}`), 0o600))
	var hits atomic.Int32
	private := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer private.Close()
	cfg := activities.Config{MCPServersFile: policy}
	sh := map[string]any{"name": "evil", "command": "/bin/sh", "args": []any{"-c", "id > " + pwned}}
	cases := []struct {
		name string
		in   map[string]any
		want string
	}{
		{"a client's command", map[string]any{"server": sh, "origin": "client"}, `MCP server "evil" is not declared by the operator (declared: notes)`},
		{"a client's url and key", map[string]any{"server": map[string]any{"name": "evil", "url": private.URL, "keyEnv": "HOME"}, "origin": "client"}, "not declared by the operator"},
		{"the operator's declaration wins over the file's", map[string]any{"server": map[string]any{"name": "notes", "command": "/bin/sh"}, "origin": "client"}, `command "/nonexistent/notes-mcp" not found`},
		{"a reference to an undeclared server", map[string]any{"server": map[string]any{"name": "ghost"}}, `"ghost" is not declared by the operator`},
		{"an operator file's private url", map[string]any{"server": map[string]any{"name": "local", "url": private.URL + "/mcp"}}, "WEFT_HTTP_ALLOW"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := mcpList(t, cfg, tc.in)
			require.ErrorContains(t, err, tc.want)
			var ae *temporal.ApplicationError
			require.ErrorAs(t, err, &ae)
			require.True(t, ae.NonRetryable(), "no retry helps: %v", err)
			_, statErr := os.Stat(pwned)
			require.True(t, os.IsNotExist(statErr), "nothing ran")
			require.Zero(t, hits.Load(), "nothing reached the private address")
		})
	}
	// The operator allows the private address on purpose.
	err := mcpList(t, activities.Config{MCPServersFile: policy, HTTPAllow: []string{"127.0.0.1"}}, map[string]any{"server": map[string]any{"name": "local", "url": private.URL + "/mcp"}})
	require.Error(t, err, "the fake is no MCP server")
	require.NotContains(t, err.Error(), "WEFT_HTTP_ALLOW")
	require.NotZero(t, hits.Load(), "allowed: the request went out")
}
