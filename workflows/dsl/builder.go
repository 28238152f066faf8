package dsl

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Builder builds a Definition in Go code:
//
//	b := dsl.New("Research").
//		Input("question", "string", dsl.Required()).
//		Default("db", "myapp").
//		Step("research", "query", dsl.In{"query": "{{ inputs.question }}", "limit": 10}).
//		Step("summarize", "generate", dsl.In{"prompt": "Summarize", "context": "{{ research.output.results }}"}).
//		Output(dsl.In{"summary": "{{ summarize.output.text }}"})
//	wf, err := b.Compile()
//
// ToJSON/FromJSON round-trip exactly: FromJSON(ToJSON(b)) builds the same definition.
type Builder struct{ def Definition }

// In is a step's inputs (or any JSON object).
type In = map[string]any

// New starts a workflow definition.
func New(name string) *Builder { return &Builder{def: Definition{Name: name}} }

// Describe sets the description.
func (b *Builder) Describe(d string) *Builder { b.def.Description = d; return b }

// Version sets the semantic version.
func (b *Builder) Version(v string) *Builder { b.def.Version = v; return b }

// InputOption configures a declared input.
type InputOption func(*Input)

// Required marks an input as required.
func Required() InputOption { return func(i *Input) { i.Required = true } }

// WithDefault gives an input a default value.
func WithDefault(v any) InputOption { return func(i *Input) { i.Default = v } }

// Described documents an input.
func Described(d string) InputOption { return func(i *Input) { i.Description = d } }

// Input declares a workflow input of type string, number, boolean, array or object.
func (b *Builder) Input(name, typ string, opts ...InputOption) *Builder {
	if b.def.Inputs == nil {
		b.def.Inputs = map[string]Input{}
	}
	in := Input{Type: typ}
	for _, o := range opts {
		o(&in)
	}
	b.def.Inputs[name] = in
	return b
}

// Default sets a value under defaults.
func (b *Builder) Default(key string, v any) *Builder {
	if b.def.Defaults == nil {
		b.def.Defaults = map[string]any{}
	}
	b.def.Defaults[key] = v
	return b
}

// StepOption configures a step.
type StepOption func(*Step)

// Named sets a step's display name.
func Named(n string) StepOption { return func(s *Step) { s.Name = n } }

// When sets a step's condition.
func When(cond string) StepOption { return func(s *Step) { s.Condition = cond } }

// ForEach runs the step per item of an array, with at most concurrency in flight (0: default).
func ForEach(items string, concurrency int) StepOption {
	return func(s *Step) { s.ForEach, s.Concurrency = items, concurrency }
}

// NoBatch runs a forEach over a batching tool one call per item.
func NoBatch() StepOption { return func(s *Step) { f := false; s.Batch = &f } }

// ContinueOnError records a failure and goes on.
func ContinueOnError() StepOption { return func(s *Step) { s.ContinueOnError = true } }

// After adds explicit dependencies.
func After(ids ...string) StepOption {
	return func(s *Step) { s.DependsOn = append(s.DependsOn, ids...) }
}

// Timeout sets the per-attempt timeout, e.g. "30s".
func Timeout(d string) StepOption { return func(s *Step) { s.Timeout = d } }

// WithRetry overrides the retry policy.
func WithRetry(r Retry) StepOption { return func(s *Step) { s.Retry = &r } }

// Step appends a step.
func (b *Builder) Step(id, tool string, inputs In, opts ...StepOption) *Builder {
	if inputs == nil {
		inputs = In{}
	}
	s := Step{ID: id, Tool: tool, Inputs: inputs}
	for _, o := range opts {
		o(&s)
	}
	b.def.Steps = append(b.def.Steps, s)
	return b
}

// Parallel appends steps that share no dependencies; they run at the same time. It is Step
// several times: weft derives parallelism from references, never from declaration order.
func (b *Builder) Parallel(steps ...Step) *Builder {
	b.def.Steps = append(b.def.Steps, steps...)
	return b
}

// Output sets the workflow's output.
func (b *Builder) Output(v any) *Builder { b.def.Output = v; return b }

// ExposeMCP offers the workflow to MCP clients as its own tool.
func (b *Builder) ExposeMCP() *Builder { b.def.MCP = &MCPOptions{Expose: true}; return b }

// MCPServer declares an external MCP server the workflow's agents may list as "mcp:NAME".
func (b *Builder) MCPServer(name string, s MCPServer) *Builder {
	if b.def.MCPServers == nil {
		b.def.MCPServers = map[string]MCPServer{}
	}
	b.def.MCPServers[name] = s
	return b
}

// Definition returns a copy of the definition built so far (normalised through JSON).
func (b *Builder) Definition() (*Definition, error) {
	data, err := b.ToJSON()
	if err != nil {
		return nil, err
	}
	var d Definition
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// Compile validates the definition and compiles it.
func (b *Builder) Compile() (*Workflow, error) {
	data, err := b.ToJSON()
	if err != nil {
		return nil, err
	}
	return LoadWeft(b.def.Name+".json", data)
}

// ToJSON encodes the definition as an indented workflow file.
func (b *Builder) ToJSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(b.def); err != nil {
		return nil, fmt.Errorf("encoding workflow %q: %w", b.def.Name, err)
	}
	return buf.Bytes(), nil
}

// FromJSON starts a builder from a step-format workflow file's bytes.
func FromJSON(data []byte) (*Builder, error) {
	var d Definition
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("decoding workflow: %w", err)
	}
	return &Builder{def: d}, nil
}
