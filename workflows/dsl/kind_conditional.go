package dsl

import (
	"strconv"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/expr"
)

// conditional: the condition is compiled once; then and else name steps of this workflow.
func init() {
	kinds[toolspec.Conditional.Spec] = stepKind{compile: func(c *compiler, cs *CompiledStep, inPtr string) {
		switch v := cs.Lazy["condition"].(type) {
		case string:
			if v != "" {
				cs.Expr = c.compileExpr(inPtr+"/condition", v, scope{})
			}
		case bool:
			p, _ := expr.Compile(strconv.FormatBool(v))
			cs.Expr = p
		}
		for _, branch := range []string{"then", "else"} {
			ids, _ := cs.Step.Inputs[branch].([]any)
			for i, id := range ids {
				if s, ok := id.(string); ok {
					c.checkStepRef(inPtr+"/"+branch+"/"+strconv.Itoa(i), s, cs.ID, "conditional "+branch)
				}
			}
		}
		delete(cs.Lazy, "condition")
	}}
}
