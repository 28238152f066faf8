package dsl

import "github.com/weftworks/weft/activities/toolspec"

// filter: the condition is an expression evaluated per item.
func init() {
	kinds[toolspec.Filter.Spec] = stepKind{compile: func(c *compiler, cs *CompiledStep, inPtr string) {
		if s, ok := cs.Lazy["condition"].(string); ok && s != "" {
			cs.Expr = c.compileExpr(inPtr+"/condition", s, itemScope)
		}
	}}
}
