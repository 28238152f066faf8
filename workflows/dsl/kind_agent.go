package dsl

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/internal/english"
	"github.com/weftworks/weft/workflows/expr"
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

// agent and llm: the literal tool names they offer the model, and approve, name tools that exist;
// an agent may wait for a person (the tool calls its approve list names).
func init() {
	kinds[toolspec.Agent.Spec] = stepKind{compile: (*compiler).checkAgentTools, mayWait: true} // its approved tool calls
	kinds[toolspec.Completion.Spec] = stepKind{compile: (*compiler).checkAgentTools}
}

// agentScope are the names an agent's instructions see besides the workflow's.
var agentScope = scope{names: []string{"agent"}}

// AgentCompiled is an agent's compiled value (CompiledStep.Compiled): its instructions,
// rendered before each model call with agent in scope (nil when it writes none), and its
// stopWhen, guardrails and handoffs as far as they are written out (compileAgentConfig). Its
// settings are the step's Input.
type AgentCompiled struct {
	Instructions *expr.Value
	Config       *AgentConfig
}

// Agent is agent step cs's compiled value; nil for another step (an llm step included).
func (cs *CompiledStep) Agent() *AgentCompiled {
	a, _ := cs.Compiled.(*AgentCompiled)
	return a
}

func (a *AgentCompiled) refs() []expr.Ref { return valueRefs(a.Instructions) }

func (a *AgentCompiled) eachRefs(fn func(ptr string, refs []expr.Ref)) {
	eachValueRefs("/instructions", a.Instructions, fn)
}

// compileInstructions compiles an agent's instructions, rendered before each model call.
func (c *compiler) compileInstructions(cs *CompiledStep, inPtr string) {
	t, ok := cs.Lazy["instructions"]
	if !ok || cs.Spec != toolspec.Agent.Spec {
		return
	}
	val, perrs := expr.CompileValue(t)
	for _, pe := range perrs {
		c.errIn(inPtr+"/instructions"+pe.Path, pe.Offset, pe.Msg, pe.Hint)
	}
	cs.Compiled = &AgentCompiled{Instructions: val}
	c.checkValueRefs(inPtr+"/instructions", val, cs.ID, agentScope)
}

// checkAgentTools checks the literal entries of an agent's (or llm's) tools list and approve list.
func (c *compiler) checkAgentTools(cs *CompiledStep, inPtr string) {
	c.compileInstructions(cs, inPtr)
	tools, _ := cs.Step.Inputs["tools"].([]any)
	known := map[string]bool{}
	for i, t := range tools {
		name, ok := t.(string)
		if !ok || strings.Contains(name, "{{") {
			continue // objects (llm function definitions) and templates are checked by the schema or at run time
		}
		known[name] = true
		ptr := inPtr + "/tools/" + strconv.Itoa(i)
		if c.checkPrefixedTool(ptr, name, "") {
			if cs.Spec.ModelCall && strings.HasPrefix(name, toolspec.MCPToolPrefix) {
				c.errAt(ptr, "an llm step cannot offer MCP server tools", "use an agent step: it lists the server's tools and runs the calls")
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
			c.errAt(ptr, fmt.Sprintf("%s is %s step, not a tool an agent can call", name, english.A(string(spec.Kind))),
				"agents call activity tools (search, query, ingest, http, ...) or workflow:NAME")
		}
	}
	if choice, ok := cs.Step.Inputs["toolChoice"].(string); ok && !cs.Spec.ModelCall && !strings.Contains(choice, "{{") {
		switch {
		case !offers(known, choice):
			c.errAt(inPtr+"/toolChoice", fmt.Sprintf("toolChoice %q is neither auto, none nor required, nor one of the tools", choice),
				"name a tool the agent lists in tools, or write auto, none or required")
		case choice != "auto" && choice != "none" && cs.Step.Inputs["tools"] == nil && cs.Step.Inputs["handoffs"] == nil && !c.accepted:
			// an agent with no tools sends no toolChoice: the setting did nothing (runs that
			// accepted it before this check replay as they ran)
			c.errAt(inPtr+"/toolChoice", fmt.Sprintf("toolChoice %q, but the agent offers no tools: it would be ignored", choice),
				"list the tools in tools, or remove toolChoice")
		}
	}
	c.checkStopWhen(cs, inPtr, known)
	c.compileAgentConfig(cs, inPtr)
	c.checkHandoffs(cs, inPtr, known)
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

// checkStopWhen: stopWhen's tools are offered (its patterns are ParseAgentConfig's).
func (c *compiler) checkStopWhen(cs *CompiledStep, inPtr string, known map[string]bool) {
	v := cs.Step.Inputs["stopWhen"]
	list, ok := v.([]any)
	ptr := func(i int) string { return inPtr + "/stopWhen/" + strconv.Itoa(i) }
	if !ok {
		list, ptr = []any{v}, func(int) string { return inPtr + "/stopWhen" }
	}
	for i, e := range list {
		m, _ := e.(map[string]any)
		if tool, ok := m["tool"].(string); ok && !strings.Contains(tool, "{{") && (tool == "auto" || tool == "none" || tool == "required" || !offers(known, tool)) {
			c.errAt(ptr(i)+"/tool", fmt.Sprintf("stopWhen names tool %q, which is not in tools", tool), "name a tool the agent lists in tools")
		}
	}
}

// checkHandoffs: the tools of the handoffs' agents exist (their names and the agents they hand
// to are ParseAgentConfig's).
func (c *compiler) checkHandoffs(cs *CompiledStep, inPtr string, known map[string]bool) {
	list, _ := cs.Step.Inputs["handoffs"].([]any)
	for i, e := range list {
		m, _ := e.(map[string]any)
		ptr := inPtr + "/handoffs/" + strconv.Itoa(i)
		name, _ := m["name"].(string)
		agent, _ := m["agent"].(map[string]any)
		tools, _ := agent["tools"].([]any)
		for j, t := range tools {
			tn, _ := t.(string)
			tptr := ptr + "/agent/tools/" + strconv.Itoa(j)
			if tn == "" || strings.Contains(tn, "{{") || c.checkPrefixedTool(tptr, tn, "handoff "+name+": ") || strings.Contains(tn, ":") {
				continue
			}
			if spec, ok := toolspec.Lookup(tn); !ok || spec.Kind != toolspec.KindActivity {
				c.errAt(tptr, fmt.Sprintf("handoff %s: %q is not a tool an agent can call", name, tn), "agent tools: "+strings.Join(AgentToolNames(), ", ")+`, or "workflow:NAME"`)
			}
		}
	}
}

// checkPrefixedTool checks an agent tool named by a prefix (mcp:SERVER[/TOOL], workflow:NAME)
// and reports whether name was one; what (a handoff's name) leads its messages. The step's own
// tools and its handoffs' are checked by it alike.
func (c *compiler) checkPrefixedTool(ptr, name, what string) bool {
	if srv, ok := strings.CutPrefix(name, toolspec.MCPToolPrefix); ok {
		server, _, _ := strings.Cut(srv, "/")
		if _, declared := c.def.MCPServers[server]; !declared {
			c.errAt(ptr, fmt.Sprintf("%sMCP server %q is not declared", what, server), `declare it in "mcpServers": {"`+server+`": {}} to use the server of that name the operator declared on the worker (WEFT_MCP_SERVERS), or with {"command": ...} or {"url": ...} in the operator's own files`)
		}
		return true
	}
	if wf, ok := strings.CutPrefix(name, toolspec.WorkflowToolPrefix); ok {
		if wf == "" {
			c.errAt(ptr, what+"workflow tool without a name", `write "workflow:NAME" with the name of a built-in template or of a file in the workflows directory`)
		} else if err := CheckWorkflowName(wf); err != nil {
			c.errAt(ptr, what+err.Error(), workflowNameHint)
		}
		return true
	}
	return false
}

// offers reports whether an agent with the literal tools known offers name: a choice, a tool,
// or a tool of an MCP server it lists whole (MCP tools are known when the run lists them).
func offers(known map[string]bool, name string) bool {
	switch name {
	case "auto", "none", "required":
		return true
	}
	if known[name] || len(known) == 0 {
		return true
	}
	for k := range known {
		if strings.HasPrefix(name, k+"/") || strings.ReplaceAll(k, ":", "_") == name || strings.HasPrefix(k, toolspec.MCPToolPrefix) && !strings.Contains(name, ":") {
			return true
		}
	}
	return false
}

// workflowName is what a called workflow's name may look like: a name, never a path.
var workflowName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

const workflowNameHint = "name a built-in template or a file in the workflows directory (or next to this file) by its name, e.g. \"research\" for research.json: paths are not followed"

// CheckWorkflowName refuses a called workflow's name that is not a plain name: a path (with / or
// \\, absolute, or ..) would let a file's author read any file of the machine that resolves it
// (docs/security.md).
func CheckWorkflowName(name string) error {
	if !workflowName.MatchString(name) || strings.Contains(name, "..") {
		return fmt.Errorf("workflow %q is not a name: a called workflow is named by letters, digits, _ . - (up to 128), not by a path", name)
	}
	return nil
}

// CalledWorkflows lists the workflows def calls by literal name, sorted: workflow steps'
// "workflow" input and agents' "workflow:NAME" tools.
func CalledWorkflows(def *Definition) []string {
	set := map[string]bool{}
	for _, st := range def.Steps {
		switch st.Tool {
		case toolspec.Workflow.Name:
			if s, ok := st.Inputs["workflow"].(string); ok && s != "" && !strings.Contains(s, "{{") {
				set[s] = true
			}
		case toolspec.Agent.Name:
			lists := [][]any{}
			tools, _ := st.Inputs["tools"].([]any)
			lists = append(lists, tools)
			// the agents it may hand off to call workflows too
			handoffs, _ := st.Inputs["handoffs"].([]any)
			for _, h := range handoffs {
				m, _ := h.(map[string]any)
				agent, _ := m["agent"].(map[string]any)
				ht, _ := agent["tools"].([]any)
				lists = append(lists, ht)
			}
			for _, list := range lists {
				for _, t := range list {
					if s, ok := t.(string); ok {
						if wf, ok := strings.CutPrefix(s, toolspec.WorkflowToolPrefix); ok && wf != "" && !strings.Contains(wf, "{{") {
							set[wf] = true
						}
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

// CheckClientDefinition refuses what a definition sent by an authenticated client (an MCP key, a
// console login) may not do (docs/security.md): declare how an external MCP server is started
// or reached, or which of the worker's environment variables its key comes from, trust its
// tools, or hold a worker's session for the whole run (stateful). Such a definition names servers the operator declared, as {} ("mcpServers": {"notes":
// {}}). The operator's own files are not held to this.
func CheckClientDefinition(def *Definition) error {
	var problems []string
	for _, name := range sortedKeys(def.MCPServers) {
		s := def.MCPServers[name]
		var what []string
		if s.Command != "" || len(s.Args) > 0 {
			what = append(what, "a command (a process on the worker)")
		}
		if len(s.Env) > 0 || s.KeyEnv != "" {
			what = append(what, "environment variables")
		}
		if s.URL != "" {
			what = append(what, "a url")
		}
		if s.Trust {
			what = append(what, "trust")
		}
		if s.Stateful {
			// A session holds a slot on a worker for as long as the run lasts.
			what = append(what, "stateful (a worker's session held for the whole run)")
		}
		if len(what) > 0 {
			problems = append(problems, fmt.Sprintf("mcpServers.%s declares %s", name, strings.Join(what, ", ")))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s: a definition sent by a client may name only the MCP servers the operator declared on the worker, as \"mcpServers\": {\"NAME\": {}}; an operator allows a server on purpose by adding it to the worker's WEFT_MCP_SERVERS file, or by putting this workflow in the workflows directory", strings.Join(problems, "; "))
}

// checkOperatorTrust warns of "trust": true on a server the file names without a command or
// url: that entry refers to the server the operator declared (WEFT_MCP_SERVERS), whose own
// declaration decides trust, so the file's is dropped while its "stateful" is read.
func (c *compiler) checkOperatorTrust() {
	for _, name := range sortedKeys(c.def.MCPServers) {
		s := c.def.MCPServers[name]
		if !s.Trust || s.Command != "" || s.URL != "" {
			continue
		}
		users := ""
		if steps := c.mcpUsers(name); len(steps) > 0 {
			users = " in " + english.Plural(len(steps), "step") + " " + joinAnd(steps)
		}
		c.warnAt("/mcpServers/"+escapePointer(name)+"/trust",
			fmt.Sprintf(`"trust": true is ignored: %q has no command or url here, so it refers to the server the operator declared (WEFT_MCP_SERVERS), whose declaration alone decides trust ("stateful" is read from this file); unless the operator trusts it, its tools that may change things wait for approval%s`, name, users),
			fmt.Sprintf(`remove "trust" here; to run its write tools without approval, set "trust": true on %q in the worker's WEFT_MCP_SERVERS file, or declare the server in this file with its own command or url`, name))
	}
}

// mcpUsers are the ids of the agent steps that offer server's tools (their own or a handoff's).
func (c *compiler) mcpUsers(server string) []string {
	var out []string
	for _, cs := range c.w.Steps {
		if cs.Step.ID == "" || !offersServer(cs.Step.Inputs, server) {
			continue
		}
		out = append(out, strconv.Quote(cs.Step.ID))
	}
	return out
}

// offersServer reports whether an agent's inputs (or its handoffs' agents) list mcp:server or
// mcp:server/TOOL.
func offersServer(inputs map[string]any, server string) bool {
	tools, _ := inputs["tools"].([]any)
	for _, t := range tools {
		tn, _ := t.(string)
		if srv, ok := strings.CutPrefix(tn, toolspec.MCPToolPrefix); ok {
			if name, _, _ := strings.Cut(srv, "/"); name == server {
				return true
			}
		}
	}
	handoffs, _ := inputs["handoffs"].([]any)
	for _, h := range handoffs {
		m, _ := h.(map[string]any)
		if agent, ok := m["agent"].(map[string]any); ok && offersServer(agent, server) {
			return true
		}
	}
	return false
}
