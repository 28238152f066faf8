package dsl

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/weftworks/weft/activities/toolspec"
)

// AgentToolNames are the registry tools an agent may call: the activity tools.
func AgentToolNames() []string {
	var out []string
	for _, s := range toolspec.All() {
		if s.Kind == toolspec.KindActivity {
			out = append(out, s.Name)
		}
	}
	return out
}

// checkAgentTools checks the literal entries of an agent's (or llm's) tools list and approve list.
func (c *compiler) checkAgentTools(cs *CompiledStep, inPtr string) {
	tools, _ := cs.Step.Inputs["tools"].([]any)
	known := map[string]bool{}
	for i, t := range tools {
		name, ok := t.(string)
		if !ok || strings.Contains(name, "{{") {
			continue // objects (llm function definitions) and templates are checked by the schema or at run time
		}
		known[name] = true
		ptr := inPtr + "/tools/" + strconv.Itoa(i)
		if srv, ok := strings.CutPrefix(name, toolspec.MCPToolPrefix); ok {
			server, _, _ := strings.Cut(srv, "/")
			if _, declared := c.def.MCPServers[server]; !declared {
				c.errAt(ptr, fmt.Sprintf("MCP server %q is not declared", server), `declare it in "mcpServers": {"`+server+`": {"command": ...} or {"url": ...}}`)
			}
			if cs.Tool == "llm" {
				c.errAt(ptr, "an llm step cannot offer MCP server tools", "use an agent step: it lists the server's tools and runs the calls")
			}
			continue
		}
		if wf, ok := strings.CutPrefix(name, toolspec.WorkflowToolPrefix); ok {
			if wf == "" {
				c.errAt(ptr, "workflow tool without a name", `write "workflow:NAME" with a template name or a file path`)
			}
			continue
		}
		spec, ok := toolspec.Lookup(name)
		switch {
		case !ok:
			hint := didYouMean(name, AgentToolNames())
			if hint == "" {
				hint = "agent tools: " + strings.Join(AgentToolNames(), ", ") + `, or "workflow:NAME"`
			}
			c.errAt(ptr, fmt.Sprintf("unknown tool %q", name), hint)
		case spec.Kind != toolspec.KindActivity:
			c.errAt(ptr, fmt.Sprintf("%s is a %s step, not a tool an agent can call", name, spec.Kind),
				"agents call activity tools (search, query, ingest, http, ...) or workflow:NAME")
		}
	}
	approve, _ := cs.Step.Inputs["approve"].([]any)
	for i, a := range approve {
		name, ok := a.(string)
		if !ok || name == "*" || known[name] || strings.Contains(name, "{{") || strings.HasPrefix(name, toolspec.MCPToolPrefix) {
			continue
		}
		c.errAt(inPtr+"/approve/"+strconv.Itoa(i), fmt.Sprintf("approve names %q, which is not in tools", name),
			"list the tool in tools too, or remove it from approve")
	}
}

// CalledWorkflows lists the workflows def calls by literal name, sorted: workflow steps'
// "workflow" input and agents' "workflow:NAME" tools.
func CalledWorkflows(def *Definition) []string {
	set := map[string]bool{}
	for _, st := range def.Steps {
		switch st.Tool {
		case "workflow":
			if s, ok := st.Inputs["workflow"].(string); ok && s != "" && !strings.Contains(s, "{{") {
				set[s] = true
			}
		case "agent":
			tools, _ := st.Inputs["tools"].([]any)
			for _, t := range tools {
				if s, ok := t.(string); ok {
					if wf, ok := strings.CutPrefix(s, toolspec.WorkflowToolPrefix); ok && wf != "" {
						set[wf] = true
					}
				}
			}
		}
	}
	return sortedKeys(set)
}

// InputSchema is the JSON Schema of a workflow's inputs, as agents and MCP clients see them.
func InputSchema(def *Definition) map[string]any {
	props := map[string]any{}
	var required []string
	for _, name := range sortedKeys(def.Inputs) {
		in := def.Inputs[name]
		p := map[string]any{"type": in.Type}
		if in.Description != "" {
			p["description"] = in.Description
		}
		if in.Default != nil {
			p["default"] = in.Default
		}
		props[name] = p
		if in.Required {
			required = append(required, name)
		}
	}
	sort.Strings(required)
	sch := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		sch["required"] = required // never null: some clients reject a null list
	}
	return sch
}
