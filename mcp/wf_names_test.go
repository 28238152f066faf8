package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/mcp"
)

func TestWorkflowToolName(t *testing.T) {
	for _, tc := range []struct{ name, fallback, want string }{
		{"multi-collection-search", "", "wf_multi_collection_search"},
		{"Docs QA", "docs", "wf_docs_qa"},
		{"  Release notes (v2)! ", "x", "wf_release_notes_v2"},
		{"日本語", "notes-file", "wf_notes_file"},
		{"", "", "wf_workflow"},
		{"a very long workflow name that goes on and on past what clients accept", "", "wf_a_very_long_workflow_name_that_goes_on_and_on_past_what_clien"},
	} {
		got := mcp.WorkflowToolName(tc.name, tc.fallback)
		require.Equal(t, tc.want, got, tc.name)
		require.Regexp(t, `^[a-z0-9_]{1,64}$`, got)
	}
}

// TestWorkflowToolsUseTheWorkflowsName: a file's wf_ tool is named after the workflow's "name",
// not the file's (issue 21), and when two workflows give the same tool name one rule picks who
// gets it: a file over a built-in, then the file whose own name matches, then the first by file
// name; weft_workflows says which was left out and why.
func TestWorkflowToolsUseTheWorkflowsName(t *testing.T) {
	dir := t.TempDir()
	write := func(file, name, desc string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, file), []byte(`{"name": "`+name+`", "description": "`+desc+`", "mcp": {"expose": true},
		  "steps": [{"id": "t", "tool": "template", "inputs": {"text": "x"}}]}`), 0o644))
	}
	write("qa-v3.weft.json", "Docs QA", "answers from the docs")
	write("b-copy.json", "shared", "the copy")
	write("shared.json", "shared", "the original")
	write("a-first.json", "Twins", "first by file name")
	write("z-second.json", "twins", "second by file name")
	write("mine.json", "approval-demo", "my own approval demo")
	g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: "127.0.0.1:1", WorkflowsDir: dir})
	tool := func(name string) *mcplib.Tool {
		st := g.Server().GetTool(name)
		if st == nil {
			return nil
		}
		return &st.Tool
	}
	require.NotNil(t, tool("wf_docs_qa"), "named after the workflow")
	require.Nil(t, tool("wf_qa_v3"), "not after the file")
	require.Nil(t, tool("wf_qa_v3_weft"))
	require.Contains(t, tool("wf_shared").Description, "the original", "the file whose name matches wins")
	require.Nil(t, tool("wf_b_copy"), "the other is not offered under its file name either")
	require.Contains(t, tool("wf_twins").Description, "first by file name")
	require.Contains(t, tool("wf_approval_demo").Description, "my own approval demo", "a file wins over a built-in")
	require.NotNil(t, tool("wf_multi_collection_search"), "other built-ins stay")

	c, err := client.NewInProcessClient(g.Server())
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	require.NoError(t, c.Start(ctx))
	_, err = c.Initialize(ctx, mcplib.InitializeRequest{})
	require.NoError(t, err)
	req := mcplib.CallToolRequest{}
	req.Params.Name = "weft_workflows"
	res, err := c.CallTool(ctx, req)
	require.NoError(t, err)
	require.False(t, res.IsError)
	var out struct {
		Workflows []struct{ Name, Tool string }
		Problems  []string
	}
	require.NoError(t, json.Unmarshal([]byte(res.Content[0].(mcplib.TextContent).Text), &out))
	tools := map[string]string{}
	for _, w := range out.Workflows {
		tools[w.Name] = w.Tool
	}
	require.Equal(t, "wf_docs_qa", tools["qa-v3"])
	require.Equal(t, "wf_shared", tools["shared"])
	require.Empty(t, tools["b-copy"])
	require.Equal(t, "wf_twins", tools["a-first"])
	require.Empty(t, tools["z-second"])
	require.Equal(t, "wf_approval_demo", tools["mine"])
	require.Empty(t, tools["approval-demo"], "the built-in is still listed, without a tool")
	require.ElementsMatch(t, []string{
		`built-in approval-demo (name "approval-demo") is not offered as wf_approval_demo: mine's name gives the same tool, and wf_approval_demo runs mine; give one of them another "name" to offer both`,
		`file b-copy (name "shared") is not offered as wf_shared: shared's name gives the same tool, and wf_shared runs shared; give one of them another "name" to offer both`,
		`file z-second (name "twins") is not offered as wf_twins: a-first's name gives the same tool, and wf_twins runs a-first; give one of them another "name" to offer both`,
	}, out.Problems)
}
