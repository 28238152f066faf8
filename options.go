package weft

import (
	"errors"
	"fmt"
	"slices"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/dsl"
)

// Option configures a step. An option that does not apply to the step's kind (Tools on a review)
// is an error when the workflow is compiled.
type Option func(*config)

type config struct {
	model, system, name, when, timeout, instructions string
	toolChoice, onLimit, onTrip                      string
	temperature                                      *float64
	maxTokens, maxIterations, maxHandoffs            int
	resultLimit                                      int
	maxRepairs                                       *int
	parallel                                         *bool
	json, continueOnError, noChain, keepToolChoice   bool
	tools, approve, reviewers, after, handsTo        []string
	context, data, schema                            any
	stopWhen                                         []any
	inputChecks, outputChecks                        []toolspec.Guardrail
	handoffs                                         []any
	retry                                            *dsl.Retry
	errs                                             []error
}

// option is one option as build applies it: the input key it sets ("" for the step's own
// fields), the value, whether it was given, and the step kinds it fits ("handoff": a Handoff's
// agent, which sets the same key in its agent as a step in its inputs).
type option struct {
	name, key string
	v         any
	set       bool
	kinds     []string
}

// options lists every option of c by its function's name.
func (c *config) options() []option {
	model, agent := []string{"llm", "agent"}, []string{"agent"}
	modelOrHandoff, agentOrHandoff := []string{"llm", "agent", "handoff"}, []string{"agent", "handoff"}
	review := []string{"review"}
	var format any
	switch {
	case c.schema != nil:
		format = c.schema
	case c.json:
		format = "json"
	}
	var guard *toolspec.Guardrails
	if len(c.inputChecks) > 0 || len(c.outputChecks) > 0 || c.onTrip != "" {
		guard = &toolspec.Guardrails{Input: c.inputChecks, Output: c.outputChecks, OnTrip: c.onTrip}
	}
	all := []string{"llm", "agent", "tool", "review"}
	return []option{
		{"Model", "model", c.model, c.model != "", modelOrHandoff},
		{"System", "system", c.system, c.system != "", modelOrHandoff},
		{"Temperature", "temperature", c.temperature, c.temperature != nil, modelOrHandoff},
		{"MaxTokens", "maxTokens", c.maxTokens, c.maxTokens > 0, modelOrHandoff},
		{"ResponseJSON", "responseFormat", format, c.json && c.schema == nil, modelOrHandoff},
		{"ResponseSchema", "responseFormat", format, c.schema != nil, modelOrHandoff},
		{"Tools", "tools", c.tools, len(c.tools) > 0, modelOrHandoff},
		{"ToolChoice", "toolChoice", c.toolChoice, c.toolChoice != "", modelOrHandoff},
		{"KeepToolChoice", "resetToolChoice", false, c.keepToolChoice, agentOrHandoff},
		{"Context", "context", c.context, c.context != nil, model},
		{"MaxIterations", "maxIterations", c.maxIterations, c.maxIterations > 0, agent},
		{"ParallelToolCalls", "parallelToolCalls", c.parallel, c.parallel != nil, model},
		{"ToolResultLimit", "toolResultLimit", c.resultLimit, c.resultLimit > 0, agent},
		{"MaxRepairs", "maxRepairs", c.maxRepairs, c.maxRepairs != nil, model},
		{"Approve", "approve", c.approve, len(c.approve) > 0, agentOrHandoff},
		{"StopAfter/StopWhenText", "stopWhen", c.stopWhen, len(c.stopWhen) > 0, agent},
		{"ReturnAtLimit", "onLimit", c.onLimit, c.onLimit != "", agent},
		{"InputGuardrails/OutputGuardrails/ReturnOnTrip", "guardrails", guard, guard != nil, agent},
		{"Handoffs", "handoffs", c.handoffs, len(c.handoffs) > 0, agent},
		{"MaxHandoffs", "maxHandoffs", c.maxHandoffs, c.maxHandoffs > 0, agent},
		{"HandsTo", "handoffs", c.handsTo, len(c.handsTo) > 0, []string{"handoff"}},
		{"Instructions", "instructions", c.instructions, c.instructions != "", []string{"agent", "review"}},
		{"Data", "data", c.data, c.data != nil, review},
		{"Reviewers", "reviewers", c.reviewers, len(c.reviewers) > 0, review},
		{"Title", "", c.name, c.name != "", all},
		{"When", "", c.when, c.when != "", all},
		{"After", "", c.after, len(c.after) > 0, all},
		{"Detached", "", c.noChain, c.noChain, all},
		{"Timeout", "", c.timeout, c.timeout != "", all},
		{"Retry", "", c.retry, c.retry != nil, all},
		{"ContinueOnError", "", c.continueOnError, c.continueOnError, all},
	}
}

// unused are the errors of options given that would do nothing or contradict each other: the
// agent settings that qualify another one which is missing, two answer formats.
func (c *config) unused() []error {
	var errs []error
	if c.json && c.schema != nil {
		errs = append(errs, errors.New("ResponseJSON and ResponseSchema both set the answer's format: keep one"))
	}
	if c.onTrip != "" && len(c.inputChecks) == 0 && len(c.outputChecks) == 0 {
		errs = append(errs, errors.New("ReturnOnTrip without InputGuardrails or OutputGuardrails does nothing: add the checks, or drop it"))
	}
	if c.maxHandoffs > 0 && len(c.handoffs) == 0 {
		errs = append(errs, errors.New("MaxHandoffs without Handoffs does nothing: add the handoffs, or drop it"))
	}
	if c.keepToolChoice && (c.toolChoice == "" || c.toolChoice == "auto" || c.toolChoice == "none") {
		errs = append(errs, errors.New("KeepToolChoice keeps a ToolChoice of ChooseRequired or a tool: without one it does nothing"))
	}
	errs = append(errs, checkErrs(c.inputChecks)...)
	return append(errs, checkErrs(c.outputChecks)...)
}

// setInputs sets in inputs the key of each option given that fits kind, as plain JSON. misfit
// names the options given that do not fit; errs are those whose value is not plain JSON, each
// named by its option.
func (c *config) setInputs(kind string, inputs map[string]any) (misfit []string, errs []error) {
	for _, o := range c.options() {
		switch {
		case !o.set:
		case !slices.Contains(o.kinds, kind):
			misfit = append(misfit, o.name)
		case o.key != "":
			v, err := activities.PlainJSON(o.v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", o.name, err))
			}
			inputs[o.key] = v
		}
	}
	return misfit, errs
}

// Model names the model (or alias: fast, smart) of an LLM or Agent step.
func Model(m string) Option { return func(c *config) { c.model = m } }

// System sets the system prompt of an LLM or Agent step.
func System(s string) Option { return func(c *config) { c.system = s } }

// Temperature sets the sampling temperature (0 to 2) of an LLM or Agent step.
func Temperature(t float64) Option { return func(c *config) { c.temperature = &t } }

// MaxTokens caps the answer of an LLM or Agent step.
func MaxTokens(n int) Option { return func(c *config) { c.maxTokens = n } }

// ResponseJSON asks an LLM or Agent step for a JSON answer (its output's json; the workflow's
// output when it is the last step).
func ResponseJSON() Option { return func(c *config) { c.json = true } }

// Context replaces the automatic context (the outputs of the steps it follows) of an LLM or
// Agent step: text, a template, or any value.
func Context(v any) Option { return func(c *config) { c.context = v } }

// Named is a tool an agent can call: a Tool declared in Go, or a built-in named with ToolName.
type Named interface{ ToolName() string }

// ToolName names a built-in tool ("search", "ingest", "workflow:NAME") for Tools.
type ToolName string

// ToolName returns the name.
func (n ToolName) ToolName() string { return string(n) }

// MCP names every tool of the MCP server the workflow declares with MCPServer (server/tool: one).
func MCP(server string) ToolName { return ToolName(toolspec.MCPToolPrefix + server) }

// Tools offers tools to an Agent step (or to an LLM step, which returns the calls it proposes).
func Tools(tools ...Named) Option {
	return func(c *config) {
		for _, t := range tools {
			c.tools = append(c.tools, t.ToolName())
		}
	}
}

// Approve makes an Agent's calls to these tools wait for a person (Engine.Review decides them).
func Approve(tools ...Named) Option {
	return func(c *config) {
		for _, t := range tools {
			c.approve = append(c.approve, t.ToolName())
		}
	}
}

// MaxIterations bounds an Agent's model calls (default 10).
func MaxIterations(n int) Option { return func(c *config) { c.maxIterations = n } }

// Data is what a review step shows and a person may edit (templates allowed).
func Data(v any) Option { return func(c *config) { c.data = v } }

// Instructions tell the reviewer of a review step what to check. On an Agent they are the system
// prompt rendered again before each model call, with the agent's state in scope:
// {{ agent.iteration }}, {{ agent.lastToolResult }}, {{ agent.toolCalls }}, {{ agent.usage }},
// {{ agent.name }}.
func Instructions(s string) Option { return func(c *config) { c.instructions = s } }

// Reviewers limit who may decide a review step: identity names and "role:NAME".
func Reviewers(who ...string) Option { return func(c *config) { c.reviewers = who } }

// Title sets the step's display name.
func Title(n string) Option { return func(c *config) { c.name = n } }

// When runs the step only when cond (an expression: "inputs.mode == 'deep'") holds.
func When(cond string) Option { return func(c *config) { c.when = cond } }

// After adds dependencies on other steps (besides the ones it follows).
func After(ids ...string) Option { return func(c *config) { c.after = append(c.after, ids...) } }

// Detached: the step does not follow the steps added before it (it starts with the run, or
// after the steps named with After), and an LLM step gets no automatic context.
func Detached() Option { return func(c *config) { c.noChain = true } }

// Timeout sets the per-attempt timeout ("30s", "5m").
func Timeout(d string) Option { return func(c *config) { c.timeout = d } }

// Retry overrides the step's retry policy.
func Retry(r dsl.Retry) Option { return func(c *config) { c.retry = &r } }

// ContinueOnError records the step's failure and goes on.
func ContinueOnError() Option { return func(c *config) { c.continueOnError = true } }
