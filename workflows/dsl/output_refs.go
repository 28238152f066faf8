package dsl

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/expr"
)

// outputRef is a reference into a step's output ({{ found.output.results }}) at ptr in the file.
type outputRef struct {
	ptr string
	ref expr.Ref
}

// stepOutputSchema is the declared schema of a step's output: its tool's (Spec.OutputSchema), or,
// for a step with forEach, {results: [the tool's output per item], count}, as the interpreter
// gives it.
func stepOutputSchema(cs *CompiledStep) any {
	var sch any = cs.Spec.OutputSchema()
	if cs.Step.ForEach != "" {
		sch = map[string]any{"type": "object", "properties": map[string]any{
			"results": map[string]any{"type": "array", "items": sch}, "count": map[string]any{"type": "integer"}}}
	}
	return sch
}

// checkOutputRefs checks every reference into a step's output against the output its tool
// declares (activities/toolspec: derived from the tool's Go output type): a field the output does
// not have is null when the run reads it, and the step that reads it then fails with the tool's
// schema message, or goes on with nothing. In weft's dialect that is an error with a
// did-you-mean; in vai's, and in a Flow file (a node's {{verdict.result}}), a warning: weft reads
// it as null, as it runs it. An accepted run is
// not checked again: the output schemas are this binary's, its verdict is in its history.
func (c *compiler) checkOutputRefs() {
	if c.accepted {
		return
	}
	for _, or := range c.outputRefs {
		cs, ok := c.w.byID[or.ref.Root]
		if !ok || cs.Spec == nil {
			continue
		}
		if c.dialect == DialectVai && cs.Spec == toolspec.Chunk.Spec {
			continue // vai's chunk fields have their own warnings (vaiChunkReads)
		}
		msg, hint := outputFieldProblem(cs, or.ref)
		if msg == "" {
			continue
		}
		if c.dialect == DialectVai || c.opts.flow {
			c.warnAt(or.ptr, msg+": it resolves to null", hint)
			continue
		}
		c.errAt(or.ptr, msg, hint)
	}
}

// outputFieldProblem walks ref's path (after "output") through the step's declared output and
// says, when a segment names nothing there, what is wrong and what was likely meant. A part of
// the output whose shape is not declared (any value, a map, an object that may hold undeclared
// fields) ends the walk: anything may be there.
func outputFieldProblem(cs *CompiledStep, ref expr.Ref) (msg, hint string) {
	sch := stepOutputSchema(cs)
	path := ref.Path[1:]
	written := func(n int) string { return ref.Root + ".output" + pathText(path[:n]) }
	whole := written(len(path))
	for i, seg := range path {
		m, ok := sch.(map[string]any)
		if !ok {
			return "", ""
		}
		switch schemaType(m) {
		case "object":
			props, _ := m["properties"].(map[string]any)
			if props == nil || m["additionalProperties"] != nil || m["patternProperties"] != nil {
				return "", ""
			}
			next, ok := props[seg]
			if ok {
				sch = next
				continue
			}
			fields := sortedKeys(props)
			msg = fmt.Sprintf("{{ %s }}: %s has no field %q", whole, outputName(cs, written(i)), seg)
			if m := suggest(seg, fields); m != "" {
				return msg, fmt.Sprintf("did you mean %s?", written(i)+"."+m)
			}
			if i == 0 && cs.Step.ForEach != "" {
				if item, _ := cs.Spec.OutputSchema().(map[string]any); item != nil {
					if ip, _ := item["properties"].(map[string]any); ip != nil {
						if _, per := ip[seg]; per {
							return msg, fmt.Sprintf("%s has forEach: its output is {results, count}, one result per item; read %s.output.results[0].%s, or each item's with forEach over %s.output.results",
								ref.Root, ref.Root, seg, ref.Root)
						}
					}
				}
			}
			return msg, "its fields: " + strings.Join(fields, ", ")
		case "array":
			if seg == "length" {
				sch = map[string]any{"type": "integer"}
				continue
			}
			if _, err := strconv.Atoi(seg); err == nil {
				sch = m["items"]
				continue
			}
			return fmt.Sprintf("{{ %s }}: %s is a list, which has no field %q", whole, written(i), seg),
				fmt.Sprintf("index it: %s[0].%s, or write %s.length", written(i), seg, written(i))
		case "string":
			if seg == "length" {
				sch = map[string]any{"type": "integer"}
				continue
			}
			return fmt.Sprintf("{{ %s }}: %s is a string, which has no field %q", whole, written(i), seg), "a string has only .length"
		case "integer", "number", "boolean":
			return fmt.Sprintf("{{ %s }}: %s is %s, which has no field %q", whole, written(i), article([]string{schemaType(m)}), seg), ""
		default:
			return "", ""
		}
	}
	return "", ""
}

// outputName names where a field was looked for: "search's output" for the output itself, the
// path otherwise.
func outputName(cs *CompiledStep, written string) string {
	if written == cs.ID+".output" {
		if cs.Step.ForEach != "" {
			return fmt.Sprintf("the output of %s (forEach: {results, count})", cs.ID)
		}
		return fmt.Sprintf("%s's output (%s)", cs.ID, cs.Spec.Name)
	}
	return written
}

// pathText writes path segments as a template does: .name, [index].
func pathText(path []string) string {
	var b strings.Builder
	for _, seg := range path {
		if _, err := strconv.Atoi(seg); err == nil {
			b.WriteString("[" + seg + "]")
		} else {
			b.WriteString("." + seg)
		}
	}
	return b.String()
}

// schemaType is a schema's type, the non-null one of a nullable type; "" when it has none.
func schemaType(m map[string]any) string {
	switch t := m["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				return s
			}
		}
	}
	return ""
}

// checkInputTypes checks each step input written as one reference ("limit": "{{ found.output.results }}")
// whose type is declared (a declared input of the file; a field of a step's declared output)
// against the type the tool's input takes: the run would refuse the resolved value with the
// tool's schema message, so validate refuses it first. A number where an integer is taken is
// left to the run (it may be whole); an input that takes any value is not checked.
func (c *compiler) checkInputTypes() {
	if c.accepted {
		return
	}
	for _, cs := range c.w.Steps {
		if cs.Spec == nil || c.isBad(cs.Pointer+"/inputs") {
			continue
		}
		props := inputProperties(cs.Spec)
		if props == nil {
			continue
		}
		for _, k := range sortedKeys(cs.Step.Inputs) {
			s, ok := cs.Step.Inputs[k].(string)
			if !ok || cs.Spec.IsLazy(k) {
				continue
			}
			prop, _ := props[k].(map[string]any)
			takes := schemaTypes(prop)
			if len(takes) == 0 {
				continue
			}
			got, what := c.singleRefType(s)
			if got == "" || typeTaken(got, takes) {
				continue
			}
			c.errAt(cs.Pointer+"/inputs/"+escapePointer(k),
				fmt.Sprintf("%s is %s, and %s's %s takes %s", what, article([]string{got}), cs.Spec.Name, k, article(takes)),
				"pass a value of that type, or read the field of it that is one")
		}
	}
}

// singleRefType is the declared JSON type of a template that is one reference and nothing else,
// and the reference as written; "" when it is anything else or its type is not declared.
func (c *compiler) singleRefType(s string) (typ, what string) {
	if !expr.HasTemplate(s) {
		return "", ""
	}
	t, err := expr.ParseTemplate(strings.TrimSpace(s))
	if err != nil || !t.IsSingle() {
		return "", ""
	}
	p := t.Programs()[0]
	refs := p.Refs()
	if len(refs) != 1 || p.Source() != refs[0].String() || !p.IsPath() {
		return "", ""
	}
	r := refs[0]
	what = "{{ " + r.Root + pathText(r.Path) + " }}"
	switch r.Root {
	case "inputs":
		if len(r.Path) == 1 {
			if in, ok := c.def.Inputs[r.Path[0]]; ok {
				return in.Type, what
			}
		}
		return "", ""
	}
	cs, ok := c.w.byID[r.Root]
	if !ok || cs.Spec == nil || len(r.Path) < 1 || r.Path[0] != "output" {
		return "", ""
	}
	if msg, _ := outputFieldProblem(cs, r); msg != "" && len(r.Path) > 1 {
		return "", "" // reported as an unknown field
	}
	return outputType(cs, r.Path[1:]), what
}

// schemaTypes are the JSON types a schema takes (its anyOf/oneOf branches' included); none when it
// takes any.
func schemaTypes(m map[string]any) []string {
	if m == nil {
		return nil
	}
	var out []string
	switch t := m["type"].(type) {
	case string:
		out = append(out, t)
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		branches, _ := m[k].([]any)
		for _, b := range branches {
			bt := schemaTypes(asMap(b))
			if len(bt) == 0 {
				return nil // a branch takes any value
			}
			out = append(out, bt...)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

// typeTaken says whether a value of JSON type got fits one of takes; a number may be whole, and
// null (a skipped step's output) is for the run to judge.
func typeTaken(got string, takes []string) bool {
	for _, t := range takes {
		if t == got || (t == "number" && got == "integer") || (t == "integer" && got == "number") {
			return true
		}
	}
	return got == "null"
}

// inputProps memoises each tool's decoded input properties for the registry's generation: every
// compile of every step reads them.
var inputProps struct {
	sync.Mutex
	generation uint64
	m          map[*toolspec.Spec]map[string]any
}

// inputProperties are the properties of spec's input schema, decoded (read-only).
func inputProperties(spec *toolspec.Spec) map[string]any {
	inputProps.Lock()
	defer inputProps.Unlock()
	if g := toolspec.Generation(); inputProps.m == nil || inputProps.generation != g {
		inputProps.m, inputProps.generation = map[*toolspec.Spec]map[string]any{}, g
	}
	if props, ok := inputProps.m[spec]; ok {
		return props
	}
	var in map[string]any
	_ = json.Unmarshal([]byte(spec.InputJSON()), &in)
	props, _ := in["properties"].(map[string]any)
	inputProps.m[spec] = props
	return props
}
