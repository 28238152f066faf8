package dsl

import (
	"fmt"
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

// DetectDialect says in which dialect a decoded workflow file is written, and why. A "$schema"
// naming weft or vai decides; without one, a file is vai's when it uses what only vai files use:
// branding or formatters, vai's names for a tool's inputs (chunk_size), a duration in
// milliseconds (a number), or a numeric path segment in a template or condition. Anything else
// is weft's, strictly checked.
func DetectDialect(root any) (Dialect, string) {
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
		tool, _ := step["tool"].(string)
		inputs, _ := step["inputs"].(map[string]any)
		if spec, ok := toolspec.Lookup(tool); ok {
			for _, k := range sortedKeys(inputs) { // the first alias by name: the same reason every time
				if _, alias := spec.Aliases[k]; alias {
					return DialectVai, fmt.Sprintf("steps[%d].inputs uses vai's name %s", i, k)
				}
			}
		}
	}
	if indexSegments(root, false) {
		return DialectVai, "a path has a numeric segment (results.0.score)"
	}
	return DialectWeft, ""
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
	sch, err := cs.Spec.Schema()
	if err != nil || sch == nil {
		return
	}
	if ap, ok := sch.AdditionalProperties.(bool); !ok || ap {
		return
	}
	var unknown []string
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for k := range cs.Step.Inputs {
		if _, ok := sch.Properties[k]; !ok && !cs.Spec.IsLazy(k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	fields := toolFields(cs.Spec)
	for _, k := range unknown {
		delete(cs.Step.Inputs, k)
		if c.accepted {
			continue
		}
		hint := didYouMean(k, fields)
		if hint == "" {
			hint = "known fields: " + strings.Join(fields, ", ")
		}
		d := c.src.AtKey(cs.Pointer+"/inputs/"+escapePointer(k),
			fmt.Sprintf("unknown field %q: %s does not take it, so it is ignored (as vai ignores it)", k, cs.Step.Tool), hint)
		d.Severity = SeverityWarning
		c.diags = append(c.diags, d)
	}
}
