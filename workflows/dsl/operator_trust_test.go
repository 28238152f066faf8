package dsl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

// TestOperatorServerTrustIsIgnored: "trust": true on a server the file names without a command
// or url (the operator's, WEFT_MCP_SERVERS) is dropped at run time, while its "stateful" is
// read: validate says so, naming the server and the agent steps that use it; a server the file
// declares itself keeps its trust without a warning.
func TestOperatorServerTrustIsIgnored(t *testing.T) {
	const hint = ` (remove "trust" here; to run its write tools without approval, set "trust": true on "notes" in the worker's WEFT_MCP_SERVERS file, or declare the server in this file with its own command or url)`
	tests := []struct {
		name    string
		servers string
		want    []string
	}{
		{name: "a reference to the operator's server", servers: `{"notes":{"trust":true,"stateful":true}}`, want: []string{
			`f.json:1:33: warning: mcpServers.notes.trust: "trust": true is ignored: "notes" has no command or url here, so it refers to the server the operator declared (WEFT_MCP_SERVERS), whose declaration alone decides trust ("stateful" is read from this file); unless the operator trusts it, its tools that may change things wait for approval in steps "a" and "b"` + hint}},
		{name: "the file's own server", servers: `{"notes":{"command":"notes-mcp","trust":true}}`},
		{name: "a reference without trust", servers: `{"notes":{"stateful":true}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := dsl.Load("f.json", []byte(`{"mcpServers":`+tc.servers+`,"name":"x","steps":[
  {"id":"a","tool":"agent","inputs":{"prompt":"p","tools":["mcp:notes/read"]}},
  {"id":"b","tool":"agent","inputs":{"prompt":"p","tools":["search"],"handoffs":[{"name":"n","description":"d","agent":{"tools":["mcp:notes"]}}]}},
  {"id":"c","tool":"agent","inputs":{"prompt":"p","tools":["search"]}}]}`))
			require.NoError(t, err, "a warning does not make the file invalid")
			var got []string
			for _, d := range w.Warnings {
				got = append(got, d.String())
			}
			require.Equal(t, tc.want, got)
		})
	}
}
