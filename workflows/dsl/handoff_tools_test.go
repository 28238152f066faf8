package dsl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

// TestHandoffToolsAreCheckedAndResolved: the tools of an agent handed to meet the same checks as
// the step's own (a workflow tool names a workflow, never a path; an MCP server is declared), and
// the workflows they call are resolved with the file's.
func TestHandoffToolsAreCheckedAndResolved(t *testing.T) {
	file := func(tool string) []byte {
		return []byte(`{"name":"h","steps":[{"id":"a","tool":"agent","inputs":{"prompt":"p","tools":["search"],
		  "handoffs":[{"name":"b","description":"d","agent":{"tools":["` + tool + `"]}}]}}]}`)
	}
	for _, c := range []struct{ tool, err string }{
		{"workflow:../../etc/passwd", "is not a name: a called workflow is named by letters"},
		{"workflow:", "workflow tool without a name"},
		{"mcp:nowhere", `MCP server "nowhere" is not declared`},
	} {
		_, err := dsl.Load("h.json", file(c.tool))
		require.ErrorContains(t, err, c.err, c.tool)
	}
	w, err := dsl.Load("h.json", file("workflow:research-and-summarize"))
	require.NoError(t, err)
	require.Equal(t, []string{"research-and-summarize"}, dsl.CalledWorkflows(w.Def))
}
