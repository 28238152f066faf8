package dsl

import (
	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/expr"
)

// filter: the condition, with its declaration's default, is an expression evaluated per item.
// Its array is data, read as the run resolved it.
func init() {
	kinds[toolspec.Filter.Spec] = stepKind{compile: func(c *compiler, cs *CompiledStep, inPtr string) {
		in := decodeWritten(cs, FilterInput)
		if in == nil {
			return
		}
		cs.Input = in
		if in.Condition != "" {
			cs.Compiled = FilterCompiled{Condition: c.compileExpr(inPtr+"/condition", in.Condition, itemScope)}
		}
	}}
}

// FilterCompiled is a filter's compiled value (CompiledStep.Compiled): its condition, evaluated
// per item with item and index in scope; nil when it did not compile. (Held by value: a struct
// of one pointer is stored in the interface without an allocation.)
type FilterCompiled struct {
	Condition *expr.Program
}

// Filter is filter step cs's compiled value; ok false for another step, or a filter whose
// condition is not written or not decoded.
func (cs *CompiledStep) Filter() (f FilterCompiled, ok bool) {
	f, ok = cs.Compiled.(FilterCompiled)
	return f, ok
}

func (f FilterCompiled) refs() []expr.Ref { return programRefs(f.Condition) }

func (f FilterCompiled) eachRefs(fn func(ptr string, refs []expr.Ref)) {
	if f.Condition != nil {
		fn("/condition", f.Condition.Refs())
	}
}

// FilterInput decodes a filter step's settings (its condition, as written: the step evaluates
// it per item) with the declaration's defaults.
func FilterInput(inputs map[string]any) (toolspec.FilterIn, error) {
	return toolspec.Filter.DecodeFields(inputs, "condition")
}
