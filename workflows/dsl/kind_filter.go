package dsl

import "github.com/weftworks/weft/activities/toolspec"

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
			cs.Expr = c.compileExpr(inPtr+"/condition", in.Condition, itemScope)
		}
	}}
}

// FilterInput decodes a filter step's settings (its condition, as written: the step evaluates
// it per item) with the declaration's defaults.
func FilterInput(inputs map[string]any) (toolspec.FilterIn, error) {
	return toolspec.Filter.DecodeFields(inputs, "condition")
}
