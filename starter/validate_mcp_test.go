package starter_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestValidateOperatorServerTrust: with this shell's WEFT_MCP_SERVERS, weft validate says when a
// file's own server with "trust": true is one the operator declares without trust (the worker
// runs the operator's declaration, so its write tools wait for approval); a server the operator
// trusts, or does not declare, gets no warning, nor does any file without the setting.
func TestValidateOperatorServerTrust(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "servers.json")
	require.NoError(t, os.WriteFile(policy, []byte(`{"mcpServers":{"crm":{"url":"https://crm.example.com/mcp"},"notes":{"command":"notes-mcp","trust":true}}}`), 0o600))
	file := filepath.Join(dir, "f.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"name":"f","mcpServers":{
  "crm":{"command":"crm-mcp","trust":true},
  "notes":{"command":"my-notes","trust":true},
  "mine":{"command":"mine-mcp","trust":true}},
 "steps":[{"id":"a","tool":"agent","inputs":{"prompt":"p","tools":["mcp:crm","mcp:notes","mcp:mine"]}}]}`), 0o600))
	t.Setenv("OPENAI_BASE_URL", "http://localhost:1") // no endpoint warning in the way
	tests := []struct {
		name   string
		policy string
		want   []string
	}{
		{name: "the operator declares crm without trust", policy: policy, want: []string{
			file + `:2:38: warning: mcpServers.crm.trust: "trust": true is ignored: the operator declares "crm" too (WEFT_MCP_SERVERS, ` + policy + `), without trust, and the worker runs the operator's declaration, not this file's command or url; its tools that may change things wait for approval (set "trust": true on "crm" in ` + policy + ` to run its write tools without approval, or give this file's server another name to run its own)`,
			file + ": valid, 1 step, 1 warning"}},
		{name: "no WEFT_MCP_SERVERS", want: []string{file + ": valid, 1 step"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("WEFT_MCP_SERVERS", tc.policy)
			code, out, errOut := weft(t, "", "validate", file)
			require.Equal(t, 0, code, out+errOut)
			require.Equal(t, tc.want, strings.Split(strings.TrimSpace(out), "\n"))
		})
	}
}
