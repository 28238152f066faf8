package workflows

import (
	"errors"
	"fmt"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/datatools"
	"github.com/weftworks/weft/workflows/dsl"
	"github.com/weftworks/weft/workflows/expr"
)

// Evaluate evaluates the jobs of an ActivityEvaluate request against env, whose stored values
// the activity has read, exactly as the interpreter evaluates them in workflow code (same
// engine, same messages). It does no I/O and calls no workflow API: the worker runs it inside
// the evaluate activity (it implements activities.Evaluator).
func Evaluate(jobs []toolspec.EvalJob, env map[string]any) ([]any, error) {
	out := make([]any, len(jobs))
	for i, j := range jobs {
		v, err := evaluateJob(j, env)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func evaluateJob(j toolspec.EvalJob, env map[string]any) (any, error) {
	switch j.Kind {
	case toolspec.EvalTemplate:
		t, err := expr.ParseTemplate(j.Source)
		if err != nil {
			return nil, err
		}
		return t.Render(env)
	case toolspec.EvalBool, toolspec.EvalItems:
		p, err := expr.Compile(j.Source)
		if err != nil {
			return nil, err
		}
		if j.Kind == toolspec.EvalBool {
			return p.EvalBool(env)
		}
		v, err := p.Eval(env)
		if err != nil {
			return nil, err
		}
		if items, ok := datatools.Items(v); ok {
			return items, nil // the list itself, so that its items can be stored one by one
		}
		return v, nil
	case toolspec.EvalInline:
		if j.Step == nil {
			return nil, errors.New("internal: an inline step evaluation without its step")
		}
		return runInline(j.Step, env)
	}
	return nil, fmt.Errorf("internal: unknown evaluation %q", j.Kind)
}

// inlineJob is the evaluation of inline data step cs (as the activity receives it).
func inlineJob(cs *dsl.CompiledStep) toolspec.EvalJob {
	s := &toolspec.EvalStep{ID: cs.ID, Tool: cs.Tool, Inputs: valueSource(cs.InputValue), Lazy: cs.Lazy}
	if p := inlineCondition(cs); p != nil {
		s.Expr = p.Source()
	}
	s.Then, _ = cs.Step.Inputs["then"].([]any)
	s.Else, _ = cs.Step.Inputs["else"].([]any)
	return toolspec.EvalJob{Kind: toolspec.EvalInline, Step: s}
}

// inlineCondition is inline data step cs's condition as compiled (a filter's or a
// conditional's); nil for another step.
func inlineCondition(cs *dsl.CompiledStep) *expr.Program {
	if f, ok := cs.Filter(); ok {
		return f.Condition
	}
	if c, ok := cs.Conditional(); ok {
		return c.Condition
	}
	return nil
}

// runInline rebuilds the compiled inline step from its source form and runs it the way execOnce
// does: inputs resolved (lazy ones added as written), then the data tool.
func runInline(s *toolspec.EvalStep, env map[string]any) (any, error) {
	spec, ok := toolspec.Lookup(s.Tool)
	if !ok || spec.Kind != toolspec.KindInline {
		return nil, fmt.Errorf("internal: %q is not an inline data tool", s.Tool)
	}
	cs := &dsl.CompiledStep{Step: &dsl.Step{ID: s.ID, Tool: s.Tool, Inputs: map[string]any{}}, Spec: spec, Lazy: s.Lazy}
	if s.Then != nil {
		cs.Step.Inputs["then"] = s.Then
	}
	if s.Else != nil {
		cs.Step.Inputs["else"] = s.Else
	}
	if cs.Lazy == nil {
		cs.Lazy = map[string]any{}
	}
	val, errs := expr.CompileValue(s.Inputs)
	if len(errs) > 0 {
		return nil, fmt.Errorf("inputs%s: %v", errs[0].Path, errs[0].Error)
	}
	if s.Expr != "" {
		p, err := expr.Compile(s.Expr)
		if err != nil {
			return nil, fmt.Errorf("condition: %w", err)
		}
		switch spec {
		case toolspec.Filter.Spec:
			cs.Compiled = dsl.FilterCompiled{Condition: p}
		case toolspec.Conditional.Spec:
			cs.Compiled = dsl.ConditionalCompiled{Condition: p}
		}
	}
	if t, ok := cs.Lazy["template"]; ok && s.Tool == toolspec.Transform.Name {
		v, errs := expr.CompileValue(t)
		if len(errs) > 0 {
			return nil, fmt.Errorf("template%s: %v", errs[0].Path, errs[0].Error)
		}
		cs.Compiled = dsl.TransformCompiled{Template: v}
	}
	resolved, err := val.Resolve(env)
	if err != nil {
		return nil, fmt.Errorf("inputs: %v", err)
	}
	inputs, _ := resolved.(map[string]any)
	if inputs == nil {
		inputs = map[string]any{}
	}
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for k, v := range cs.Lazy {
		if _, set := inputs[k]; !set {
			inputs[k] = v
		}
	}
	out, err := datatools.Run(cs, inputs, env)
	if err != nil {
		return nil, errors.New(inlineErrorText(err))
	}
	return out, nil
}

// valueSource is a compiled value as written: its literal parts with each template's text in
// place (CompileValue of it compiles the same value again).
func valueSource(v *expr.Value) any {
	if v == nil {
		return nil
	}
	out, _ := v.ResolveWith(func(_ string, t *expr.Template) (any, error) { return t.Source(), nil })
	return out
}
