package dsl

import (
	"encoding/json"
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
//   - a definition built in Go (LoadWeft: Builder, FromDefinition, a tool call) is weft's; vai's
//     names for a tool's inputs (chunk_size) are taken there as in any weft file, a numeric path
//     segment is an error with the [0] spelling as its hint;
//   - a file a loader says is vai's (LoadVai: a vai package's workflow) is vai's;
//   - a file is vai's when it uses what only vai files use: branding or formatters, vai's names
//     for a tool's inputs (chunk_size), a duration in milliseconds (a number), or a numeric path
//     segment in a template or condition;
//   - a file is weft's when something marks it so: its name ends in .weft.json (weft init writes
//     that), or a duration is written as text ("30s", which vai files never do);
//   - otherwise a file that gives a tool (a loop's nested step included) a field that vai's tool
//     of that name takes and weft's does not (vaiFields: http followRedirects, rerank topK, ...) is vai's,
//     but only for those fields: any other field a tool does not take stays an error;
//   - anything else is weft's, strictly checked.
//
// Once a file is vai's by any rule but the last but one, every input field its tools do not take
// is a warning, typos included; in a file nothing marks as vai's a field that is neither weft's
// nor vai's stays an error (weft cannot tell a vai file with a typo from a weft file with one; a
// vai $schema says which).
func DetectDialect(file string, root any) (Dialect, string) {
	v := detectDialect(file, root, loadOptions{})
	return v.dialect, v.reason
}

// verdict is detectDialect's answer: the dialect, why, and whether the file is vai's only
// because its tools are given vaiFields (then only those are ignored).
type verdict struct {
	dialect  Dialect
	reason   string
	byFields bool
}

func detectDialect(file string, root any, o loadOptions) verdict {
	m, ok := root.(map[string]any)
	if !ok {
		return verdict{dialect: DialectWeft}
	}
	schema, _ := m["$schema"].(string)
	schema = strings.ToLower(schema)
	switch {
	case strings.Contains(schema, "weft"):
		return verdict{DialectWeft, "$schema names weft", false}
	case o.vai != "": // a package's workflow, marked by vaipkg.MarkVai or not: the loader says why
		return verdict{DialectVai, o.vai, false}
	case strings.Contains(schema, "vai") || strings.Contains(schema, "voyage"):
		return verdict{DialectVai, "$schema names vai", false}
	case o.built:
		return verdict{DialectWeft, "the definition was built in Go", false}
	}
	for _, k := range []string{"branding", "formatters"} {
		if _, ok := m[k]; ok {
			return verdict{DialectVai, "the file has " + k, false}
		}
	}
	steps, _ := m["steps"].([]any)
	for i, s := range steps {
		step, ok := s.(map[string]any)
		if !ok {
			continue
		}
		if d := durationIn(step, true); d != "" {
			return verdict{DialectVai, fmt.Sprintf("steps[%d].%s is in milliseconds", i, d), false}
		}
		if where, k := aliasInStep(step); k != "" {
			return verdict{DialectVai, fmt.Sprintf("steps[%d]%s uses vai's name %s", i, where, k), false}
		}
	}
	if indexSegments(root, false) {
		return verdict{DialectVai, "a path has a numeric segment (results.0.score)", false}
	}
	if strings.HasSuffix(strings.ToLower(file), ".weft.json") {
		return verdict{DialectWeft, "the file name ends in .weft.json", false}
	}
	for i, s := range steps {
		step, _ := s.(map[string]any)
		if d := durationIn(step, false); d != "" {
			return verdict{DialectWeft, fmt.Sprintf("steps[%d].%s is written as text", i, d), false}
		}
	}
	for i, s := range steps {
		step, _ := s.(map[string]any)
		if where, k, tool := vaiFieldInStep(step); k != "" {
			return verdict{DialectVai, fmt.Sprintf("steps[%d]%s.%s is a field of vai's %s tool", i, where, k, tool), true}
		}
	}
	return verdict{dialect: DialectWeft}
}

// durationIn names the first of a step's durations (timeout, retry.initialInterval,
// retry.maxInterval) written as a number of milliseconds when ms, else as text ("30s"); "" when
// none is.
func durationIn(step map[string]any, ms bool) string {
	written := func(v any) bool {
		if ms {
			_, ok := v.(float64)
			return ok
		}
		_, ok := v.(string)
		return ok
	}
	if written(step["timeout"]) {
		return "timeout"
	}
	retry, _ := step["retry"].(map[string]any)
	for _, k := range []string{"initialInterval", "maxInterval"} {
		if written(retry[k]) {
			return "retry." + k
		}
	}
	return ""
}

// stepTool is the tool a step (or a loop's nested step) names and the inputs it gives it; where
// is where those inputs are in the step: ".inputs" or ".inputs.step.inputs".
type stepTool struct {
	where, tool string
	inputs      map[string]any
}

// toolsOf are a step's tool and inputs, then, when the step is a loop, its nested step's.
func toolsOf(step map[string]any) []stepTool {
	tool, _ := step["tool"].(string)
	inputs, _ := step["inputs"].(map[string]any)
	out := []stepTool{{".inputs", tool, inputs}}
	if tool == toolspec.Loop.Name {
		nested, _ := inputs["step"].(map[string]any)
		nt, _ := nested["tool"].(string)
		ni, _ := nested["inputs"].(map[string]any)
		out = append(out, stepTool{".inputs.step.inputs", nt, ni})
	}
	return out
}

// aliasInStep finds the first of vai's names for a tool's inputs (by name) that a step, or a
// loop's nested step, uses: where is ".inputs" or ".inputs.step.inputs".
func aliasInStep(step map[string]any) (where, alias string) {
	for _, t := range toolsOf(step) {
		spec, ok := toolspec.Lookup(t.tool)
		if !ok {
			continue
		}
		for _, k := range sortedKeys(t.inputs) { // the first alias by name: the same reason every time
			if _, alias := spec.Aliases[k]; alias {
				return t.where, k
			}
		}
	}
	return "", ""
}

// vaiFields are the input fields vai's workflow tools read (or, rerank's topK, that vai's own
// example files give them) that weft's tools of the same name do not take, each with what vai
// does with it and what to write in weft instead. weft ignores them in vai's dialect, with that
// as the warning's hint. A field weft takes under another name is no entry here but an alias
// (Spec.Aliases), which keeps its value.
var vaiFields = map[*toolspec.Spec]map[string]string{
	toolspec.HTTP.Spec: {
		"followRedirects": "remove it: weft's http follows up to 5 redirects whatever it says (vai follows none unless it is true)",
	},
	toolspec.Rerank.Spec: {"topK": "vai's rerank does not read it either and returns every document: remove it, or write limit to keep only the best"},
	toolspec.Chunk.Spec:  {"source": "weft's chunks are strings and carry no source (vai's are objects with it): give the source where the chunks are stored, as ingest's source"},
	toolspec.Aggregate.Spec: {
		"allowWrites": "remove it: weft's aggregate is read-only and refuses $out and $merge whatever it says",
	},
	toolspec.CodeIndex.Spec: {
		"batchSize":    "remove it: weft sizes the embedding batches itself",
		"chunkOverlap": "remove it: weft splits code at function and class boundaries, without overlap (chunkSize bounds a chunk)",
		"refresh":      "remove it: weft re-embeds only the files changed since the last index, always",
	},
	toolspec.CodeSearch.Spec: {
		"category": `to keep chunks of one kind, write filter: {"kind": ...} (function, class, ...)`,
	},
	toolspec.CodeQuery.Spec: {
		"category": `to keep chunks of one kind, write filter: {"kind": ...} (function, class, ...)`,
		"rerank":   "remove it: code_query always reranks, in vai too",
	},
}

// vaiFieldInStep finds the first field (by name) of vaiFields that a step, or a loop's nested
// step, gives its tool: where is ".inputs" or ".inputs.step.inputs".
func vaiFieldInStep(step map[string]any) (where, field, tool string) {
	for _, t := range toolsOf(step) {
		spec, ok := toolspec.Lookup(t.tool)
		if !ok {
			continue
		}
		for _, k := range sortedKeys(vaiFields[spec]) {
			if _, ok := t.inputs[k]; ok && !slices.Contains(toolFields(spec), k) {
				return t.where, k, t.tool
			}
		}
	}
	return "", "", ""
}

// hintVaiSchema adds, to a file nothing marks as vai's (or marks so only by vaiFields) that gives
// a tool a field it does not take, or has a field the file format does not (an error there), one warning saying how a vai file says it is
// one: vai ignores such fields, and so does weft then. The warning is given only when the file,
// read in vai's dialect, has no errors: a $schema naming vai would make it valid.
func (c *compiler) hintVaiSchema() {
	unknown, inFile := false, false
	for _, d := range c.diags {
		if d.Severity != SeverityError || !strings.HasPrefix(d.Message, "unknown field ") {
			continue
		}
		unknown = true
		if !strings.HasPrefix(d.Where, "steps[") || !strings.Contains(d.Where, ".inputs.") {
			inFile = true // a field of the file format ("conditon"), which vai ignores too
		}
	}
	if !unknown {
		return
	}
	if _, err := load(c.src.File, c.src.Data, loadOptions{vai: "a $schema naming vai"}); err != nil {
		return // marking it vai's would not make it valid
	}
	msg := "nothing marks this file as weft's or vai's, so it is read as weft's, where an input field a tool does not take is an error"
	if inFile {
		msg = "nothing marks this file as weft's or vai's, so it is read as weft's, where a field the file format or a tool does not have is an error"
	}
	if c.byFields {
		msg = "this file is read as vai's only because a tool is given a field of vai's tool (" + c.w.DialectReason + "): an input field that is not vai's either is an error"
	}
	w := c.src.At("", msg, `if it is a vai file, say so with a "$schema" whose URL names vai: the fields are then ignored with a warning, as vai ignores them`)
	w.Severity = SeverityWarning
	c.diags = append(c.diags, w)
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

// IndexesInBrackets returns def with every numeric path segment of its templates, conditions and
// forEach (results.0.score, vai's spelling) written as an index (results[0].score, weft's), and
// whether it had one: what weft convert prints, so that the file reads the same in either
// dialect and validates as weft's own.
func IndexesInBrackets(def *Definition) (*Definition, bool, error) {
	data, err := json.Marshal(def)
	if err != nil {
		return nil, false, err
	}
	var root any
	if err := json.Unmarshal(data, &root); err != nil {
		return nil, false, err
	}
	if !indexSegments(root, true) {
		return def, false, nil
	}
	if data, err = json.Marshal(root); err != nil {
		return nil, false, err
	}
	var out Definition
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, false, err
	}
	return &out, true, nil
}

// lenientInputs says whether input fields a tool does not take are removed before its schema
// is checked (dropUnknown): in vai's dialect (vai ignores them), and on an accepted run (they were
// removed when it was accepted). Steps and a loop's nested step follow this one rule.
func (c *compiler) lenientInputs() bool { return c.dialect == DialectVai || c.accepted }

// toolInputs are the inputs a step (or a loop's nested step: the same rule) gives spec's tool
// (at ptr in the file), vai's names for them made the tool's own (a name set alongside the one
// it stands for is ignored, with a warning) and the fields the tool does not take removed when
// lenientInputs (dropUnknown).
func (c *compiler) toolInputs(spec *toolspec.Spec, inputs map[string]any, ptr, tool string) map[string]any {
	canon, conflicts := spec.Canonical(inputs)
	for _, a := range conflicts {
		c.warnAt(ptr+"/"+escapePointer(a), fmt.Sprintf("%s is another name for %s, which is set too: %s is ignored", a, spec.Aliases[a], a), "remove one of them")
	}
	c.dropUnknown(spec, canon, ptr, tool)
	return c.vaiInputs(spec, canon, ptr, tool) // vai's defaults where they differ from weft's (vai_defaults.go)
}

// dropUnknown removes from inputs (at ptr in the file) the fields spec does not take when
// lenientInputs, with a warning and a did-you-mean for each; on an accepted run they are removed
// silently, as they were when the run was accepted. In a file vai's only by vaiFields, only those
// fields are removed: the others are left for the tool's schema check to report as errors. The
// schema check then sees only what the tool knows, and the activity never receives the rest.
func (c *compiler) dropUnknown(spec *toolspec.Spec, inputs map[string]any, ptr, tool string) {
	if !c.lenientInputs() {
		return
	}
	unknown := unknownInputs(spec, inputs)
	if len(unknown) == 0 {
		return
	}
	fields := toolFields(spec)
	for _, k := range unknown {
		if c.accepted {
			delete(inputs, k)
			continue
		}
		hint, vai := vaiFields[spec][k]
		if c.byFields && !vai {
			continue
		}
		delete(inputs, k)
		// a field of vai's tool: the hint says what vai does with it, which is not always ignoring it
		msg := fmt.Sprintf("unknown field %q: %s does not take it, so it is ignored", k, tool)
		if !vai {
			msg += " (as vai ignores it)"
		}
		if hint == "" {
			hint = didYouMean(k, fields)
		}
		if hint == "" {
			hint = "known fields: " + strings.Join(fields, ", ")
		}
		d := c.src.AtKey(ptr+"/"+escapePointer(k), msg, hint)
		d.Severity = SeverityWarning
		c.diags = append(c.diags, d)
	}
}
