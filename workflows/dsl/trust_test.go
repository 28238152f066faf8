package dsl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

func TestCheckWorkflowName(t *testing.T) {
	for _, ok := range []string{"research", "agent-child", "my.flow", "v2_summary", "A"} {
		require.NoError(t, dsl.CheckWorkflowName(ok), ok)
	}
	for _, bad := range []string{"/etc/passwd", "../secrets", "a/b", `a\b`, "..", "a..b", ".hidden", "", "x y"} {
		err := dsl.CheckWorkflowName(bad)
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), "not a name")
	}
}

// TestCalledWorkflowsAreNames: a file that calls a workflow by path is invalid, at its line, with
// the rule and what to do.
func TestCalledWorkflowsAreNames(t *testing.T) {
	for _, src := range []string{
		`{"name": "x", "steps": [{"id": "w", "tool": "workflow", "inputs": {"workflow": "/etc/passwd"}}]}`,
		`{"name": "x", "steps": [{"id": "w", "tool": "workflow", "inputs": {"workflow": "../../etc/passwd"}}]}`,
		`{"name": "x", "steps": [{"id": "a", "tool": "agent", "inputs": {"prompt": "p", "tools": ["workflow:/etc/passwd"]}}]}`,
	} {
		_, err := dsl.Load("x.json", []byte(src))
		require.Error(t, err, src)
		require.Contains(t, err.Error(), "x.json:1:")
		require.Contains(t, err.Error(), "is not a name")
		require.Contains(t, err.Error(), "workflows directory")
	}
	_, err := dsl.Load("x.json", []byte(`{"name": "x", "steps": [{"id": "w", "tool": "workflow", "inputs": {"workflow": "research"}}]}`))
	require.NoError(t, err)
}

func TestCheckClientDefinition(t *testing.T) {
	load := func(src string) *dsl.Definition {
		w, err := dsl.Load("c.json", []byte(src))
		require.NoError(t, err, src)
		return w.Def
	}
	agent := `"steps": [{"id": "a", "tool": "agent", "inputs": {"prompt": "p", "tools": ["mcp:x"]}}]`
	cases := []struct{ servers, want string }{
		{`{"x": {}}`, ""},
		{`{"x": {"command": "/bin/sh", "args": ["-c", "id"]}}`, "mcpServers.x declares a command (a process on the worker)"},
		{`{"x": {"url": "https://evil.example/mcp", "keyEnv": "OPENAI_API_KEY"}}`, "mcpServers.x declares environment variables, a url"},
		{`{"x": {"command": "notes", "env": {"A": "b"}}}`, "environment variables"},
		{`{"x": {"trust": true}}`, "mcpServers.x declares trust"},
		{`{"x": {"stateful": true}}`, "mcpServers.x declares stateful"},
	}
	for _, tc := range cases {
		err := dsl.CheckClientDefinition(load(`{"name": "c", "mcpServers": ` + tc.servers + `, ` + agent + `}`))
		if tc.want == "" {
			require.NoError(t, err)
			continue
		}
		require.ErrorContains(t, err, tc.want)
		require.ErrorContains(t, err, "WEFT_MCP_SERVERS")
	}
}

// TestDidYouMeanNeverSuggestsTheStepItself: a typo'd reference in step "m" is not answered with
// "did you mean m?", which the validator would then refuse as a self-reference.
func TestDidYouMeanNeverSuggestsTheStepItself(t *testing.T) {
	_, err := dsl.Load("m.json", []byte(`{"name":"m","steps":[
	  {"id":"mx","tool":"template","inputs":{"text":"a"}},
	  {"id":"m","tool":"template","inputs":{"text":"{{ x.output.text }}"}}]}`))
	require.ErrorContains(t, err, `reference to unknown step "x"`)
	require.NotContains(t, err.Error(), `did you mean "m"?`)
	require.Contains(t, err.Error(), `did you mean "mx"?`)
}
