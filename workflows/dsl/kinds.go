package dsl

import "github.com/weftworks/weft/activities/toolspec"

// stepKind is what a tool's steps need beyond their input schema: how they compile (the inputs
// the tool evaluates per item, names checked beyond the schema), whether they may wait for a
// person, and what a plan counts of them. One file per kind (kind_*.go) registers its value for its tool's declaration; a tool
// without one is a plain tool call: its schema and references say everything.
type stepKind struct {
	compile func(c *compiler, cs *CompiledStep, inPtr string)
	// mayWait: a step of the kind may wait for a person's decision itself (a review; an
	// agent's approved tool calls). A child workflow's reviews are its own steps'.
	mayWait bool
	// plan, for a kind that runs a step per item of its own (a loop): one item's calls, and how
	// many items the plan knows (known false: the run's); ok false when it has no such step.
	plan func(cs *CompiledStep, inputs map[string]any) (calls toolspec.Calls, items int, known, ok bool)
}

// kinds are the kinds, by their tool's declaration.
var kinds = map[*toolspec.Spec]stepKind{}

// MayWait reports whether a step of the tool spec may wait for a person's decision itself: a
// review step, or an agent (the tool calls its approve list names). The CLI's fixtures, evals
// and retries and the interpreter's review errors ask this.
func MayWait(spec *toolspec.Spec) bool { return spec != nil && kinds[spec].mayWait }

// MayWait reports whether the step may wait for a person's decision itself (MayWait of its tool).
func (cs *CompiledStep) MayWait() bool { return MayWait(cs.Spec) }

// itemScope are the names a per-item input sees.
var itemScope = scope{names: []string{"item", "index"}}

// decodeWritten is the typed input decode gives of the step's inputs as the file writes them,
// when none of fields (the eager inputs decode reads) holds a template: the compiler decodes it
// once and the run reads it (TypedInput). nil when one is templated, or does not decode (the
// schema's diagnostic says why): the run decodes the resolved inputs with the same decode.
func decodeWritten[In any](cs *CompiledStep, decode func(map[string]any) (In, error), fields ...string) *In {
	for _, f := range fields {
		if hasTemplate(cs.Step.Inputs[f]) {
			return nil
		}
	}
	in, err := decode(cs.Step.Inputs)
	if err != nil {
		return nil
	}
	return &in
}

// TypedInput is the typed input of step cs as its kind decoded it when compiling (the step's
// Input), or decode of inputs, the step's resolved inputs, when the compiler could not (a
// templated setting; a step the evaluate activity rebuilt from its source form). One decode
// per kind, so the declaration's defaults are the only ones.
func TypedInput[In any](cs *CompiledStep, inputs map[string]any, decode func(map[string]any) (In, error)) (In, error) {
	if in, ok := cs.Input.(*In); ok && in != nil {
		return *in, nil
	}
	return decode(inputs)
}
