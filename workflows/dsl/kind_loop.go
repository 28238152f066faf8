package dsl

import (
	"fmt"
	"strings"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/expr"
)

// loop: the nested step is compiled as a step of its own, with the item's name in scope; plans
// count its calls per item.
// Its settings, with their declaration's defaults, are decoded when written out, else when the
// run has resolved them.
func init() {
	kinds[toolspec.Loop.Spec] = stepKind{plan: planLoop, compile: func(c *compiler, cs *CompiledStep, inPtr string) {
		c.compileNested(cs, inPtr)
		if in := decodeWritten(cs, LoopInput, loopSettings...); in != nil {
			cs.Input = in
		}
	}}
}

// NestedStep is a loop's compiled value (CompiledStep.Compiled): the step it runs per item,
// with As naming the item in its inputs.
type NestedStep struct {
	Tool   string
	Spec   *toolspec.Spec
	As     string
	Inputs *expr.Value
}

// Nested is the step loop step cs runs per item, as compiled; nil for another step, or a loop
// whose step did not compile.
func (cs *CompiledStep) Nested() *NestedStep {
	ns, _ := cs.Compiled.(*NestedStep)
	return ns
}

func (ns *NestedStep) refs() []expr.Ref { return valueRefs(ns.Inputs) }

func (ns *NestedStep) eachRefs(fn func(ptr string, refs []expr.Ref)) {
	eachValueRefs("/step/inputs", ns.Inputs, fn)
}

// loopSettings are the inputs of a loop step that say how it runs; its items are read as the
// run resolved them, its step compiled (CompiledStep.Nested).
var loopSettings = []string{"maxIterations", "concurrency"}

// LoopInput decodes a loop step's settings with the declaration's defaults.
func LoopInput(inputs map[string]any) (toolspec.LoopIn, error) {
	return toolspec.Loop.DecodeFields(inputs, loopSettings...)
}

// planLoop: a loop makes its nested step's calls once per item; the plan knows how many items
// when the loop's items input was resolved (partialResolve) to a list. ok is false without a
// nested step.
func planLoop(cs *CompiledStep, inputs map[string]any) (calls toolspec.Calls, items int, known, ok bool) {
	ns := cs.Nested()
	if ns == nil {
		return toolspec.Calls{}, 0, false, false
	}
	list, known := inputs["items"].([]any)
	return ns.Spec.EstimateCalls(map[string]any{}), len(list), known, true
}

func (c *compiler) compileNested(cs *CompiledStep, inPtr string) {
	step, ok := cs.Lazy["step"].(map[string]any)
	if !ok {
		return
	}
	ns := &NestedStep{}
	ns.As, _ = cs.Step.Inputs["as"].(string)
	if ns.As == "" {
		ns.As = "item"
	}
	ns.Tool, _ = step["tool"].(string)
	sptr := inPtr + "/step"
	spec, ok := toolspec.Lookup(ns.Tool)
	if !ok {
		if ns.Tool != "" {
			c.errAt(sptr+"/tool", fmt.Sprintf("unknown tool %q", ns.Tool), didYouMean(ns.Tool, toolspec.Names()))
		}
		return
	}
	if spec.Kind != toolspec.KindActivity {
		c.errAt(sptr+"/tool", fmt.Sprintf("a loop cannot run the %s tool per item", ns.Tool), "a loop runs an activity tool per item; use forEach on a step for data tools, review or nested loops")
		return
	}
	ns.Spec = spec
	if cs.Step.Batch != nil && spec.Batch == nil {
		c.warnAt(strings.TrimSuffix(inPtr, "/inputs")+"/batch", fmt.Sprintf("%s does not batch: the loop runs one call per item", ns.Tool), "remove batch")
	}
	inputs, _ := step["inputs"].(map[string]any)
	if inputs == nil {
		inputs = map[string]any{}
	}
	inputs = c.toolInputs(spec, inputs, sptr+"/inputs", ns.Tool) // as on a step of its own
	if _, had := step["inputs"]; had {
		step["inputs"] = inputs
	}
	val, perrs := expr.CompileValue(inputs)
	for _, pe := range perrs {
		c.errIn(sptr+"/inputs"+pe.Path, pe.Offset, pe.Msg, pe.Hint)
	}
	ns.Inputs = val
	c.checkValueRefs(sptr+"/inputs", val, cs.ID, scope{names: []string{ns.As, "index"}})
	lit, holes := val.Literal()
	if err := spec.ValidateInputs(lit); err != nil && !c.accepted {
		base := sptr + "/inputs"
		c.diags = append(c.diags, schemaDiags(c.src, err, base, func(p string) bool {
			for _, h := range holes {
				if p == base+h || strings.HasPrefix(p, base+h+"/") {
					return true
				}
			}
			return false
		}, SeverityError, nil)...)
	}
	cs.Compiled = ns
}
