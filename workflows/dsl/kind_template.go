package dsl

import (
	"maps"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/expr"
)

// template: its text, with its declaration's default, decoded when written out, else when the
// run has resolved it.
func init() {
	kinds[toolspec.Template.Spec] = stepKind{compile: func(c *compiler, cs *CompiledStep, inPtr string) {
		if in := decodeWritten(cs, TemplateInput, "text"); in != nil {
			cs.Input = in
		}
	}}
}

// TemplateInput decodes a template step's inputs into its declared input. A text that is not a
// string (a number or a list its template resolved to, null) is converted at decode to the text
// {{ }} renders of it (expr.Text), as the step has always taken it: the declared type stays a
// string.
func TemplateInput(inputs map[string]any) (toolspec.TemplateIn, error) {
	if v, ok := inputs["text"]; ok {
		if _, isText := v.(string); !isText {
			inputs = maps.Clone(inputs)
			inputs["text"] = expr.Text(v)
		}
	}
	return toolspec.Template.DecodeFields(inputs, "text")
}
