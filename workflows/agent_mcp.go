package workflows

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
)

// mcpTool is a tool of an external MCP server the file declares: listed and called by
// activities on the worker (which holds any key), offered to the model as SERVER__TOOL.
type mcpTool struct {
	server                string
	config                map[string]any
	origin                string
	trust                 bool
	name                  string
	desc                  string
	schema                any
	checker               *jsonschema.Schema
	readOnly, destructive bool
}

func (t *mcpTool) Name() string         { return toolspec.MCPToolPrefix + t.server + "/" + t.name }
func (t *mcpTool) FunctionName() string { return functionName(t.server + "__" + t.name) }
func (t *mcpTool) EditSchema() any      { return t.schema }
func (t *mcpTool) Definition() map[string]any {
	return map[string]any{"name": t.FunctionName(), "description": t.desc, "parameters": t.schema}
}
func (t *mcpTool) Check(args map[string]any) error {
	if t.checker == nil {
		return nil
	}
	if err := t.checker.Validate(toJSONValue(args)); err != nil {
		return errors.New(schemaMessage(err))
	}
	return nil
}
func (t *mcpTool) Call(ctx workflow.Context, r *run, sr *stepRun, args map[string]any, callKey string) (any, error) {
	opts := mcpOptions(sr.cs.Title() + " · " + t.Name())
	if r.namedActivities {
		opts.ActivityID = r.activityID(sr, callKey)
	}
	in := mcpRequest(t.config, t.origin, t.trust)
	in["tool"], in["arguments"] = t.name, args
	out, err := r.mcpActivity(ctx, sr, t.server, callKey, toolspec.ActivityMCPCall, t.readOnly && !t.destructive, opts, in)
	if err != nil {
		return nil, err
	}
	res, _ := out.(map[string]any)
	if isErr, _ := res["isError"].(bool); isErr {
		return nil, fmt.Errorf("%s answered with an error: %s", t.Name(), orNoText(res["text"]))
	}
	if res["structured"] != nil {
		return res["structured"], nil
	}
	return res["text"], nil
}

// needsApproval: tools of an untrusted external server that may change or destroy things wait
// for a person even when approve does not list them (MCP's annotations decide).
func needsApproval(t agentTool) bool {
	m, ok := t.(*mcpTool)
	return ok && !m.trust && (m.destructive || !m.readOnly)
}

func mcpOptions(summary string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: toolspec.MCPTimeout,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 3,
			NonRetryableErrorTypes: []string{toolspec.ErrInvalidInput, toolspec.ErrMissingConfig}},
		Summary: summary,
	}
}

// mcpTools lists a declared server's tools ("NAME" for all, "NAME/TOOL" for one).
func (r *run) mcpTools(ctx workflow.Context, sr *stepRun, ref string) ([]agentTool, error) {
	server, only, _ := strings.Cut(ref, "/")
	decl, ok := r.wf.Def.MCPServers[server]
	if !ok {
		return nil, fmt.Errorf("tools: MCP server %q is not declared in mcpServers", server)
	}
	config := mcpConfig(server, decl, r.origin)
	opts := mcpOptions(sr.cs.Title() + " · list " + server + " tools")
	if r.namedActivities {
		opts.ActivityID = r.activityID(sr, sr.cs.ID+"/mcp-"+server)
	}
	out, err := r.mcpActivity(ctx, sr, server, sr.cs.ID+"/mcp-"+server, toolspec.ActivityMCPList, true, opts, mcpRequest(config, r.origin, decl.Trust))
	if err != nil {
		return nil, temporal.NewApplicationErrorWithOptions(fmt.Sprintf("listing the tools of MCP server %s: %s", server, errorText(err)), runwire.ErrStepFailed,
			temporal.ApplicationErrorOptions{NonRetryable: true, Cause: err})
	}
	res, _ := out.(map[string]any)
	list, _ := res["tools"].([]any)
	// The worker says whether the server is trusted (the operator's declaration, or the
	// operator's own file); lists recorded before it said so keep the file's word.
	trust := decl.Trust
	if v, ok := res["trust"].(bool); ok {
		trust = v
	}
	var tools []agentTool
	for _, e := range list {
		m, _ := e.(map[string]any)
		name, _ := m["name"].(string)
		if only != "" && name != only {
			continue
		}
		desc, _ := m["description"].(string)
		t := &mcpTool{server: server, config: config, origin: r.origin, trust: trust, name: name, desc: desc, schema: m["inputSchema"]}
		t.readOnly, _ = m["readOnly"].(bool)
		t.destructive, _ = m["destructive"].(bool)
		if t.schema == nil {
			t.schema = map[string]any{"type": "object"}
		}
		if sch, err := compileSchema(t.Name(), t.schema); err == nil {
			t.checker = sch
		}
		tools = append(tools, t)
	}
	if only != "" && len(tools) == 0 {
		return nil, fmt.Errorf("tools: MCP server %s has no tool %q", server, only)
	}
	return tools, nil
}

// mcpRequest is the input of the MCP activities: the server as the file declares it and who the
// definition came from; the worker decides what is reached (activities.resolveMCPServer).
// Requests of operator files look as they did before origins existed.
func mcpRequest(config map[string]any, origin string, trust bool) map[string]any {
	in := map[string]any{"server": config}
	if origin != "" {
		in["origin"] = origin
	}
	if trust {
		in["trust"] = true
	}
	return in
}

// mcpConfig is the server as the file declares it. A client's definition sends only the name:
// what it declares is never reached.
func mcpConfig(name string, s dsl.MCPServer, origin string) map[string]any {
	c := map[string]any{"name": name}
	if origin != "" {
		return c
	}
	if s.Command != "" {
		c["command"] = s.Command
		args := make([]any, len(s.Args))
		for i, a := range s.Args {
			args[i] = a
		}
		c["args"] = args
		env := map[string]any{}
		//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
		for k, v := range s.Env {
			env[k] = v
		}
		c["env"] = env
	}
	if s.URL != "" {
		c["url"] = s.URL
		c["keyEnv"] = s.KeyEnv
	}
	return c
}

// orNoText is an MCP tool's error text, or says it gave none (never "<nil>").
func orNoText(v any) string {
	if s, _ := v.(string); s != "" {
		return s
	}
	return "(no message)"
}
