package dsl

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/expr"
)

// AgentConfig is what an agent step's stopWhen, guardrails and handoffs say, parsed once
// (ParseAgentConfig): the compiler parses the literal ones and reports their mistakes where the
// file has them; the interpreter parses with the same function only what was templated.
// (The step's settings, AgentSettings, are its typed input: CompiledStep.Input, AgentInput.)
type AgentConfig struct {
	// Parsed: StopWhen, Guardrails and Handoffs hold what the step's inputs say (false when one
	// is templated, or a run accepted the definition with a mistake in one).
	Parsed     bool
	StopWhen   []StopRule
	Guardrails *Guardrails // nil: the step has none
	Handoffs   []Handoff
}

// AgentSettings are the inputs of an agent step that set how its loop runs.
var AgentSettings = []string{"maxIterations", "parallelToolCalls", "approve", "toolResultLimit", "onLimit", "toolChoice", "resetToolChoice", "maxHandoffs"}

// AgentInput decodes an agent step's settings (AgentSettings) with the declaration's defaults:
// the compiler when they are written out (CompiledStep.Input), the run when one is templated.
func AgentInput(inputs map[string]any) (toolspec.AgentIn, error) {
	return toolspec.Agent.DecodeFields(inputs, AgentSettings...)
}

// StopRule is one condition of stopWhen: a tool (as tools names it) or a pattern.
type StopRule struct {
	Tool    string
	Pattern *regexp.Regexp
}

// Guardrails are an agent's checks of its input and of its answer.
type Guardrails struct {
	Input, Output []Guardrail
	OnTrip        string // fail or return (toolspec.Guardrails declares its default)
}

// Guardrail is one check, its pattern or schema compiled: exactly one of Schema, Forbid,
// Require and Judge.
type Guardrail struct {
	Name                   string
	Schema                 any
	Forbid, Require, Judge string
	Model                  string
	ForbidRe, RequireRe    *regexp.Regexp
	CompiledSchema         *jsonschema.Schema
}

// Handoff is an agent the conversation can be passed to (the agent's handoffs input).
type Handoff struct {
	Name, Desc string
	Agent      map[string]any // the handoff's agent as written (toolspec.HandoffAgent)
	Next       []string       // the agents it can hand to: handoff names, or the step's id
}

// ResetToolChoice is the handoff's agent's resetToolChoice, the declaration's default when it
// sets none.
func (h *Handoff) ResetToolChoice() bool {
	if b, ok := h.Agent["resetToolChoice"].(bool); ok {
		return b
	}
	return handoffResetDefault
}

// handoffResetDefault and onTripDefault are the defaults toolspec.HandoffAgent and
// toolspec.Guardrails declare.
var (
	handoffResetDefault, _ = declaredDefault(reflect.TypeFor[toolspec.HandoffAgent](), "resetToolChoice").(bool)
	onTripDefault, _       = declaredDefault(reflect.TypeFor[toolspec.Guardrails](), "onTrip").(string)
)

// declaredDefault is the default the weft tag of t's field (by JSON name) declares.
func declaredDefault(t reflect.Type, field string) any {
	s, err := toolspec.SchemaOf(t)
	if err != nil {
		panic(fmt.Sprintf("dsl: %s: %v", t, err)) // a declaration's bug: TestRegistryHasEveryTool
	}
	var doc struct {
		Properties map[string]struct {
			Default any `json:"default"`
		} `json:"properties"`
	}
	if err := json.Unmarshal([]byte(s), &doc); err != nil {
		panic(fmt.Sprintf("dsl: %s: %v", t, err))
	}
	return doc.Properties[field].Default
}

// Problem is a mistake in an agent's configuration: where (a JSON pointer below the step's
// inputs), what, and what to do.
type Problem struct {
	Ptr, Msg, Hint string
}

// Problems are the mistakes ParseAgentConfig found.
type Problems []Problem

// Error is the problems as a run's failure says them.
func (ps Problems) Error() string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = "inputs" + strings.ReplaceAll(p.Ptr, "/", ".") + ": " + p.Msg
		if p.Hint != "" {
			parts[i] += " (" + p.Hint + ")"
		}
	}
	return strings.Join(parts, "; ")
}

const regexHint = "write an RE2 regular expression (Go's regexp syntax); escape backslashes in JSON"

// agentConfigInputs are the agent inputs ParseAgentConfig reads.
var agentConfigInputs = []string{"stopWhen", "guardrails", "handoffs"}

// ParseAgentConfig parses the stopWhen, guardrails and handoffs of agent step stepID's inputs.
// With problems, what parsed is returned too (an input with problems holds what of it parsed).
func ParseAgentConfig(stepID string, inputs map[string]any) (*AgentConfig, Problems) {
	var ps Problems
	cfg := &AgentConfig{}
	cfg.Handoffs = parseHandoffs(stepID, inputs["handoffs"], &ps)
	cfg.StopWhen = parseStopWhen(inputs["stopWhen"], &ps)
	cfg.Guardrails = parseGuardrails(inputs["guardrails"], &ps)
	return cfg, ps
}

// Of are the problems of one input (stopWhen, guardrails or handoffs); nil when it has none.
func (ps Problems) Of(input string) Problems {
	var out Problems
	for _, p := range ps {
		if p.Ptr == "/"+input || strings.HasPrefix(p.Ptr, "/"+input+"/") {
			out = append(out, p)
		}
	}
	return out
}

// parseStopWhen reads stopWhen: one condition or a list.
func parseStopWhen(v any, ps *Problems) []StopRule {
	list, ok := v.([]any)
	ptr := func(i int) string { return "/stopWhen/" + strconv.Itoa(i) }
	if !ok {
		list, ptr = nil, func(int) string { return "/stopWhen" }
		if v != nil {
			list = []any{v}
		}
	}
	var out []StopRule
	for i, e := range list {
		m, _ := e.(map[string]any)
		tool, _ := m["tool"].(string)
		src, _ := m["textMatches"].(string)
		if tool == "" && src == "" {
			*ps = append(*ps, Problem{ptr(i), "a stopWhen condition names neither a tool nor a pattern", `write {"tool": NAME} or {"textMatches": REGEX}`})
			continue
		}
		if tool != "" {
			out = append(out, StopRule{Tool: tool})
		}
		if src != "" {
			re, err := regexp.Compile(src)
			if err != nil {
				*ps = append(*ps, Problem{ptr(i) + "/textMatches", fmt.Sprintf("textMatches %q is not a regular expression: %v", src, err), regexHint})
				continue
			}
			out = append(out, StopRule{Pattern: re})
		}
	}
	return out
}

// parseGuardrails reads the agent's guardrails input; each check is exactly one of schema,
// forbid, require and judge.
func parseGuardrails(v any, ps *Problems) *Guardrails {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	g := &Guardrails{OnTrip: onTripDefault}
	if s, _ := m["onTrip"].(string); s != "" {
		g.OnTrip = s
	}
	for _, stage := range []string{"input", "output"} {
		list, _ := m[stage].([]any)
		for i, e := range list {
			if gr, ok := parseGuardrail(stage, i, e, ps); ok {
				if stage == "input" {
					g.Input = append(g.Input, gr)
				} else {
					g.Output = append(g.Output, gr)
				}
			}
		}
	}
	return g
}

func parseGuardrail(stage string, i int, e any, ps *Problems) (Guardrail, bool) {
	c, _ := e.(map[string]any)
	ptr := "/guardrails/" + stage + "/" + strconv.Itoa(i)
	gr := Guardrail{Schema: c["schema"]}
	gr.Name, _ = c["name"].(string)
	gr.Forbid, _ = c["forbid"].(string)
	gr.Require, _ = c["require"].(string)
	gr.Judge, _ = c["judge"].(string)
	gr.Model, _ = c["model"].(string)
	what := "guardrail " + gr.Name
	if gr.Name == "" {
		gr.Name = fmt.Sprintf("%s[%d]", stage, i)
		what = fmt.Sprintf("guardrail %d", i)
	}
	n := 0
	for _, set := range []bool{gr.Schema != nil, gr.Forbid != "", gr.Require != "", gr.Judge != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		*ps = append(*ps, Problem{ptr, fmt.Sprintf("%s is %d checks", what, n), "a guardrail is exactly one of schema, forbid, require and judge: write one guardrail per check"})
		return gr, false
	}
	for _, p := range []struct {
		key, src string
		re       **regexp.Regexp
	}{{"forbid", gr.Forbid, &gr.ForbidRe}, {"require", gr.Require, &gr.RequireRe}} {
		if p.src == "" {
			continue
		}
		re, err := regexp.Compile(p.src)
		if err != nil {
			*ps = append(*ps, Problem{ptr + "/" + p.key, fmt.Sprintf("%s %q is not a regular expression: %v", p.key, p.src, err), regexHint})
			return gr, false
		}
		*p.re = re
	}
	if gr.Schema != nil {
		sch, err := compileJSONSchema(gr.Schema)
		if err != nil {
			*ps = append(*ps, Problem{ptr + "/schema", fmt.Sprintf("%s: the schema is not a valid JSON Schema: %v", what, err), "write a JSON Schema (draft 2020-12) the answer must satisfy"})
			return gr, false
		}
		gr.CompiledSchema = sch
	}
	return gr, true
}

// compileJSONSchema compiles a schema a file wrote (a guardrail's).
func compileJSONSchema(schema any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("weft://guardrail.json", JSONValue(schema)); err != nil {
		return nil, err
	}
	return c.Compile("weft://guardrail.json")
}

// handoffName is what a handoff's name may be: the model calls transfer_to_NAME.
var handoffName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// parseHandoffs reads the agent's handoffs and checks that the agents they hand to exist.
func parseHandoffs(stepID string, v any, ps *Problems) []Handoff {
	list, _ := v.([]any)
	var out []Handoff
	seen := map[string]bool{}
	for i, e := range list {
		m, _ := e.(map[string]any)
		ptr := "/handoffs/" + strconv.Itoa(i)
		h := Handoff{}
		h.Name, _ = m["name"].(string)
		h.Desc, _ = m["description"].(string)
		h.Agent, _ = m["agent"].(map[string]any)
		if !handoffName.MatchString(h.Name) {
			*ps = append(*ps, Problem{ptr + "/name", fmt.Sprintf("handoff name %q is not a name", h.Name), "name a handoff with letters, digits, _ and -"})
			continue
		}
		if seen[h.Name] {
			*ps = append(*ps, Problem{ptr + "/name", fmt.Sprintf("handoff %q is named twice", h.Name), "give each handoff its own name"})
			continue
		}
		seen[h.Name] = true
		if h.Agent == nil {
			h.Agent = map[string]any{}
		}
		next, _ := h.Agent["handoffs"].([]any)
		for _, n := range next {
			if s, _ := n.(string); s != "" {
				h.Next = append(h.Next, s)
			}
		}
		out = append(out, h)
	}
	if len(*ps) > 0 {
		return nil
	}
	names := []string{stepID}
	for _, h := range out {
		names = append(names, h.Name)
	}
	for i, h := range out {
		for j, n := range h.Next {
			ptr := "/handoffs/" + strconv.Itoa(i) + "/agent/handoffs/" + strconv.Itoa(j)
			switch {
			case n == stepID && seen[stepID]:
				*ps = append(*ps, Problem{ptr, fmt.Sprintf("handoff %s hands to %q, which names both the step and one of its handoffs", h.Name, n), "rename the handoff"})
			case !slices.Contains(names, n):
				*ps = append(*ps, Problem{ptr, fmt.Sprintf("handoff %s hands to %q, which is neither one of the step's handoffs nor the step", h.Name, n),
					fmt.Sprintf("name a handoff of this step, or %q to hand back to the step's agent", stepID)})
			}
		}
	}
	return out
}

// compileAgentConfig decodes an agent's settings (onto CompiledStep.Input) and parses its
// stopWhen, guardrails and handoffs when they are written out (no template in them): the
// interpreter runs what the compiler read. A templated one is read when the run has resolved it; so is a definition a run
// accepted before a check here was added, which fails at run time as it did.
func (c *compiler) compileAgentConfig(cs *CompiledStep, inPtr string) {
	if cs.Spec != toolspec.Agent.Spec {
		return
	}
	cfg := &AgentConfig{}
	if a := cs.Agent(); a != nil {
		a.Config = cfg
	} else {
		cs.Compiled = &AgentCompiled{Config: cfg}
	}
	if in := decodeWritten(cs, AgentInput, AgentSettings...); in != nil {
		cs.Input = in // (a value of the wrong type is the schema's diagnostic)
	}
	if slices.ContainsFunc(agentConfigInputs, func(k string) bool { return hasTemplate(cs.Step.Inputs[k]) }) {
		return
	}
	parsed, ps := ParseAgentConfig(cs.ID, cs.Step.Inputs)
	if len(ps) > 0 && c.accepted {
		return
	}
	for _, p := range ps {
		c.errAt(inPtr+p.Ptr, p.Msg, p.Hint)
	}
	if len(ps) == 0 {
		cfg.StopWhen, cfg.Guardrails, cfg.Handoffs, cfg.Parsed = parsed.StopWhen, parsed.Guardrails, parsed.Handoffs, true
	}
}

// hasTemplate reports whether a value written in a file holds a template.
func hasTemplate(v any) bool {
	switch x := v.(type) {
	case string:
		return expr.HasTemplate(x)
	case []any:
		return slices.ContainsFunc(x, hasTemplate)
	case map[string]any:
		//workflowcheck:ignore the result does not depend on map order (any)
		for _, e := range x {
			if hasTemplate(e) {
				return true
			}
		}
	}
	return false
}

// JSONValue makes numbers what the JSON Schema library expects (json.Number or float64 both
// work; ints from Go code are turned into float64).
func JSONValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
		for k, e := range x {
			out[k] = JSONValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = JSONValue(e)
		}
		return out
	case int:
		return float64(x)
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	}
	return v
}
