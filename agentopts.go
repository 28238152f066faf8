package weft

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/weftworks/weft/activities/toolspec"
)

// The options of this file are an Agent's: the workflow file's agent inputs of the same names
// (toolChoice, stopWhen, onLimit, guardrails, handoffs, maxHandoffs), typed. Compile checks
// them as it checks a file (a pattern that is not RE2, a stop tool the agent does not offer).

// Tool choices for ToolChoice besides a tool.
const (
	// ChooseAuto lets the model decide whether to call tools (the default).
	ChooseAuto ToolName = "auto"
	// ChooseNone forbids tool calls.
	ChooseNone ToolName = "none"
	// ChooseRequired makes the model call at least one tool.
	ChooseRequired ToolName = "required"
)

// ToolChoice is sent with an Agent's (or LLM's) model calls: ChooseAuto, ChooseNone,
// ChooseRequired, or one of the tools it offers (that tool is called). An Agent goes on with auto
// once it has called tools, so a forced call cannot loop; KeepToolChoice keeps it.
func ToolChoice(t Named) Option { return func(c *config) { c.toolChoice = t.ToolName() } }

// KeepToolChoice sends ToolChoice with every model call of an Agent, also after it has called
// tools (stop it with StopAfter, StopWhenText or MaxIterations).
func KeepToolChoice() Option { return func(c *config) { c.keepToolChoice = true } }

// StopAfter stops an Agent when a call to one of tools completes (it must offer them): the call's
// result is the answer, and the output's stopReason is tool_called.
func StopAfter(tools ...Named) Option {
	return func(c *config) {
		for _, t := range tools {
			c.stopWhen = append(c.stopWhen, map[string]any{"tool": t.ToolName()})
		}
	}
}

// StopWhenText stops an Agent when the model's text matches pattern (RE2); the output's
// stopReason is text_matched.
func StopWhenText(pattern string) Option {
	return func(c *config) { c.stopWhen = append(c.stopWhen, map[string]any{"textMatches": pattern}) }
}

// ReturnAtLimit makes an Agent that reaches MaxIterations (or MaxHandoffs) return what it has,
// with stopReason max_iterations (max_handoffs), instead of failing the step.
func ReturnAtLimit() Option { return func(c *config) { c.onLimit = "return" } }

// MaxHandoffs caps the handoffs an Agent's agents make in all (default 10).
func MaxHandoffs(n int) Option { return func(c *config) { c.maxHandoffs = n } }

// Check is one guardrail: Forbid, Require, MatchSchema or Judge.
type Check struct{ g toolspec.Guardrail }

// Forbid trips when the text matches pattern (RE2). name names the check in errors and output.
func Forbid(name, pattern string) Check {
	return Check{toolspec.Guardrail{Name: name, Forbid: pattern}}
}

// Require trips when the text does not match pattern (RE2).
func Require(name, pattern string) Check {
	return Check{toolspec.Guardrail{Name: name, Require: pattern}}
}

// MatchSchema trips when the text, read as JSON, does not satisfy schema (a JSON Schema: a map,
// json.RawMessage, or SchemaOf's result).
func MatchSchema(name string, schema any) Check {
	return Check{toolspec.Guardrail{Name: name, Schema: schema}}
}

// Judge has a model read rubric with the text and answer pass or fail (one llm call, with the
// agent's model unless JudgeModel says another).
func Judge(name, rubric string) Check {
	return Check{toolspec.Guardrail{Name: name, Judge: rubric}}
}

// JudgeModel is the check with model (or an alias: fast, smart) as its judge. Only a Judge has
// one: on another check it is an error when the workflow is compiled.
func (c Check) JudgeModel(model string) Check { c.g.Model = model; return c }

// checkErrs are the mistakes of checks that would otherwise do nothing.
func checkErrs(checks []toolspec.Guardrail) []error {
	var errs []error
	for _, g := range checks {
		if g.Model != "" && g.Judge == "" {
			errs = append(errs, fmt.Errorf("guardrail %s: JudgeModel is for a Judge check only", g.Name))
		}
	}
	return errs
}

// InputGuardrails check an Agent's prompt (or last user message) before its first model call.
func InputGuardrails(checks ...Check) Option {
	return func(c *config) {
		for _, ch := range checks {
			c.inputChecks = append(c.inputChecks, ch.g)
		}
	}
}

// OutputGuardrails check an Agent's answer (its JSON when the answer is JSON) before the step
// returns it.
func OutputGuardrails(checks ...Check) Option {
	return func(c *config) {
		for _, ch := range checks {
			c.outputChecks = append(c.outputChecks, ch.g)
		}
	}
}

// ReturnOnTrip makes a guardrail that trips end the Agent with stopReason guardrail and no text,
// instead of failing the step.
func ReturnOnTrip() Option { return func(c *config) { c.onTrip = "return" } }

// HandoffTo is an agent an Agent can pass the conversation to (Handoff).
type HandoffTo struct {
	h    map[string]any // toolspec.Handoff's JSON
	errs []error
}

// Handoff declares an agent named name (the model sees the tool transfer_to_NAME, described by
// description) that continues the conversation in the step with its own settings: Model, System,
// Tools, Approve, ToolChoice, KeepToolChoice, Temperature, MaxTokens, ResponseJSON or
// ResponseSchema, and HandsTo. Of what it leaves out, the model, temperature, maxTokens and answer
// format are the step's; the rest is not inherited: without System it has no system prompt (the
// step's System and Instructions are its own agent's), without Tools no tools, without ToolChoice
// auto, without HandsTo no handoffs. The step's Approve list holds for it as well.
func Handoff(name, description string, opts ...Option) HandoffTo {
	var c config
	for _, o := range opts {
		o(&c)
	}
	// A map, not toolspec.HandoffAgent: resetToolChoice defaults to true, so false must be written.
	a := map[string]any{}
	h := HandoffTo{errs: c.errs}
	misfit, errs := c.setInputs("handoff", a)
	for _, err := range append(errs, c.unused()...) {
		h.errs = append(h.errs, fmt.Errorf("handoff %s: %w", name, err))
	}
	h.h = map[string]any{"name": name, "description": description, "agent": a}
	if len(misfit) > 0 {
		h.errs = append(h.errs, fmt.Errorf("handoff %s: %v do not apply to a handoff's agent", name, misfit))
	}
	return h
}

// Handoffs offers agents to pass the conversation to; the one handed to answers the step.
func Handoffs(hs ...HandoffTo) Option {
	return func(c *config) {
		for _, h := range hs {
			c.handoffs = append(c.handoffs, h.h)
			c.errs = append(c.errs, h.errs...)
		}
	}
}

// HandsTo names the agents a Handoff's agent can pass the conversation on to: other handoffs of
// the step by name, or the step's id to hand back to the step's own agent.
func HandsTo(names ...string) Option {
	return func(c *config) { c.handsTo = append(c.handsTo, names...) }
}

// ParallelToolCalls says whether the model may propose several tool calls in one answer (an
// Agent runs them at once; default true).
func ParallelToolCalls(on bool) Option { return func(c *config) { c.parallel = &on } }

// ToolResultLimit caps the characters of a tool result an Agent's model sees (default 8000).
func ToolResultLimit(n int) Option { return func(c *config) { c.resultLimit = n } }

// MaxRepairs is how often an answer that does not fit ResponseJSON or ResponseSchema is sent
// back to the model with the error (0 to 5, default 2).
func MaxRepairs(n int) Option { return func(c *config) { c.maxRepairs = &n } }

// ResponseSchema asks an LLM or Agent step for a JSON answer that satisfies schema (a JSON
// Schema; SchemaOf derives one from a Go type). The answer is checked, and sent back to the model
// with the error while it does not fit (maxRepairs); providers that take a strict schema get it.
func ResponseSchema(schema any) Option { return func(c *config) { c.schema = schema } }

// SchemaOf is the JSON Schema of T (a struct), derived as a Tool's input schema is: json names,
// fields without omitempty required, `jsonschema:"..."` descriptions, `weft:"..."` constraints.
// For ResponseSchema, leave omitempty off: OpenAI's strict mode takes only schemas whose fields
// are all required, and a provider that refuses the schema gets json_object instead (the answer
// is still checked against the schema).
// It panics when T is not a struct (a programming error, as a duplicate Tool is).
func SchemaOf[T any]() map[string]any {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("weft.SchemaOf: %s is not a struct: a JSON Schema here describes an object", t))
	}
	doc, err := toolspec.SchemaOf(t)
	if err != nil {
		panic(fmt.Sprintf("weft.SchemaOf[%s]: %v", t, err))
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		panic(fmt.Sprintf("weft.SchemaOf[%s]: %v", t, err))
	}
	return m
}
