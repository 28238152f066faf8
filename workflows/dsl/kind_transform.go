package dsl

import (
	"fmt"
	"maps"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/expr"
)

// transform: the template is rendered per item; fields and mapping, with their declaration's
// defaults, are decoded when written out, else when the run has resolved them.
func init() {
	kinds[toolspec.Transform.Spec] = stepKind{compile: func(c *compiler, cs *CompiledStep, inPtr string) {
		if t, ok := cs.Lazy["template"]; ok {
			val, perrs := expr.CompileValue(t)
			for _, pe := range perrs {
				c.errIn(inPtr+"/template"+pe.Path, pe.Offset, pe.Msg, pe.Hint)
			}
			cs.Compiled = TransformCompiled{Template: val}
			c.checkValueRefs(inPtr+"/template", val, cs.ID, itemScope)
		}
		if in := decodeWritten(cs, TransformInput, "fields"); in != nil {
			cs.Input = in
		}
	}}
}

// TransformCompiled is a transform's compiled value (CompiledStep.Compiled): its template,
// rendered per item with item and index in scope. (Held by value, as FilterCompiled.)
type TransformCompiled struct {
	Template *expr.Value
}

// Transform is transform step cs's compiled value; ok false for another step, or a transform
// that writes no template (it reads fields and mapping).
func (cs *CompiledStep) Transform() (t TransformCompiled, ok bool) {
	t, ok = cs.Compiled.(TransformCompiled)
	return t, ok
}

func (t TransformCompiled) refs() []expr.Ref { return valueRefs(t.Template) }

func (t TransformCompiled) eachRefs(fn func(ptr string, refs []expr.Ref)) {
	eachValueRefs("/template", t.Template, fn)
}

// TransformInput decodes a transform step's settings (fields, and mapping as written) into its
// declared input. A field named by a number (a templated list resolved to [1, 2]) is converted
// at decode to its text, as the step has always read it: the declared type stays strings.
// (Its template is compiled on its own: TransformCompiled.)
func TransformInput(inputs map[string]any) (toolspec.TransformIn, error) {
	if fs, ok := inputs["fields"].([]any); ok {
		texts := make([]any, len(fs))
		for i, f := range fs {
			texts[i] = fmt.Sprint(f)
		}
		inputs = maps.Clone(inputs)
		inputs["fields"] = texts
	}
	return toolspec.Transform.DecodeFields(inputs, "fields", "mapping")
}
