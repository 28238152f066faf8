package datatools

import (
	"fmt"
	"sort"
	"strings"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/dsl"
	"github.com/weftworks/weft/workflows/expr"
)

// InputError is a problem with a step's resolved inputs; retrying cannot fix it.
type InputError struct {
	Step, Msg string
}

func (e *InputError) Error() string { return fmt.Sprintf("step %q: %s", e.Step, e.Msg) }

// Run executes inline tool step cs on its resolved inputs; env is the workflow's template
// environment (per-item names are added for filter and transform).
func Run(cs *dsl.CompiledStep, inputs map[string]any, env map[string]any) (any, error) {
	if run := tools[cs.Spec]; run != nil {
		return run(cs, inputs, env)
	}
	return nil, &InputError{Step: cs.ID, Msg: fmt.Sprintf("tool %q is not an inline data tool", cs.Tool)}
}

// tools are the data tools' implementations, by declaration.
var tools = map[*toolspec.Spec]func(cs *dsl.CompiledStep, inputs, env map[string]any) (any, error){
	toolspec.Merge.Spec:     func(cs *dsl.CompiledStep, inputs, _ map[string]any) (any, error) { return merge(cs, inputs) },
	toolspec.Filter.Spec:    filter,
	toolspec.Transform.Spec: transform,
	toolspec.Template.Spec: func(cs *dsl.CompiledStep, inputs, _ map[string]any) (any, error) {
		in, err := typed(cs, inputs, dsl.TemplateInput)
		if err != nil {
			return nil, err
		}
		return map[string]any{"text": in.Text, "charCount": len([]rune(in.Text))}, nil
	},
	toolspec.Conditional.Spec: conditional,
}

// typed is the step's typed input: as the compiler decoded it, or decode of its resolved inputs
// (dsl.TypedInput), a mistake in them the step's.
func typed[In any](cs *dsl.CompiledStep, inputs map[string]any, decode func(map[string]any) (In, error)) (In, error) {
	in, err := dsl.TypedInput(cs, inputs, decode)
	if err != nil {
		return in, &InputError{Step: cs.ID, Msg: err.Error() + ": write the values the tool's input schema describes (weft tools " + cs.Tool + ")"}
	}
	return in, nil
}

// Warnings are what a person should know of an inline step's answer although it succeeded: a
// filter that kept none of its items finishes green with an empty list, which later steps (a
// search's context, an llm's prompt) take without a word.
func Warnings(cs *dsl.CompiledStep, inputs map[string]any, out any) []string {
	if cs.Spec != toolspec.Filter.Spec {
		return nil
	}
	items, _ := Items(inputs["array"])
	kept, _ := Items(out)
	if len(items) == 0 || len(kept) > 0 {
		return nil
	}
	var cond any
	if in, ok := cs.Input.(*toolspec.FilterIn); ok && in != nil {
		cond = in.Condition
	}
	return []string{fmt.Sprintf("the filter kept none of its %d items (condition %v): the steps after it get an empty list", len(items), cond)}
}

// Items turns a step input into a list: an array, an object holding results (a step output such
// as {{ merge.output }}), or null (no items).
func Items(v any) ([]any, bool) {
	switch x := v.(type) {
	case nil:
		return nil, true
	case []any:
		return x, true
	case map[string]any:
		if r, ok := x["results"].([]any); ok {
			return r, true
		}
		if x["results"] == nil {
			if _, has := x["results"]; has {
				return nil, true
			}
		}
	}
	return nil, false
}

func list(results []any) map[string]any {
	if results == nil {
		results = []any{}
	}
	return map[string]any{"results": results, "resultCount": len(results)}
}

func merge(cs *dsl.CompiledStep, in map[string]any) (any, error) {
	if vaiSemantics(cs) {
		return vaiMerge(cs, in)
	}
	arrays, ok := in["arrays"].([]any)
	if !ok {
		return nil, &InputError{Step: cs.ID, Msg: fmt.Sprintf("inputs.arrays must be a list of arrays, got %s", describe(in["arrays"]))}
	}
	set, err := toolspec.Merge.DecodeFields(in, "dedup", "dedup_field") // the declaration's defaults
	if err != nil {
		return nil, &InputError{Step: cs.ID, Msg: err.Error()}
	}
	dedup, field := set.Dedup, set.DedupField
	var out []any
	seen := map[string]bool{}
	for i, a := range arrays {
		items, ok := Items(a)
		if !ok {
			return nil, &InputError{Step: cs.ID, Msg: fmt.Sprintf("inputs.arrays[%d] is %s, not an array or a step output with results", i, describe(a))}
		}
		for _, it := range items {
			if dedup || field != "" {
				var key string
				if field != "" {
					v := expr.Get(it, field)
					if v == nil {
						out = append(out, it)
						continue
					}
					key = expr.Text(v)
				} else {
					key = expr.Text(it)
				}
				if seen[key] {
					continue
				}
				seen[key] = true
			}
			out = append(out, it)
		}
	}
	return list(out), nil
}

func itemEnv(env map[string]any) map[string]any {
	out := make(map[string]any, len(env)+2)
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for k, v := range env {
		out[k] = v
	}
	return out
}

func filter(cs *dsl.CompiledStep, in map[string]any, env map[string]any) (any, error) {
	items, ok := Items(in["array"])
	if !ok {
		return nil, &InputError{Step: cs.ID, Msg: fmt.Sprintf("inputs.array is %s, not an array or a step output with results", describe(in["array"]))}
	}
	f, _ := cs.Filter()
	if f.Condition == nil {
		return nil, &InputError{Step: cs.ID, Msg: "inputs.condition is missing"}
	}
	e := itemEnv(env)
	out := []any{}
	for i, it := range items {
		e["item"], e["index"] = it, i
		keep, err := f.Condition.EvalBool(e)
		if err != nil {
			return nil, &InputError{Step: cs.ID, Msg: fmt.Sprintf("condition on item %d: %v", i, err)}
		}
		if keep {
			out = append(out, it)
		}
	}
	return list(out), nil
}

func transform(cs *dsl.CompiledStep, in map[string]any, env map[string]any) (any, error) {
	items, ok := Items(in["array"])
	if !ok {
		return nil, &InputError{Step: cs.ID, Msg: fmt.Sprintf("inputs.array is %s, not an array or a step output with results", describe(in["array"]))}
	}
	set, err := typed(cs, in, dsl.TransformInput)
	if err != nil {
		return nil, err
	}
	fields, mapping := set.Fields, set.Mapping
	newNames := make([]string, 0, len(mapping))
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for k := range mapping {
		newNames = append(newNames, k)
	}
	sort.Strings(newNames)
	t, _ := cs.Transform()
	template := t.Template
	if vaiSemantics(cs) && template == nil {
		return list(vaiTransform(items, set)), nil
	}
	e := itemEnv(env)
	out := make([]any, 0, len(items))
	for i, it := range items {
		if template != nil {
			e["item"], e["index"] = it, i
			v, err := template.Resolve(e)
			if err != nil {
				return nil, &InputError{Step: cs.ID, Msg: fmt.Sprintf("template on item %d: %v", i, err)}
			}
			out = append(out, v)
			continue
		}
		if len(fields) == 0 && mapping == nil {
			out = append(out, it)
			continue
		}
		obj := map[string]any{}
		for _, f := range fields {
			obj[f] = path(it, f)
		}
		for _, n := range newNames {
			obj[n] = path(it, mapping[n])
		}
		out = append(out, obj)
	}
	return list(out), nil
}

// path reads a dotted path (metadata.type, results.0.content) from v.
func path(v any, p string) any {
	p = strings.TrimPrefix(strings.TrimPrefix(p, "item."), "item")
	for _, seg := range strings.Split(p, ".") {
		if seg == "" {
			continue
		}
		if v == nil {
			return nil
		}
		var key any = seg
		if n, ok := atoi(seg); ok {
			key = n
		}
		v = expr.Get(v, key)
	}
	return v
}

func atoi(s string) (int, bool) {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, s != ""
}

func conditional(cs *dsl.CompiledStep, inputs, env map[string]any) (any, error) {
	set, err := typed(cs, inputs, dsl.ConditionalInput)
	if err != nil {
		return nil, err
	}
	c, _ := cs.Conditional()
	if c.Condition == nil {
		return nil, &InputError{Step: cs.ID, Msg: "inputs.condition is missing"}
	}
	ok, err := c.Condition.EvalBool(env)
	if err != nil {
		return nil, &InputError{Step: cs.ID, Msg: fmt.Sprintf("condition: %v", err)}
	}
	ids := func(list []string) []any {
		a := make([]any, len(list))
		for i, id := range list {
			a[i] = id
		}
		return a
	}
	res := map[string]any{"conditionResult": ok}
	if ok {
		res["branchTaken"], res["enabledSteps"], res["skippedSteps"] = "then", ids(set.Then), ids(set.Else)
	} else {
		res["branchTaken"], res["enabledSteps"], res["skippedSteps"] = "else", ids(set.Else), ids(set.Then)
	}
	return res, nil
}

func describe(v any) string {
	if _, ok := v.(map[string]any); ok {
		return "an object without results"
	}
	return expr.TypeName(v)
}
