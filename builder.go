package weft

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/internal/english"
	"github.com/weftworks/weft/workflows/dsl"
)

// Workflow is a workflow definition built in Go. Each step added with a method runs after the
// steps added before it (LLM and Agent steps see their outputs: "context": "auto"); Parallel adds
// steps that run at the same time, and what follows them sees all their outputs. Errors (a
// duplicate id, an option that does not fit the step) are reported by Compile, Export and Run.
type Workflow struct {
	b     *dsl.Builder
	name  string
	ids   map[string]bool
	prev  []string // the steps the next one follows
	last  []Step   // the last group added
	out   any
	setOK bool
	errs  []error
}

// New starts a workflow named name.
func New(name string) *Workflow {
	return &Workflow{b: dsl.New(name), name: name, ids: map[string]bool{}}
}

// Type is a workflow input's type.
type Type string

// Input types.
const (
	String  Type = "string"
	Number  Type = "number"
	Boolean Type = "boolean"
	Array   Type = "array"
	Object  Type = "object"
)

// InputOption configures a declared input: Required, Default, Describe.
type InputOption = dsl.InputOption

// Required marks an input as required.
func Required() InputOption { return dsl.Required() }

// Default gives an input a default value.
func Default(v any) InputOption { return dsl.WithDefault(v) }

// Describe documents an input.
func Describe(d string) InputOption { return dsl.Described(d) }

// Input declares an input; steps read it as {{ inputs.NAME }}.
func (w *Workflow) Input(name string, t Type, opts ...InputOption) *Workflow {
	w.b.Input(name, string(t), opts...)
	return w
}

// Describe sets the workflow's description.
func (w *Workflow) Describe(d string) *Workflow { w.b.Describe(d); return w }

// MCPServer declares an external MCP server whose tools agents list as "mcp:NAME" (Tools(MCP(name))).
func (w *Workflow) MCPServer(name string, s dsl.MCPServer) *Workflow {
	w.b.MCPServer(name, s)
	return w
}

// Step is one step, made by LLM, Agent, Call or ReviewStep, for Parallel and ForEach (the
// Workflow methods of the same names add one directly).
type Step struct {
	s    dsl.Step
	kind string // llm, agent, tool, review
	cfg  config
}

// ID is the step's id: later steps read its output as {{ ID.output }}.
func (s Step) ID() string { return s.s.ID }

// LLM is one model call with prompt (a template: {{ inputs.topic }}).
func LLM(id, prompt string, opts ...Option) Step {
	return newStep(id, "llm", toolspec.LLM, map[string]any{"prompt": prompt}, opts)
}

// Agent is a model that calls tools (Tools) in a loop until it answers prompt.
func Agent(id, prompt string, opts ...Option) Step {
	return newStep(id, "agent", toolspec.Agent.Name, map[string]any{"prompt": prompt}, opts)
}

// Call runs tool (a built-in such as "search", or a Tool declared in Go) with inputs: a struct
// (encoded as JSON: its json tags are the input names) or a map.
func Call(id, tool string, inputs any, opts ...Option) Step {
	m, err := asMap(inputs)
	st := newStep(id, "tool", tool, m, opts)
	if err != nil {
		st.cfg.errs = append(st.cfg.errs, fmt.Errorf("step %s: inputs: %w", id, err))
	}
	return st
}

// ReviewStep pauses the run until a person approves, edits or rejects (Data, Instructions,
// Reviewers); decide it from Go with Engine.Review.
func ReviewStep(id, title string, opts ...Option) Step {
	return newStep(id, "review", toolspec.Review.Name, map[string]any{"title": title}, opts)
}

func newStep(id, kind, tool string, inputs map[string]any, opts []Option) Step {
	st := Step{s: dsl.Step{ID: id, Tool: tool, Inputs: inputs}, kind: kind}
	for _, o := range opts {
		o(&st.cfg)
	}
	return st
}

// LLM adds a model call after the previous steps.
func (w *Workflow) LLM(id, prompt string, opts ...Option) *Workflow {
	return w.Then(LLM(id, prompt, opts...))
}

// Agent adds a tool-calling agent after the previous steps.
func (w *Workflow) Agent(id, prompt string, opts ...Option) *Workflow {
	return w.Then(Agent(id, prompt, opts...))
}

// Step adds a tool step after the previous steps (see Call).
func (w *Workflow) Step(id, tool string, inputs any, opts ...Option) *Workflow {
	return w.Then(Call(id, tool, inputs, opts...))
}

// Review adds a human review after the previous steps.
func (w *Workflow) Review(id, title string, opts ...Option) *Workflow {
	return w.Then(ReviewStep(id, title, opts...))
}

// ForEach adds s run once per item of items (a template naming an array, e.g.
// "{{ inputs.urls }}"); s reads the item as {{ item }} and its output is the array of results.
// At most concurrency items run at once (0: the default).
func (w *Workflow) ForEach(items string, concurrency int, s Step) *Workflow {
	s.s.ForEach, s.s.Concurrency = items, concurrency
	return w.Then(s)
}

// Then adds steps after the previous ones, one after the other.
func (w *Workflow) Then(steps ...Step) *Workflow {
	for _, s := range steps {
		w.add([]Step{s})
	}
	return w
}

// Parallel adds steps that run at the same time, after the previous steps; the next step
// follows all of them (an LLM step sees their outputs as its context).
func (w *Workflow) Parallel(steps ...Step) *Workflow {
	if len(steps) == 0 {
		w.errs = append(w.errs, errors.New("Parallel needs at least one step"))
		return w
	}
	w.add(steps)
	return w
}

// Output sets the workflow's output (templates allowed: "{{ verdict.output.text }}"). Without
// it the output is the last step's: the text of a model call (its json with ResponseJSON), the
// output of another step, or an object by step id after Parallel.
func (w *Workflow) Output(v any) *Workflow { w.out, w.setOK = v, true; return w }

func (w *Workflow) add(group []Step) {
	var ids []string
	for _, st := range group {
		s, err := st.build(w.prev)
		if err != nil {
			w.errs = append(w.errs, err)
			continue
		}
		if w.ids[s.ID] {
			w.errs = append(w.errs, fmt.Errorf("step id %q is used twice: give each step its own id", s.ID))
			continue
		}
		w.ids[s.ID] = true
		w.b.Parallel(s)
		ids = append(ids, s.ID)
	}
	w.prev, w.last = ids, group
}

// build applies the options to the step, following after.
func (st Step) build(after []string) (dsl.Step, error) {
	s := st.s
	s.Inputs = copyMap(s.Inputs)
	c := st.cfg
	if len(c.errs) > 0 {
		return s, errors.Join(c.errs...)
	}
	if !c.noChain {
		s.DependsOn = append(append([]string{}, after...), c.after...)
	} else {
		s.DependsOn = append([]string{}, c.after...)
	}
	if len(s.DependsOn) == 0 {
		s.DependsOn = nil
	}
	model := st.kind == "llm" || st.kind == "agent"
	misfit, errs := c.setInputs(st.kind, s.Inputs)
	if len(errs) > 0 {
		return s, fmt.Errorf("step %s: %w", s.ID, errs[0])
	}
	if len(misfit) > 0 {
		return s, fmt.Errorf("step %s (%s): %s do not apply to %s step", s.ID, s.Tool, strings.Join(misfit, ", "), english.A(st.kind))
	}
	if errs := c.unused(); len(errs) > 0 {
		return s, fmt.Errorf("step %s: %w", s.ID, errors.Join(errs...))
	}
	if model && c.context == nil && !c.noChain && len(after) > 0 {
		s.Inputs["context"] = "auto" // the outputs of the steps it follows
	}
	s.Name, s.Condition, s.Timeout, s.ContinueOnError = c.name, c.when, c.timeout, c.continueOnError
	if c.retry != nil {
		r := *c.retry
		s.Retry = &r
	}
	return s, nil
}

// Definition is the built definition, with the default output.
func (w *Workflow) Definition() (*dsl.Definition, error) {
	if len(w.errs) > 0 {
		return nil, fmt.Errorf("workflow %s: %w", w.name, errors.Join(w.errs...))
	}
	def, err := w.b.Definition()
	if err != nil {
		return nil, err
	}
	def.Output = w.output()
	return def, nil
}

// output is the workflow's output: set, or the last group's.
func (w *Workflow) output() any {
	if w.setOK {
		return w.out
	}
	of := func(st Step) string {
		switch {
		case (st.kind == "llm" || st.kind == "agent") && st.s.ForEach == "" && (st.cfg.json || st.cfg.schema != nil):
			return "{{ " + st.s.ID + ".output.json }}"
		case (st.kind == "llm" || st.kind == "agent") && st.s.ForEach == "":
			return "{{ " + st.s.ID + ".output.text }}"
		}
		return "{{ " + st.s.ID + ".output }}"
	}
	switch len(w.last) {
	case 0:
		return nil
	case 1:
		return of(w.last[0])
	}
	m := map[string]any{}
	for _, st := range w.last {
		m[st.s.ID] = of(st)
	}
	return m
}

// Export is the workflow file (JSON) of the definition: `weft run FILE` runs it as Run does
// (tools declared in Go need a worker that declares them too).
func (w *Workflow) Export() ([]byte, error) {
	def, err := w.Definition()
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(def)
	if err != nil {
		return nil, err
	}
	b, err := dsl.FromJSON(data)
	if err != nil {
		return nil, err
	}
	return b.ToJSON()
}

// Compile validates the definition and compiles it for the interpreter.
func (w *Workflow) Compile() (*dsl.Workflow, error) {
	data, err := w.Export()
	if err != nil {
		return nil, err
	}
	return dsl.LoadWeft(w.name+".json", data)
}

func asMap(v any) (map[string]any, error) {
	switch m := v.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return copyMap(m), nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%T is not a JSON object: %w", v, err)
	}
	return m, nil
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
