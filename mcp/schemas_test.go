package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/mcp"
	"github.com/weftworks/weft/workflows/dsl"
)

// listed is tools/list as a client reads it off the wire: each tool's JSON by name.
func listed(t *testing.T) (*client.Client, map[string]map[string]any) {
	return listedFrom(t, mcp.Options{Version: "test", CheckResults: true, Address: "127.0.0.1:1"})
}

func listedFrom(t *testing.T, o mcp.Options) (*client.Client, map[string]map[string]any) {
	g := mcp.New(o)
	c, err := client.NewInProcessClient(g.Server())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	require.NoError(t, c.Start(ctx))
	_, err = c.Initialize(ctx, mcplib.InitializeRequest{})
	require.NoError(t, err)
	res, err := c.ListTools(ctx, mcplib.ListToolsRequest{})
	require.NoError(t, err)
	out := map[string]map[string]any{}
	for _, tl := range res.Tools {
		b, err := json.Marshal(tl)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		out[tl.Name] = m
	}
	return c, out
}

// TestToolSchemasPortable: every tool offered has an object output schema (each whose output is
// declared: all of them, the wf_ tools' the run they start), and no schema has a type list.
func TestToolSchemasPortable(t *testing.T) {
	_, tools := listed(t)
	withOutput := 0
	for name, tl := range tools {
		require.Empty(t, toolspec.TypeLists(tl["inputSchema"]), "%s's input schema has a type list", name)
		out, ok := tl["outputSchema"].(map[string]any)
		require.True(t, ok, "%s declares its output", name)
		require.Equal(t, "object", out["type"], "%s: MCP takes object output schemas", name)
		require.Empty(t, toolspec.TypeLists(out), "%s's output schema has a type list", name)
		withOutput++
	}
	require.Equal(t, len(tools), withOutput)
	require.GreaterOrEqual(t, withOutput, 15+13+1, "the knowledge tools, the gateway's own and the wf_ tools")
	// a field that takes an object or a text: anyOf, not ["object","string"]
	def := tools["weft_validate_workflow"]["inputSchema"].(map[string]any)["properties"].(map[string]any)["definition"].(map[string]any)
	require.Equal(t, []any{map[string]any{"type": "object"}, map[string]any{"type": "string"}}, def["anyOf"])
	require.Equal(t, []any{"definition"}, tools["weft_validate_workflow"]["inputSchema"].(map[string]any)["required"])
}

// TestWorkflowToolSchemasPortable: the wf_ tool of an operator's workflow with an input of every
// declared type (dsl.InputTypes) lists no type list either, beside every other tool.
func TestWorkflowToolSchemasPortable(t *testing.T) {
	dir := t.TempDir()
	inputs := map[string]any{}
	for _, typ := range dsl.InputTypes {
		inputs["in_"+typ] = map[string]any{"type": typ, "description": "a " + typ}
	}
	b, err := json.Marshal(map[string]any{"name": "every-type", "mcp": map[string]any{"expose": true}, "inputs": inputs,
		"steps": []any{map[string]any{"id": "t", "tool": "template", "inputs": map[string]any{"text": "hi"}}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "every-type.json"), b, 0o644))
	_, tools := listedFrom(t, mcp.Options{Version: "test", CheckResults: true, Address: "127.0.0.1:1", WorkflowsDir: dir})
	tl, ok := tools["wf_every_type"]
	require.True(t, ok, "the exposed workflow is a tool")
	require.Len(t, tl["inputSchema"].(map[string]any)["properties"], len(dsl.InputTypes))
	for name, tl := range tools {
		for _, field := range []string{"inputSchema", "outputSchema"} {
			require.Empty(t, toolspec.TypeLists(tl[field]), "%s's %s has a type list", name, field)
		}
	}
}

// TestResultsConformToOutputSchemas: the structured content of calls that succeed without Temporal
// is valid against the output schema the tool lists (checked here apart from the server's own
// check, which would turn a result that is not into an error).
func TestResultsConformToOutputSchemas(t *testing.T) {
	c, tools := listed(t)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"weft_models", map[string]any{"category": "rerank"}},
		{"weft_models", map[string]any{}},
		{"weft_explain", map[string]any{"topic": "durability"}},
		{"weft_similarity", map[string]any{"text1": "reset my password", "text2": "recover a login"}},
		{"weft_embed", map[string]any{"text": "hello"}},
		{"weft_estimate", map[string]any{"docs": 10}},
		{"weft_workflows", map[string]any{}},
		{"weft_validate_workflow", map[string]any{"definition": map[string]any{"name": "x", "steps": []any{map[string]any{"id": "a", "tool": "serch"}}}}},
		{"weft_validate_workflow", map[string]any{"definition": `{"name":"x","steps":[{"id":"a","tool":"template","inputs":{"template":"hi"}}]}`}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			req := mcplib.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = tc.tool, tc.args
			res, err := c.CallTool(context.Background(), req)
			require.NoError(t, err)
			require.False(t, res.IsError, text(res))
			require.NotNil(t, res.StructuredContent)
			b, err := json.Marshal(tools[tc.tool]["outputSchema"])
			require.NoError(t, err)
			doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
			require.NoError(t, err)
			comp := jsonschema.NewCompiler()
			require.NoError(t, comp.AddResource("weft://out.json", doc))
			sch, err := comp.Compile("weft://out.json")
			require.NoError(t, err)
			sb, err := json.Marshal(res.StructuredContent)
			require.NoError(t, err)
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(sb)))
			require.NoError(t, err)
			require.NoError(t, sch.Validate(inst), "%s: %s", tc.tool, sb)
			require.NotContains(t, string(sb), "null", "a null field is left out")
		})
	}
}
