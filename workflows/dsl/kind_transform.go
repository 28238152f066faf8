package dsl

import (
	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/expr"
)

// transform: the template is rendered per item.
func init() {
	kinds[toolspec.Transform.Spec] = stepKind{compile: func(c *compiler, cs *CompiledStep, inPtr string) {
		if t, ok := cs.Lazy["template"]; ok {
			val, perrs := expr.CompileValue(t)
			for _, pe := range perrs {
				c.errIn(inPtr+"/template"+pe.Path, pe.Offset, pe.Msg, pe.Hint)
			}
			cs.ItemTemplate = val
			c.checkValueRefs(inPtr+"/template", val, cs.ID, itemScope)
		}
	}}
}
