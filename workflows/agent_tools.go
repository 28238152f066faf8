package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/dsl"
	"github.com/weftworks/weft/workflows/expr"
)

// agentTool is one tool an agent (or an llm step) offers the model. The loop in step_agent.go
// knows only this interface: a new kind of tool (an external MCP server's tool, memory) is a
// new implementation, and the loop does not change.
type agentTool interface {
	// Name is the tool as the file names it ("search", "workflow:research").
	Name() string
	// FunctionName is the name the model sees (letters, digits, _ and -; at most 64).
	FunctionName() string
	// Definition is the function definition sent to the model: {name, description, parameters}.
	Definition() map[string]any
	// Check validates the model's arguments; its error goes back to the model.
	Check(args map[string]any) error
	// EditSchema is the JSON Schema a reviewer's edited arguments must satisfy.
	EditSchema() any
	// Call runs the tool durably and returns its output.
	Call(ctx workflow.Context, r *run, sr *stepRun, args map[string]any, callKey string) (any, error)
}

var functionNameBad = regexp.MustCompile(`[^a-zA-Z0-9_-]+`)

func functionName(s string) string {
	s = functionNameBad.ReplaceAllString(s, "_")
	if len(s) > 64 {
		s = s[:64]
	}
	return s
}

// registryTool is a weft tool from the registry, run as its activity. scope, when set, is the
// memory scope of the session: the model neither sees nor chooses it.
type registryTool struct {
	spec  *toolspec.Spec
	scope string
}

func (t registryTool) Name() string         { return t.spec.Name }
func (t registryTool) FunctionName() string { return functionName(t.spec.Name) }
func (t registryTool) EditSchema() any      { return t.parameters() }
func (t registryTool) Definition() map[string]any {
	return map[string]any{"name": t.FunctionName(), "description": t.spec.Description, "parameters": t.parameters()}
}

// parameters is the tool's input schema as the model sees it: without scope when the session
// sets it.
func (t registryTool) parameters() any {
	s := decodeSchema(t.spec.InputJSON())
	m, ok := s.(map[string]any)
	if t.scope == "" || !ok {
		return s
	}
	if props, ok := m["properties"].(map[string]any); ok {
		delete(props, "scope")
	}
	if req, ok := m["required"].([]any); ok {
		m["required"] = slices.DeleteFunc(req, func(v any) bool { return v == "scope" })
	}
	return m
}

// withScope sets the session's scope; a model that names another is told it cannot.
func (t registryTool) withScope(args map[string]any) (map[string]any, error) {
	if t.scope == "" {
		return args, nil
	}
	if s, ok := args["scope"]; ok && s != t.scope {
		return nil, fmt.Errorf("scope: the memory scope is the session's (%s) and cannot be chosen: leave scope out", t.scope)
	}
	out := make(map[string]any, len(args)+1)
	//workflowcheck:ignore the result does not depend on map order (copied)
	for k, v := range args {
		out[k] = v
	}
	out["scope"] = t.scope
	return out, nil
}

func (t registryTool) Check(args map[string]any) error {
	args, err := t.withScope(args)
	if err != nil {
		return err
	}
	canon, _ := t.spec.Canonical(args)
	if err := t.spec.ValidateInputs(toJSONValue(canon)); err != nil {
		return errors.New(schemaMessage(err))
	}
	return nil
}
func (t registryTool) Call(ctx workflow.Context, r *run, sr *stepRun, args map[string]any, callKey string) (any, error) {
	args, err := t.withScope(args)
	if err != nil {
		return nil, err
	}
	args, _ = t.spec.Canonical(args)
	r.fillDefaults(t.spec, args)
	opts := activityOptions(dsl.Policy{}, t.spec, sr.cs.Title()+" · "+t.spec.Name)
	if r.namedActivities {
		opts.ActivityID = r.activityID(sr, callKey)
	}
	return r.runActivity(ctx, sr, t.spec.Name, opts, args)
}

// workflowTool runs another workflow as a child workflow; its inputs are the parameters.
type workflowTool struct {
	name string
	def  *dsl.Definition
}

func (t workflowTool) Name() string         { return toolspec.WorkflowToolPrefix + t.name }
func (t workflowTool) FunctionName() string { return functionName("workflow_" + t.name) }
func (t workflowTool) EditSchema() any      { return dsl.InputSchema(t.def) }
func (t workflowTool) Definition() map[string]any {
	desc := t.def.Description
	if desc == "" {
		desc = "Run the " + t.name + " workflow."
	}
	return map[string]any{"name": t.FunctionName(), "description": desc, "parameters": dsl.InputSchema(t.def)}
}
func (t workflowTool) Check(args map[string]any) error {
	_, err := dsl.ResolveInputs(t.def, nil, args)
	return err
}
func (t workflowTool) Call(ctx workflow.Context, r *run, sr *stepRun, args map[string]any, callKey string) (any, error) {
	return r.runChild(ctx, sr, t.name, args, r.childWorkflowID(ctx, callKey))
}

// decodeSchema turns a registry schema into the value sent to the model.
func decodeSchema(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return map[string]any{"type": "object"}
	}
	return v
}

// agentTools builds the tools named in an agent's tools input. MCP server tools are listed with
// one activity per server (ctx nil: none allowed).
func (r *run) agentTools(ctx workflow.Context, sr *stepRun, v any) ([]agentTool, error) {
	list, _ := v.([]any)
	var out []agentTool
	seen := map[string]bool{}
	for _, e := range list {
		name, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("tools: %s is %s, not a tool name: write each tool as its name, e.g. \"search\"", expr.Text(e), expr.TypeName(e))
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		if srv, ok := strings.CutPrefix(name, toolspec.MCPToolPrefix); ok {
			if ctx == nil {
				return nil, fmt.Errorf("tools: %s: only agent steps can call MCP server tools", name)
			}
			tools, err := r.mcpTools(ctx, sr, srv)
			if err != nil {
				return nil, err
			}
			out = append(out, tools...)
			continue
		}
		if wf, ok := strings.CutPrefix(name, toolspec.WorkflowToolPrefix); ok {
			def, err := r.calledDefinition(wf)
			if err != nil {
				return nil, err
			}
			out = append(out, workflowTool{name: wf, def: def})
			continue
		}
		spec, ok := toolspec.Lookup(name)
		if !ok || spec.Kind != toolspec.KindActivity {
			return nil, fmt.Errorf("tools: %q is not a tool an agent can call (activity tools: %s, or workflow:NAME)", name, strings.Join(dsl.AgentToolNames(), ", "))
		}
		tool := registryTool{spec: spec}
		if memoryScoped(spec) && ctx != nil {
			scope, err := r.sessionScope(ctx, name)
			if err != nil {
				return nil, err
			}
			tool.scope = scope
		}
		out = append(out, tool)
	}
	return out, nil
}

// fillDefaults sets db, collection and model from the workflow's defaults when the tool takes
// them and the arguments leave them out.
func (r *run) fillDefaults(spec *toolspec.Spec, args map[string]any) {
	defaults, _ := r.env["defaults"].(map[string]any)
	for _, k := range []string{"db", "collection", "model", "scope"} {
		if _, set := args[k]; set || defaults[k] == nil || !spec.HasInput(k) {
			continue
		}
		args[k] = defaults[k]
	}
}
