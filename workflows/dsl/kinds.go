package dsl

import (
	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/expr"
)

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

// kindCompiled is a kind's compiled value (CompiledStep.Compiled), declared in the kind's file
// with the accessor the run reads it through (cs.Filter, cs.Nested, cs.Agent, ...). It says
// which references its expressions and templates make, so that dependencies and dialect checks
// need no case per kind.
type kindCompiled interface {
	// refs are every reference its expressions and templates make.
	refs() []expr.Ref
	// eachRefs calls fn for each expression or template with the references it makes and the
	// JSON pointer, below the step's inputs, of the input it is written in.
	eachRefs(fn func(ptr string, refs []expr.Ref))
}

// CompiledRefs are the references the step's kind compiled beyond its inputs make (a filter's
// condition, a transform's template, a loop's step inputs, an agent's instructions).
func (cs *CompiledStep) CompiledRefs() []expr.Ref {
	if cs.Compiled == nil {
		return nil
	}
	return cs.Compiled.refs()
}

// valueRefs are the references of v, a compiled template value that may be nil.
func valueRefs(v *expr.Value) []expr.Ref {
	if v == nil {
		return nil
	}
	return v.Refs()
}

// eachValueRefs calls fn for each template of v (which may be nil) below pointer ptr.
func eachValueRefs(ptr string, v *expr.Value, fn func(ptr string, refs []expr.Ref)) {
	if v != nil {
		v.Each(func(path string, t *expr.Template) { fn(ptr+path, t.Refs()) })
	}
}

// programRefs are the references of p, a compiled expression that may be nil.
func programRefs(p *expr.Program) []expr.Ref {
	if p == nil {
		return nil
	}
	return p.Refs()
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
