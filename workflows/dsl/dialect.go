package dsl

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/expr"
)

// Dialect is the format a workflow file is written in: weft's own, checked strictly, or vai's,
// read as leniently as vai reads it.
type Dialect string

const (
	// DialectWeft is weft's format: a field a tool does not know is an error, a path segment
	// is a name or an [index].
	DialectWeft Dialect = "weft"
	// DialectVai is vai's: numeric path segments (results.0.score) are indexes, and input
	// fields a tool does not know are warnings (vai ignores them; so does weft), with a
	// did-you-mean.
	DialectVai Dialect = "vai"
)

// DetectDialect says in which dialect a decoded workflow file is written, and why. file is the
// file's name. In order:
//   - a "$schema" naming weft or vai decides;
//   - a file is vai's when it uses what only vai files use: branding or formatters, vai's names
//     for a tool's inputs (chunk_size), a duration in milliseconds (a number), or a numeric path
//     segment in a template or condition;
//   - a file is weft's when something marks it so: its name ends in .weft.json (weft init writes
//     that), or a duration is written as text ("30s", which vai files never do); a definition
//     built in Go (LoadWeft) is weft's here too;
//   - otherwise a file that gives a tool (a loop's nested step included) a field that vai's tool
//     of that name takes and weft's does not (vaiFields: http responseType, rerank topK) is vai's;
//   - anything else is weft's, strictly checked.
//
// Once a file is vai's, every input field its tools do not take is a warning, typos included; in
// a file nothing marks as vai's a field that is neither weft's nor vai's stays an error (weft
// cannot tell a vai file with a typo from a weft file with one; a vai $schema says which).
func DetectDialect(file string, root any) (Dialect, string) {
	return detectDialect(file, root, false)
}

func detectDialect(file string, root any, built bool) (Dialect, string) {
	m, ok := root.(map[string]any)
	if !ok {
		return DialectWeft, ""
	}
	if s, ok := m["$schema"].(string); ok {
		switch ls := strings.ToLower(s); {
		case strings.Contains(ls, "weft"):
			return DialectWeft, "$schema names weft"
		case strings.Contains(ls, "vai") || strings.Contains(ls, "voyage"):
			return DialectVai, "$schema names vai"
		}
	}
	for _, k := range []string{"branding", "formatters"} {
		if _, ok := m[k]; ok {
			return DialectVai, "the file has " + k
		}
	}
	steps, _ := m["steps"].([]any)
	for i, s := range steps {
		step, ok := s.(map[string]any)
		if !ok {
			continue
		}
		if _, ok := step["timeout"].(float64); ok {
			return DialectVai, fmt.Sprintf("steps[%d].timeout is in milliseconds", i)
		}
		if r, ok := step["retry"].(map[string]any); ok {
			for _, k := range []string{"initialInterval", "maxInterval"} {
				if _, ok := r[k].(float64); ok {
					return DialectVai, fmt.Sprintf("steps[%d].retry.%s is in milliseconds", i, k)
				}
			}
		}
		if where, k := aliasInStep(step); k != "" {
			return DialectVai, fmt.Sprintf("steps[%d]%s uses vai's name %s", i, where, k)
		}
	}
	if indexSegments(root, false) {
		return DialectVai, "a path has a numeric segment (results.0.score)"
	}
	if built {
		return DialectWeft, "the definition was built in Go"
	}
	if strings.HasSuffix(strings.ToLower(file), ".weft.json") {
		return DialectWeft, "the file name ends in .weft.json"
	}
	for i, s := range steps {
		step, _ := s.(map[string]any)
		if _, ok := step["timeout"].(string); ok {
			return DialectWeft, fmt.Sprintf("steps[%d].timeout is written as text", i)
		}
		if r, ok := step["retry"].(map[string]any); ok {
			for _, k := range []string{"initialInterval", "maxInterval"} {
				if _, ok := r[k].(string); ok {
					return DialectWeft, fmt.Sprintf("steps[%d].retry.%s is written as text", i, k)
				}
			}
		}
	}
	for i, s := range steps {
		step, _ := s.(map[string]any)
		if where, k, tool := vaiFieldInStep(step); k != "" {
			return DialectVai, fmt.Sprintf("steps[%d]%s.%s is a field of vai's %s tool", i, where, k, tool)
		}
	}
	return DialectWeft, ""
}

// aliasInStep finds the first of vai's names for a tool's inputs (by name) that a step, or a
// loop's nested step, uses: where is ".inputs" or ".inputs.step.inputs".
func aliasInStep(step map[string]any) (where, alias string) {
	find := func(m map[string]any) string {
		tool, _ := m["tool"].(string)
		inputs, _ := m["inputs"].(map[string]any)
		if spec, ok := toolspec.Lookup(tool); ok {
			for _, k := range sortedKeys(inputs) { // the first alias by name: the same reason every time
				if _, alias := spec.Aliases[k]; alias {
					return k
				}
			}
		}
		return ""
	}
	if k := find(step); k != "" {
		return ".inputs", k
	}
	if t, _ := step["tool"].(string); t == toolspec.Loop.Name {
		inputs, _ := step["inputs"].(map[string]any)
		nested, _ := inputs["step"].(map[string]any)
		if k := find(nested); k != "" {
			return ".inputs.step.inputs", k
		}
	}
	return "", ""
}

// vaiFields are the input fields vai's tools take that weft's tools of the same name do not,
// each with what to write in weft instead. weft ignores them in vai's dialect, as vai's tools
// ignore the fields they do not know.
var vaiFields = map[*toolspec.Spec]map[string]string{
	toolspec.HTTP.Spec: {
		"extract":      "remove it, and read the part you need from the step's output.body in a template",
		"responseType": "remove it: http parses a JSON body by itself, and output.body is the parsed value",
	},
	toolspec.Rerank.Spec: {"topK": "to keep fewer results, write limit instead"},
}

// vaiFieldInStep finds the first field (by name) of vaiFields that a step, or a loop's nested
// step, gives its tool: where is ".inputs" or ".inputs.step.inputs".
func vaiFieldInStep(step map[string]any) (where, field, tool string) {
	find := func(m map[string]any) (string, string) {
		tool, _ := m["tool"].(string)
		spec, ok := toolspec.Lookup(tool)
		if !ok {
			return "", ""
		}
		inputs, _ := m["inputs"].(map[string]any)
		for _, k := range sortedKeys(vaiFields[spec]) {
			if _, ok := inputs[k]; ok && !slices.Contains(toolFields(spec), k) {
				return k, tool
			}
		}
		return "", ""
	}
	if k, tool := find(step); k != "" {
		return ".inputs", k, tool
	}
	if t, _ := step["tool"].(string); t != toolspec.Loop.Name {
		return "", "", ""
	}
	inputs, _ := step["inputs"].(map[string]any)
	nested, _ := inputs["step"].(map[string]any)
	if k, tool := find(nested); k != "" {
		return ".inputs.step.inputs", k, tool
	}
	return "", "", ""
}

// hintVaiSchema adds, to a file nothing marked as weft's or vai's that gives a tool a field it
// does not take (an error in weft's format), one warning saying how a vai file says it is one:
// vai ignores such fields, and so does weft in vai's dialect.
func (c *compiler) hintVaiSchema() {
	for _, d := range c.diags {
		if d.Severity == SeverityError && strings.HasPrefix(d.Message, "unknown field ") && strings.Contains(d.Where, "inputs.") {
			w := c.src.At("", "nothing marks this file as weft's or vai's, so it is read as weft's, where an input field a tool does not take is an error",
				`if it is a vai file, say so with a "$schema" whose URL names vai: the fields are then ignored with a warning, as vai ignores them`)
			w.Severity = SeverityWarning
			c.diags = append(c.diags, w)
			return
		}
	}
}

// unknownInputs lists, sorted, the fields of inputs (vai's names already made the tool's own:
// Spec.Canonical) that the tool's schema does not take. A tool whose schema takes any field has
// none.
func unknownInputs(spec *toolspec.Spec, inputs map[string]any) []string {
	sch, err := spec.Schema()
	if err != nil || sch == nil {
		return nil
	}
	if ap, ok := sch.AdditionalProperties.(bool); !ok || ap {
		return nil
	}
	var unknown []string
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for k := range inputs {
		if _, ok := sch.Properties[k]; !ok && !spec.IsLazy(k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	return unknown
}

// indexSegments rewrites the numeric path segments of the file's expressions and templates to
// indexes (in place when rewrite), and reports whether there were any. Strings with {{ }} are
// templates (only their braces are rewritten); conditions and forEach, and a step input named
// condition (filter, conditional), are expressions even without braces. Text without braces is
// never touched.
func indexSegments(root any, rewrite bool) bool {
	m, ok := root.(map[string]any)
	if !ok {
		return false
	}
	found := false
	var walk func(v any, expression bool) any
	walk = func(v any, expression bool) any {
		switch x := v.(type) {
		case string:
			template := strings.Contains(x, "{{")
			if !template && !expression {
				return x
			}
			out, changed := expr.IndexSegments(x, template)
			if changed {
				found = true
				if rewrite {
					return out
				}
			}
			return x
		case map[string]any:
			keys := sortedKeys(x)
			for _, k := range keys {
				x[k] = walk(x[k], k == "condition" || k == "forEach")
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i], false)
			}
		}
		return v
	}
	if steps, ok := m["steps"]; ok {
		walk(steps, false)
	}
	if out, ok := m["output"]; ok {
		m["output"] = walk(out, false)
	}
	return found
}

// dropUnknownInputs removes the input fields the step's tool does not take, in vai's dialect
// (vai ignores them), with a warning and a did-you-mean for each; on an accepted run they are
// removed silently, as they were when the run was accepted. The tool's own schema check then sees
// only what it knows, and the activity never receives them.
func (c *compiler) dropUnknownInputs(cs *CompiledStep) {
	c.dropUnknown(cs.Spec, cs.Step.Inputs, cs.Pointer+"/inputs", cs.Step.Tool)
}

// dropUnknown removes from inputs (at ptr in the file) the fields spec does not take, warning
// about each unless the run was accepted.
func (c *compiler) dropUnknown(spec *toolspec.Spec, inputs map[string]any, ptr, tool string) {
	unknown := unknownInputs(spec, inputs)
	if len(unknown) == 0 {
		return
	}
	fields := toolFields(spec)
	for _, k := range unknown {
		delete(inputs, k)
		if c.accepted {
			continue
		}
		hint := vaiFields[spec][k]
		if hint == "" {
			hint = didYouMean(k, fields)
		}
		if hint == "" {
			hint = "known fields: " + strings.Join(fields, ", ")
		}
		d := c.src.AtKey(ptr+"/"+escapePointer(k),
			fmt.Sprintf("unknown field %q: %s does not take it, so it is ignored (as vai ignores it)", k, tool), hint)
		d.Severity = SeverityWarning
		c.diags = append(c.diags, d)
	}
}
