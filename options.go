package weft

import (
	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/dsl"
)

// Option configures a step. An option that does not apply to the step's kind (Tools on a review)
// is an error when the workflow is compiled.
type Option func(*config)

type config struct {
	model, system, name, when, timeout, instructions string
	temperature                                      *float64
	maxTokens, maxIterations                         int
	json, continueOnError, noChain                   bool
	tools, approve, reviewers, after                 []string
	context, data                                    any
	retry                                            *dsl.Retry
	errs                                             []error
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

// Instructions tell the reviewer of a review step what to check.
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
