package dsl

import (
	"strconv"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/expr"
)

// conditional: the condition is compiled once; then and else, with their declaration's
// defaults, name steps of this workflow (Branches).
func init() {
	kinds[toolspec.Conditional.Spec] = stepKind{compile: func(c *compiler, cs *CompiledStep, inPtr string) {
		defer delete(cs.Lazy, "condition")
		in := decodeWritten(cs, ConditionalInput, "then", "else")
		if in == nil { // then or else templated: the condition still compiles
			cond, _ := toolspec.Conditional.DecodeFields(cs.Step.Inputs, "condition")
			in = &cond
		} else {
			cs.Input = in
		}
		switch v := in.Condition.(type) {
		case string:
			if v != "" {
				cs.Compiled = ConditionalCompiled{Condition: c.compileExpr(inPtr+"/condition", v, scope{})}
			}
		case bool:
			p, _ := expr.Compile(strconv.FormatBool(v))
			cs.Compiled = ConditionalCompiled{Condition: p}
		}
		for _, b := range []struct {
			name string
			ids  []string
		}{{"then", in.Then}, {"else", in.Else}} {
			branch := b.name
			for i, id := range b.ids {
				c.checkStepRef(inPtr+"/"+branch+"/"+strconv.Itoa(i), id, cs.ID, "conditional "+branch)
			}
		}
	}}
}

// ConditionalCompiled is a conditional's compiled value (CompiledStep.Compiled): its condition,
// evaluated once against the workflow's values; nil when it did not compile. (Held by value, as
// FilterCompiled.)
type ConditionalCompiled struct {
	Condition *expr.Program
}

// Conditional is conditional step cs's compiled value; ok false for another step, or a
// conditional whose condition is not written.
func (cs *CompiledStep) Conditional() (c ConditionalCompiled, ok bool) {
	c, ok = cs.Compiled.(ConditionalCompiled)
	return c, ok
}

func (cc ConditionalCompiled) refs() []expr.Ref { return programRefs(cc.Condition) }

func (cc ConditionalCompiled) eachRefs(fn func(ptr string, refs []expr.Ref)) {
	if cc.Condition != nil {
		fn("/condition", cc.Condition.Refs())
	}
}

// ConditionalInput decodes a conditional step's inputs (its condition as written: the step
// evaluates it) into its declared input.
func ConditionalInput(inputs map[string]any) (toolspec.ConditionalIn, error) {
	return toolspec.Conditional.DecodeFields(inputs, "condition", "then", "else")
}

// Branches are the steps a conditional step enables when its condition holds (then) and when
// it does not (else), as its kind decoded them; none for another step.
func (cs *CompiledStep) Branches() (then, els []string) {
	in, ok := cs.Input.(*toolspec.ConditionalIn)
	if !ok || in == nil {
		return nil, nil
	}
	return in.Then, in.Else
}
