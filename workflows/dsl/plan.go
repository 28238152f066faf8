package dsl

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/internal/english"
	"github.com/weftworks/weft/workflows/expr"
)

// Plan is what a run would do, computed without running anything.
type Plan struct {
	Name     string            `json:"name"`
	Branding map[string]any    `json:"branding,omitempty"`
	Inputs   map[string]any    `json:"inputs"`
	Steps    []PlanStep        `json:"steps"`
	Stages   [][]string        `json:"stages"`
	Output   map[string]string `json:"output,omitempty"`
	Calls    toolspec.Calls    `json:"estimatedCalls"`
	// PerItem: a forEach or loop step makes calls per item, and its items are known only when
	// it runs: Calls counts one item of it.
	PerItem bool `json:"perItem,omitempty"`
}

// PlanStep is one step of a plan.
type PlanStep struct {
	N         int            `json:"n"`
	ID        string         `json:"id"`
	Name      string         `json:"name,omitempty"`
	Tool      string         `json:"tool"`
	Kind      toolspec.Kind  `json:"kind"`
	Stage     int            `json:"stage"`
	After     []string       `json:"after,omitempty"`
	Parallel  []string       `json:"parallelWith,omitempty"`
	Inputs    map[string]any `json:"inputs"`
	Condition string         `json:"condition,omitempty"`
	ForEach   string         `json:"forEach,omitempty"`
	// Items is how many items a forEach or loop step runs, when its items are known before the
	// run (given literally, or read from the run's inputs and defaults); nil otherwise.
	Items *int `json:"items,omitempty"`
	// Calls are the step's calls: for every item when Items is known, for one item otherwise.
	Calls toolspec.Calls `json:"estimatedCalls"`
}

// NewPlan computes the plan for resolved inputs; defaults overrides (db, collection) apply.
func NewPlan(w *Workflow, inputs map[string]any, defaults map[string]any) *Plan {
	env := map[string]any{"inputs": inputs, "defaults": mergeDefaults(w.Def.Defaults, defaults)}
	p := &Plan{Name: w.Def.Name, Inputs: inputs, Branding: w.Def.Branding}
	stage := map[string]int{}
	for _, id := range w.Order {
		cs := w.byID[id]
		s := 0
		for _, d := range cs.Deps {
			s = max(s, stage[d]+1)
		}
		stage[id] = s
		for len(p.Stages) <= s {
			p.Stages = append(p.Stages, nil)
		}
		p.Stages[s] = append(p.Stages[s], id)
	}
	n := 0
	for si, ids := range p.Stages {
		for _, id := range ids {
			cs := w.byID[id]
			n++
			ps := PlanStep{N: n, ID: id, Name: cs.Name, Tool: cs.Tool, Kind: cs.Spec.Kind, Stage: si + 1, After: cs.Deps,
				Condition: cs.Step.Condition, ForEach: cs.Step.ForEach, Inputs: partialResolve(cs.Step.Inputs, env, cs.Spec)}
			for _, o := range ids {
				if o != id {
					ps.Parallel = append(ps.Parallel, o)
				}
			}
			lit := map[string]any{}
			for k, v := range ps.Inputs {
				if s, ok := v.(string); !ok || !expr.HasTemplate(s) {
					lit[k] = v
				}
			}
			ps.Calls = cs.Spec.EstimateCalls(lit)
			perItem := cs.ForEach != nil
			items := func() (int, bool) { return forEachItems(cs, env) }
			if k := kinds[cs.Spec]; k.plan != nil {
				// a kind that runs a step per item of its own (a loop) plans that step's calls
				if calls, n, known, ok := k.plan(cs, ps.Inputs); ok {
					ps.Calls, perItem = calls, true
					items = func() (int, bool) { return n, known }
				}
			}
			if perItem {
				if n, ok := items(); ok {
					ps.Items = &n
					ps.Calls = ps.Calls.Times(planRequests(cs, n))
				} else if !ps.Calls.IsZero() {
					p.PerItem = true
				}
			}
			p.Calls = p.Calls.Add(ps.Calls)
			p.Steps = append(p.Steps, ps)
		}
	}
	p.Output = outputShape(w)
	return p
}

// forEachItems is how many items a forEach step runs, when the plan knows them: its expression
// reads only the run's inputs and defaults.
func forEachItems(cs *CompiledStep, env map[string]any) (int, bool) {
	for _, r := range cs.ForEach.Refs() {
		if r.Root != "inputs" && r.Root != "defaults" {
			return 0, false
		}
	}
	v, err := cs.ForEach.Eval(env)
	if err != nil {
		return 0, false
	}
	items, ok := v.([]any)
	return len(items), ok
}

// planRequests is how many times a forEach step of n items makes its calls: once per item, or,
// over a tool that batches (Spec.Batch, batch not false), once per batch of up to MaxItems.
func planRequests(cs *CompiledStep, n int) int {
	if cs.Nested() == nil && cs.Spec.Batch != nil && (cs.Step.Batch == nil || *cs.Step.Batch) && cs.Spec.Batch.MaxItems > 0 {
		return (n + cs.Spec.Batch.MaxItems - 1) / cs.Spec.Batch.MaxItems
	}
	return n
}

func mergeDefaults(file, over map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range file {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// partialResolve resolves input values whose templates read only inputs and defaults; the others
// are shown as written.
func partialResolve(inputs map[string]any, env map[string]any, spec *toolspec.Spec) map[string]any {
	out := map[string]any{}
	for k, v := range inputs {
		if spec.IsLazy(k) {
			out[k] = v
			continue
		}
		val, errs := expr.CompileValue(v)
		if len(errs) > 0 {
			out[k] = v
			continue
		}
		known := true
		for _, r := range val.Refs() {
			if r.Root != "inputs" && r.Root != "defaults" {
				known = false
			}
		}
		if !known {
			out[k] = v
			continue
		}
		if r, err := val.Resolve(env); err == nil {
			out[k] = r
		} else {
			out[k] = v
		}
	}
	return out
}

func outputShape(w *Workflow) map[string]string {
	obj, ok := w.Def.Output.(map[string]any)
	if !ok {
		if w.Def.Output == nil {
			return nil
		}
		obj = map[string]any{"(output)": w.Def.Output}
	}
	out := map[string]string{}
	for k, v := range obj {
		out[k] = valueType(w, v)
	}
	return out
}

func valueType(w *Workflow, v any) string {
	s, ok := v.(string)
	if !ok {
		if _, isMap := v.(map[string]any); isMap {
			return "object"
		}
		return jsonType(v)
	}
	if !expr.HasTemplate(s) {
		return "string"
	}
	t, err := expr.ParseTemplate(s)
	if err != nil || !t.IsSingle() {
		return "string"
	}
	p := t.Programs()[0]
	refs := p.Refs()
	if len(refs) != 1 || p.Source() != refs[0].String() {
		return "any"
	}
	r := refs[0]
	switch r.Root {
	case "inputs":
		if len(r.Path) == 1 {
			if in, ok := w.Def.Inputs[r.Path[0]]; ok {
				return in.Type
			}
		}
	case "defaults":
		return "string"
	default:
		if cs, ok := w.byID[r.Root]; ok && len(r.Path) > 0 && r.Path[0] == "output" && cs.Spec != nil {
			if t := describeType(cs, r.Path[1:]); t != "" {
				return t + " (from " + r.Root + ")"
			}
			return "any (from " + r.Root + ")"
		}
	}
	return "any"
}

func describeType(cs *CompiledStep, path []string) string {
	t := outputType(cs, path)
	if t == "array" {
		if it := outputType(cs, append(append([]string{}, path...), "0")); it != "" {
			return "array<" + it + ">"
		}
	}
	return t
}

// Text renders the plan for people.
func (p *Plan) Text() string {
	var b strings.Builder
	title := "weft plan: " + p.Name
	if icon, _ := p.Branding["icon"].(string); icon != "" {
		title = icon + " " + title
	}
	fmt.Fprintf(&b, "%s\n%s\n\n", title, strings.Repeat("═", len([]rune(title))))
	if color, _ := p.Branding["color"].(string); color != "" {
		fmt.Fprintf(&b, "Colour: %s\n\n", color)
	}
	if len(p.Inputs) > 0 {
		b.WriteString("Inputs:\n")
		for _, k := range sortedKeys(p.Inputs) {
			fmt.Fprintf(&b, "  %s: %s\n", k, compactJSON(p.Inputs[k]))
		}
		b.WriteString("\n")
	}
	b.WriteString("Execution plan:\n")
	width := 0
	for _, s := range p.Steps {
		width = max(width, len(s.ID))
	}
	num := map[string]int{}
	for _, s := range p.Steps {
		num[s.ID] = s.N
	}
	for si, ids := range p.Stages {
		for _, id := range ids {
			var s PlanStep
			for _, x := range p.Steps {
				if x.ID == id {
					s = x
				}
			}
			fmt.Fprintf(&b, "  %2d. %-*s → %s(%s)", s.N, width, s.ID, s.Tool, argList(s.Inputs))
			if s.Kind == toolspec.KindInline {
				b.WriteString("  [inline]")
			}
			b.WriteString("\n")
			var notes []string
			if s.Name != "" {
				notes = append(notes, s.Name)
			}
			switch {
			case s.ForEach != "" && s.Items != nil:
				notes = append(notes, fmt.Sprintf("for each of the %s of %s", english.Count(*s.Items, "item"), s.ForEach))
			case s.ForEach != "":
				notes = append(notes, "for each item of "+s.ForEach)
			case s.Items != nil:
				notes = append(notes, "for each of the "+english.Count(*s.Items, "item"))
			}
			if s.Condition != "" {
				notes = append(notes, "only if "+s.Condition)
			}
			if len(s.After) > 0 {
				notes = append(notes, "after "+strings.Join(s.After, ", "))
			}
			for _, n := range notes {
				fmt.Fprintf(&b, "      %s %s\n", strings.Repeat(" ", width), n)
			}
		}
		if len(ids) > 1 {
			nums := make([]string, len(ids))
			for i, id := range ids {
				nums[i] = strconv.Itoa(num[id])
			}
			fmt.Fprintf(&b, "      (%s can run in parallel: stage %d)\n", joinAnd(nums), si+1)
		}
	}
	if len(p.Output) > 0 {
		b.WriteString("\nOutput shape:\n")
		for _, k := range sortedKeys(p.Output) {
			fmt.Fprintf(&b, "  %s: %s\n", k, p.Output[k])
		}
	}
	b.WriteString("\nEstimated external calls")
	if p.PerItem {
		b.WriteString(" (a forEach or loop whose items are known only when it runs is counted for one item)")
	}
	b.WriteString(":\n")
	c := p.Calls
	if c.IsZero() {
		b.WriteString("  none\n")
	} else {
		lines := []struct {
			n    int
			what string
		}{{c.Embed, "embedding calls"}, {c.VectorSearch, "vector searches"}, {c.Rerank, "rerank calls"}, {c.LLM, "LLM calls"},
			{c.DatabaseRead, "database reads"}, {c.DatabaseWrite, "database writes"}, {c.HTTP, "HTTP requests"}}
		for _, l := range lines {
			if l.n > 0 {
				fmt.Fprintf(&b, "  %-16s %d\n", l.what+":", l.n)
			}
		}
	}
	return b.String()
}

func joinAnd(ss []string) string {
	if len(ss) <= 1 {
		return strings.Join(ss, "")
	}
	return strings.Join(ss[:len(ss)-1], ", ") + " and " + ss[len(ss)-1]
}

func argList(in map[string]any) string {
	keys := sortedKeys(in)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v := compactJSON(in[k])
		if s, ok := in[k].(string); ok && !strings.Contains(s, "{{") {
			v = strconv.Quote(s)
		} else if ok {
			v = s
		}
		if len(v) > 60 {
			v = v[:57] + "..."
		}
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func compactJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // plans are read by people: <label>, not \u003clabel\u003e
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
