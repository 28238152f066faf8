package toolspec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Kind says where a tool's steps run.
type Kind string

const (
	// KindActivity tools do I/O; each step is a Temporal activity named after the tool.
	KindActivity Kind = "activity"
	// KindInline tools are pure data transformations run inside workflow code: no activity,
	// no history events.
	KindInline Kind = "inline"
	// KindControl tools are interpreted by the workflow itself (loop runs a nested step per item).
	KindControl Kind = "control"
	// KindReview pauses the run until a human decision arrives.
	KindReview Kind = "review"
	// KindAgent steps are a tool-calling loop run by the workflow: one llm activity per
	// iteration, one activity (or child workflow) per tool call.
	KindAgent Kind = "agent"
	// KindChild steps run another workflow as a child workflow.
	KindChild Kind = "child"
)

// Annotations are the behaviour hints MCP clients read. They are always set explicitly.
type Annotations struct {
	ReadOnly    bool `json:"readOnlyHint"`
	Destructive bool `json:"destructiveHint"`
	Idempotent  bool `json:"idempotentHint"`
	OpenWorld   bool `json:"openWorldHint"`
}

// Calls counts the external calls one execution of a step makes; plans add them up.
type Calls struct {
	Embed         int `json:"embed,omitempty"`
	VectorSearch  int `json:"vectorSearch,omitempty"`
	Rerank        int `json:"rerank,omitempty"`
	LLM           int `json:"llm,omitempty"`
	DatabaseWrite int `json:"databaseWrite,omitempty"`
	DatabaseRead  int `json:"databaseRead,omitempty"`
	HTTP          int `json:"http,omitempty"`
}

// Add returns c + o.
func (c Calls) Add(o Calls) Calls {
	return Calls{c.Embed + o.Embed, c.VectorSearch + o.VectorSearch, c.Rerank + o.Rerank, c.LLM + o.LLM,
		c.DatabaseWrite + o.DatabaseWrite, c.DatabaseRead + o.DatabaseRead, c.HTTP + o.HTTP}
}

// Times returns c scaled by n.
func (c Calls) Times(n int) Calls {
	return Calls{c.Embed * n, c.VectorSearch * n, c.Rerank * n, c.LLM * n, c.DatabaseWrite * n, c.DatabaseRead * n, c.HTTP * n}
}

// IsZero reports whether no external call is counted.
func (c Calls) IsZero() bool { return c == Calls{} }

// Spec declares one tool.
type Spec struct {
	Name        string
	Domain      string
	Kind        Kind
	Title       string
	Description string
	// In is the Go type of the tool's inputs (a struct): the input schema is derived from it
	// (derive.go), and the handler receives one, decoded from the step's validated inputs with
	// the declared defaults filled in.
	In reflect.Type
	// Out is the Go type of the tool's output: the output schema is derived from it.
	Out reflect.Type
	// RawInput gives the JSON Schema of input fields no Go type describes (a value that may be
	// an array or an object), by JSON name.
	RawInput map[string]string
	// input is the JSON Schema (draft 2020-12) of the step's inputs after template resolution,
	// derived from In (InputJSON); output the schema of the result, derived from Out, used for
	// shape checks (forEach over an array) and plans (OutputSchema). They are built on first use.
	input, output string
	// Annotations for MCP clients.
	Annotations Annotations
	// MCP: the MCP gateway offers the tool, as weft_<name>, with its input and output schemas
	// (Portable).
	MCP bool
	// Lazy names input fields the tool evaluates itself, per item (filter.condition,
	// transform.template, loop.step, ...). The interpreter passes them through unresolved, and the
	// validator checks their references with the per-item names (item, index, or loop's "as") in scope.
	Lazy []string
	// Calls estimates the external calls of one execution, given the step's literal inputs
	// (templated values are absent). Nil means none.
	Calls func(inputs map[string]any) Calls
	// Timeout is the default per-attempt timeout of the tool's activity (0: DefaultTimeout);
	// a step's "timeout" overrides it.
	Timeout time.Duration
	// MaxAttempts is the default retry limit (0: DefaultMaxAttempts); a step's retry overrides it.
	MaxAttempts int
	// Heartbeat is the heartbeat timeout of the tool's activity (0: DefaultHeartbeat): a worker
	// that dies is noticed after this long instead of after the whole timeout. The activity
	// adapter heartbeats for tools that do not (HeartbeatsItself false).
	Heartbeat time.Duration
	// HeartbeatsItself: the tool records heartbeats with details of its own (progress, streamed
	// text), which the adapter's keep-alive heartbeats would overwrite.
	HeartbeatsItself bool
	// ModelCall: one chat completion (the llm tool). Its activity streams the text in its
	// heartbeats, is named after its step, and is never batched; agents call it per iteration.
	ModelCall bool
	// Branches: the step's output ({branch, skip}) decides which of its dependants run (the
	// conditional tool).
	Branches bool
	// NeedsCollection: the tool fails without a collection (the validator warns about a step
	// that names none, in its inputs or the file's defaults).
	NeedsCollection bool
	// Pure: the tool's output depends on its inputs alone (no network, no store, no clock, no
	// provider key), so `weft test` runs it for real when a fixture does not mock it.
	Pure bool
	// Aliases are other names files may use for inputs (vai's names), alias -> input. Steps are
	// rewritten to the input's own name when compiled, so everything after sees one name.
	Aliases map[string]string
	// Batch says that a forEach over this tool sends its items to the provider in batches, and
	// within which limits (batch.go). Nil: one activity per item.
	Batch *Batch

	once     sync.Once
	schema   *jsonschema.Schema
	out      any
	mock     any
	defaults map[string]any
	err      error
}

// Defaults for tools that declare none.
const (
	DefaultTimeout     = time.Minute
	DefaultMaxAttempts = 5
	DefaultHeartbeat   = 10 * time.Second
)

// EffectiveHeartbeat is the heartbeat timeout of the tool's activities.
func (s *Spec) EffectiveHeartbeat() time.Duration {
	if s.Heartbeat > 0 {
		return s.Heartbeat
	}
	return DefaultHeartbeat
}

// Result is what every tool activity returns: the tool's output plus what the interpreter
// records about the call. Activities are registered through one adapter that fills it.
type Result struct {
	Output  any    `json:"output"`
	Attempt int32  `json:"attempt"`
	Usage   *Usage `json:"usage,omitempty"`
	// Warnings are what a person should know although the call succeeded (a search of an empty
	// collection); a tool reports them as "warnings" in its output object.
	Warnings []string `json:"warnings,omitempty"`
}

// Usage is what one call consumed.
type Usage struct {
	PromptTokens     int64 `json:"promptTokens,omitempty"`
	CompletionTokens int64 `json:"completionTokens,omitempty"`
	TotalTokens      int64 `json:"totalTokens,omitempty"`
	EmbeddingTokens  int64 `json:"embeddingTokens,omitempty"`
	// CostUSD is what the call cost, from the worker's price table (0 when the model is unknown).
	CostUSD float64 `json:"costUsd,omitempty"`
	// Model that answered (llm calls).
	Model string `json:"model,omitempty"`
	// Requests is how many provider requests billed this usage, the failed attempts' before it
	// included (what TokenUsage.calls counts); 0 from a handler: the adapter counts them.
	Requests int64 `json:"requests,omitempty"`
}

// Error types tool activities and the interpreter use; retries skip the non-retryable ones.
const (
	// ErrInvalidInput: the step's inputs are wrong; retrying cannot help.
	ErrInvalidInput = "InvalidInput"
	// ErrMissingConfig: a provider setting (key, URL) is missing; retrying cannot help.
	ErrMissingConfig = "MissingConfiguration"
	// ErrToolFailed: a Go tool (weft.Tool) returned an error it did not mark weft.Retryable; an
	// agent's model gets its text at once.
	ErrToolFailed = "ToolFailed"
)

// Canonical renames aliased inputs to their own names. conflicts lists aliases given together
// with the input they stand for (the input's own name wins).
func (s *Spec) Canonical(inputs map[string]any) (out map[string]any, conflicts []string) {
	if len(s.Aliases) == 0 || inputs == nil {
		return inputs, nil
	}
	out = make(map[string]any, len(inputs))
	aliases := make([]string, 0, len(inputs))
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for k, v := range inputs {
		if _, isAlias := s.Aliases[k]; isAlias {
			aliases = append(aliases, k)
			continue
		}
		out[k] = v
	}
	sort.Strings(aliases)
	for _, a := range aliases {
		to := s.Aliases[a]
		if _, set := out[to]; set {
			conflicts = append(conflicts, a)
			continue
		}
		out[to] = inputs[a]
	}
	return out, conflicts
}

// HasInput reports whether the tool declares an input field.
func (s *Spec) HasInput(name string) bool {
	sch, err := s.Schema()
	if err != nil || sch == nil {
		return false
	}
	_, ok := sch.Properties[name]
	return ok
}

// EffectiveTimeout returns the tool's per-attempt timeout.
func (s *Spec) EffectiveTimeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultTimeout
}

// EffectiveMaxAttempts returns the tool's retry limit.
func (s *Spec) EffectiveMaxAttempts() int {
	if s.MaxAttempts > 0 {
		return s.MaxAttempts
	}
	return DefaultMaxAttempts
}

// IsLazy reports whether the tool evaluates input field name itself.
func (s *Spec) IsLazy(name string) bool {
	for _, l := range s.Lazy {
		if l == name {
			return true
		}
	}
	return false
}

// EstimateCalls returns the external calls one execution of the step makes.
func (s *Spec) EstimateCalls(inputs map[string]any) Calls {
	if s.Calls == nil {
		return Calls{}
	}
	return s.Calls(inputs)
}

func (s *Spec) compile() {
	s.once.Do(func() {
		if s.In != nil && s.input == "" {
			if s.input, s.err = deriveSchema(s.In, s.RawInput, false); s.err != nil {
				s.err = fmt.Errorf("tool %q: input type %s: %w", s.Name, s.In, s.err)
				return
			}
		}
		if s.Out != nil && s.output == "" {
			if s.output, s.err = deriveSchema(s.Out, nil, true); s.err != nil {
				s.err = fmt.Errorf("tool %q: output type %s: %w", s.Name, s.Out, s.err)
				return
			}
		}
		var decl struct {
			Properties map[string]struct {
				Default any `json:"default"`
			} `json:"properties"`
		}
		if json.Unmarshal([]byte(s.input), &decl) == nil {
			//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
			for name, p := range decl.Properties {
				if p.Default != nil {
					if s.defaults == nil {
						s.defaults = map[string]any{}
					}
					s.defaults[name] = p.Default
				}
			}
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(s.input))
		if err != nil {
			s.err = fmt.Errorf("tool %q: input schema is not JSON: %w", s.Name, err)
			return
		}
		url := "weft://tools/" + s.Name + "/input.json"
		if err := c.AddResource(url, doc); err != nil {
			s.err = fmt.Errorf("tool %q: %w", s.Name, err)
			return
		}
		s.schema, s.err = c.Compile(url)
		if s.err == nil && s.output != "" {
			s.err = json.Unmarshal([]byte(s.output), &s.out)
		}
		if s.err == nil && s.Out != nil {
			s.mock, s.err = mockSchema(s.Out)
			if s.err != nil {
				s.err = fmt.Errorf("tool %q: output type %s: %w", s.Name, s.Out, s.err)
			}
		}
	})
}

// InputJSON is the input schema as JSON (what MCP clients and the console are given).
func (s *Spec) InputJSON() string {
	s.compile()
	return s.input
}

// Schema returns the compiled input schema.
func (s *Spec) Schema() (*jsonschema.Schema, error) {
	s.compile()
	return s.schema, s.err
}

// OutputSchema returns the decoded output schema (nil when undeclared).
func (s *Spec) OutputSchema() any {
	s.compile()
	return s.out
}

// MockSchema is the schema of what could stand for the tool's output (`weft test`'s mocks): the
// output's fields with their types, derived from the Go output type as OutputSchema is, and no
// field that type does not have (but in an `open` struct), so a mock says only what the tool could
// return. Unlike the tool's output, a mock may leave fields out: a fixture gives what the workflow
// reads. Nil when the output is undeclared.
func (s *Spec) MockSchema() any {
	s.compile()
	return s.mock
}

// ValidateInputs checks decoded JSON inputs against the tool's input schema. The error, when not
// nil, is a *jsonschema.ValidationError.
func (s *Spec) ValidateInputs(inputs any) error {
	sch, err := s.Schema()
	if err != nil {
		return err
	}
	return sch.Validate(inputs)
}

var registry = map[string]*Spec{}

// Register declares a tool. Activity tools are declared with their handlers in package
// activities, one file per tool; the tools the workflow interprets itself in this package. A
// duplicate declaration is a programmer error and panics at init.
func Register(s *Spec) { register(s) }

func register(s *Spec) {
	if _, dup := registry[s.Name]; dup {
		panic("toolspec: duplicate tool " + s.Name)
	}
	if s.Annotations.ReadOnly && s.Annotations.Destructive {
		panic("toolspec: tool " + s.Name + " is both read-only and destructive")
	}
	// Schemas compile on first use (every command would pay ~10 ms otherwise);
	// TestRegistryHasEveryTool compiles them all.
	registry[s.Name] = s
}

// TightenForTest replaces the input schema of the named tool by input until restore is called:
// tests use it to stand for a release that tightened a tool's schema. Call it only while no
// other test uses the tool.
func TightenForTest(name, input string) (restore func()) {
	s, ok := registry[name]
	if !ok {
		panic("toolspec: TightenForTest: no tool " + name)
	}
	old, oldOut := s.input, s.output
	if s.In != nil {
		old = "" // derived again from the type
	}
	if s.Out != nil {
		oldOut = ""
	}
	s.input, s.once, s.schema, s.out, s.mock, s.defaults, s.err = input, sync.Once{}, nil, nil, nil, nil, nil
	generation.Add(1)
	return func() {
		s.input, s.output, s.once, s.schema, s.out, s.mock, s.defaults, s.err = old, oldOut, sync.Once{}, nil, nil, nil, nil, nil
		generation.Add(1)
	}
}

// generation counts changes to the registry after init (TightenForTest): what is memoised from
// the registry (compiled workflows) is keyed by it.
var generation atomic.Uint64

// Generation is the registry's generation: it changes whenever a schema does.
func Generation() uint64 { return generation.Load() }

// Lookup returns the spec of the named tool.
func Lookup(name string) (*Spec, bool) {
	s, ok := registry[name]
	return s, ok
}

// All returns every spec, sorted by name.
func All() []*Spec {
	out := make([]*Spec, 0, len(registry))
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for _, s := range registry {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names returns every tool name, sorted.
func Names() []string {
	all := All()
	out := make([]string, len(all))
	for i, s := range all {
		out[i] = s.Name
	}
	return out
}

// Categories of tools, as consoles colour them.
const (
	CategoryRetrieval  = "retrieval"
	CategoryEmbedding  = "embedding"
	CategoryManagement = "management"
	CategoryUtility    = "utility"
	CategoryControl    = "control"
	CategoryGeneration = "generation"
	CategoryReview     = "review"
	CategoryMemory     = "memory"
)

// Category is the group a tool is shown in: its domain, with review steps apart from the other
// control steps and the generate domain named generation.
func (s *Spec) Category() string {
	switch {
	case s.Kind == KindReview:
		return CategoryReview
	case s.Domain == "generate":
		return CategoryGeneration
	}
	return s.Domain
}
