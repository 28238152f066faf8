package toolspec

// The tools below are interpreted by the workflow itself (data tools in workflows/datatools,
// loop and review as step kinds): their declarations give the validator, MCP clients and the
// console their schemas, derived from these types like every other tool's.

// ListResult is the output of the data tools that return a list.
type ListResult struct {
	Results     []any `json:"results" weft:"content"`
	ResultCount int   `json:"resultCount"`
}

// Merge concatenates arrays.
var Merge = Declare[MergeIn, ListResult](&Spec{
	Name: "merge", Domain: "control", Kind: KindInline,
	Title:       "Merge arrays",
	Description: "Concatenate arrays (or step outputs holding results), optionally dropping duplicates by a field.",
	Annotations: readOnlyClosed,
})

// MergeIn is merge's input.
type MergeIn struct {
	Arrays     []any  `json:"arrays" weft:"content,minItems=1,item.type=array|object|null"`
	Dedup      bool   `json:"dedup,omitempty" weft:"default=false"`
	DedupField string `json:"dedup_field,omitempty" weft:"minLength=1"`
}

// Filter keeps the items for which a condition holds.
var Filter = Declare[FilterIn, ListResult](&Spec{
	Name: "filter", Domain: "control", Kind: KindInline,
	Title:       "Filter an array",
	Description: "Keep the items for which condition is truthy; the condition sees item and index.",
	Annotations: readOnlyClosed,
	Lazy:        []string{"condition"},
})

// FilterIn is filter's input.
type FilterIn struct {
	Array     any    `json:"array" weft:"content,type=array|object|null"`
	Condition string `json:"condition" weft:"minLength=1"`
}

// Transform reshapes items.
var Transform = Declare[TransformIn, ListResult](&Spec{
	Name: "transform", Domain: "control", Kind: KindInline,
	Title:       "Transform items",
	Description: "Reshape each item: pick fields, rename (mapping new name -> old path), or render a template per item (item, index).",
	Annotations: readOnlyClosed,
	Lazy:        []string{"template", "mapping"},
})

// TransformIn is transform's input.
type TransformIn struct {
	Array    any               `json:"array" weft:"content,type=array|object|null"`
	Fields   []string          `json:"fields,omitempty" weft:"item.minLength=1"`
	Mapping  map[string]string `json:"mapping,omitempty"`
	Template any               `json:"template,omitempty"`
}

// Template renders a text.
var Template = Declare[TemplateIn, TemplateOut](&Spec{
	Name: "template", Domain: "control", Kind: KindInline,
	Title:       "Render text",
	Description: "Render a text template; returns the text and its length.",
	Annotations: readOnlyClosed,
})

// TemplateIn is template's input.
type TemplateIn struct {
	Text string `json:"text" weft:"content"`
}

// TemplateOut is template's output.
type TemplateOut struct {
	Text      string `json:"text" weft:"content"`
	CharCount int    `json:"charCount"`
}

// Conditional enables one of two sets of steps.
var Conditional = Declare[ConditionalIn, ConditionalOut](&Spec{
	Name: "conditional", Domain: "control", Kind: KindInline, Branches: true,
	Title:       "Branch",
	Description: "Evaluate a condition and enable the steps in then (true) or else (false); the others are skipped.",
	Annotations: readOnlyClosed,
	Lazy:        []string{"condition"},
})

// ConditionalIn is conditional's input.
type ConditionalIn struct {
	Condition any      `json:"condition" weft:"type=string|boolean"`
	Then      []string `json:"then,omitempty"`
	Else      []string `json:"else,omitempty"`
}

// ConditionalOut is conditional's output.
type ConditionalOut struct {
	ConditionResult bool     `json:"conditionResult"`
	BranchTaken     string   `json:"branchTaken"`
	EnabledSteps    []string `json:"enabledSteps"`
	SkippedSteps    []string `json:"skippedSteps"`
}

// Loop runs a nested step per item.
var Loop = Declare[LoopIn, LoopOut](&Spec{
	Name: "loop", Domain: "control", Kind: KindControl,
	Title:       "Loop over items",
	Description: "Run a nested step once per item, the item bound to the name in as; per-item errors are collected instead of failing the run.",
	Annotations: readOnlyClosed,
	Lazy:        []string{"step"},
})

// LoopIn is loop's input.
type LoopIn struct {
	Items         any        `json:"items" weft:"content,type=array|object|null"`
	As            string     `json:"as" pattern:"^[a-z][a-zA-Z0-9_]*$"`
	Step          NestedStep `json:"step"`
	MaxIterations int        `json:"maxIterations,omitempty" weft:"min=1,max=10000,default=100"`
	Concurrency   int        `json:"concurrency,omitempty" weft:"min=1,max=100"`
}

// NestedStep is the step a loop runs per item.
type NestedStep struct {
	Tool   string         `json:"tool"`
	Inputs map[string]any `json:"inputs,omitempty"`
}

// LoopOut is loop's output.
type LoopOut struct {
	Iterations int         `json:"iterations"`
	Results    []any       `json:"results" weft:"content"`
	Errors     []ItemError `json:"errors"`
}

// ItemError is one item's failure.
type ItemError struct {
	Index int    `json:"index"`
	Error string `json:"error"`
}

// Review pauses for a person.
var Review = Declare[ReviewIn, ReviewOut](&Spec{
	Name: "review", Domain: "control", Kind: KindReview,
	Title:       "Human review",
	Description: "Pause until a person approves, edits or rejects the proposal in data.",
	RawInput: map[string]string{"timeout": `{"type":["string","number"],"pattern":"^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$","minimum":1}`,
		"data": `{}`},
	Annotations: Annotations{},
})

// ReviewIn is review's input.
type ReviewIn struct {
	Title        string         `json:"title" weft:"minLength=1,maxLength=500"`
	Instructions string         `json:"instructions,omitempty" weft:"maxLength=20000"`
	Data         any            `json:"data,omitempty" weft:"content"`
	Schema       map[string]any `json:"schema,omitempty" jsonschema:"JSON Schema an edit's data must satisfy (default: the shape of data)"`
	Timeout      any            `json:"timeout,omitempty" jsonschema:"1h, 30m; or a number of milliseconds"`
	OnTimeout    string         `json:"onTimeout,omitempty" weft:"enum=approve|reject|fail,default=fail"`
	Reviewers    []string       `json:"reviewers,omitempty" jsonschema:"who may decide: identity names and \"role:NAME\" entries (an admin always may); decisions nobody authenticated, from the operator's own CLI, pass" weft:"minItems=1" itemPattern:"^(role:)?[^\\s:]+$"`
	RejectFails  *bool          `json:"rejectFails,omitempty" jsonschema:"whether a reject fails the step (default: true for one review; false for a forEach review, where each item's decision, a reject too, is its output)"`
}

// ReviewOut is review's output.
type ReviewOut struct {
	Decision      string `json:"decision"`
	Data          any    `json:"data" weft:"content"`
	Reviewer      string `json:"reviewer"`
	Authenticated bool   `json:"authenticated"`
	Comment       string `json:"comment"`
	Digest        string `json:"digest"`
	DecidedAt     string `json:"decidedAt"`
}
