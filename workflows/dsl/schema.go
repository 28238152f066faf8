package dsl

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/internal/english"
)

//go:embed schema/workflow.schema.json
var workflowSchemaJSON []byte

// SchemaJSON returns the JSON Schema of the step file format for editors (weft schema): the tool
// names of the registry are the enum of steps[].tool, and each step's inputs are checked against
// the input schema of the tool it names (an if/then per tool), so an editor flags "limt" and
// "limit": "five" on a search as weft validate does. A value the schema does not take is allowed
// when it is a {{ }} template (checked when resolved, as validate checks it), and vai's names
// for an input (chunk_size) are taken as the input's.
func SchemaJSON() []byte {
	editor.Lock()
	defer editor.Unlock()
	if g := toolspec.Generation(); editor.json == nil || editor.generation != g {
		editor.json, editor.generation = editorSchemaJSON(), g
	}
	return editor.json
}

// editor memoises SchemaJSON for the registry's generation (tests register tools).
var editor struct {
	sync.Mutex
	json       []byte
	generation uint64
}

func editorSchemaJSON() []byte {
	var doc map[string]any
	if err := json.Unmarshal(workflowSchemaJSON, &doc); err != nil {
		panic("dsl: workflow.schema.json: " + err.Error()) // embedded; TestSchemaJSONChecksToolInputs
	}
	defs := doc["$defs"].(map[string]any)
	step := defs["step"].(map[string]any)
	props := step["properties"].(map[string]any)
	names := toolspec.Names()
	enum := make([]any, len(names))
	for i, n := range names {
		enum[i] = n
	}
	props["tool"].(map[string]any)["enum"] = enum
	defs["template"] = map[string]any{"type": "string", "pattern": `\{\{`, "description": "a {{ }} template: checked when it is resolved"}
	var perTool []any
	for _, n := range names {
		spec, _ := toolspec.Lookup(n)
		var in map[string]any
		if err := json.Unmarshal([]byte(spec.InputJSON()), &in); err != nil || in == nil {
			continue
		}
		if ps, ok := in["properties"].(map[string]any); ok {
			for _, alias := range sortedKeys(spec.Aliases) {
				if target, ok := ps[spec.Aliases[alias]]; ok {
					ps[alias] = target
				}
			}
		}
		perTool = append(perTool, map[string]any{
			"if":   map[string]any{"properties": map[string]any{"tool": map[string]any{"const": n}}, "required": []any{"tool"}},
			"then": map[string]any{"properties": map[string]any{"inputs": orTemplate(in)}},
		})
	}
	step["allOf"] = perTool
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic("dsl: editor schema: " + err.Error())
	}
	return out
}

// orTemplate returns a copy of schema in which every subschema that constrains a value also
// takes a {{ }} template in its place: the inputs of a step are checked as written, before their
// templates are resolved.
func orTemplate(schema any) any {
	m, ok := schema.(map[string]any)
	if !ok {
		return schema
	}
	out := make(map[string]any, len(m))
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for k, v := range m {
		switch k {
		case "properties", "patternProperties", "$defs":
			sub, _ := v.(map[string]any)
			cp := make(map[string]any, len(sub))
			//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
			for name, s := range sub {
				cp[name] = orTemplate(s)
			}
			out[k] = cp
		case "items", "additionalProperties":
			out[k] = orTemplate(v)
		case "anyOf", "oneOf", "allOf", "prefixItems":
			list, _ := v.([]any)
			cp := make([]any, len(list))
			for i, s := range list {
				cp[i] = orTemplate(s)
			}
			out[k] = cp
		default:
			out[k] = v
		}
	}
	if len(m) == 0 {
		return out // any value
	}
	desc := out["description"]
	alt := map[string]any{"anyOf": []any{out, map[string]any{"$ref": "#/$defs/template"}}}
	if desc != nil {
		alt["description"] = desc
	}
	return alt
}

var (
	schemaOnce sync.Once
	fileSchema *jsonschema.Schema
	schemaErr  error
)

func workflowSchema() (*jsonschema.Schema, error) {
	schemaOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(workflowSchemaJSON))
		if err != nil {
			schemaErr = err
			return
		}
		c := jsonschema.NewCompiler()
		const url = "https://weft.dev/schemas/workflow-v1.json"
		if err := c.AddResource(url, doc); err != nil {
			schemaErr = err
			return
		}
		fileSchema, schemaErr = c.Compile(url)
	})
	return fileSchema, schemaErr
}

var printer = message.NewPrinter(language.English)

// schemaDiags turns a jsonschema validation error into diagnostics. prefix is the JSON pointer
// of the validated value inside the file; skip reports pointers whose findings are ignored
// (templated values; never an unknown field, whatever its value); unknown says how an unknown field is reported.
func schemaDiags(src *Source, err error, prefix string, skip func(string) bool, unknown Severity, known func(ptr string) []string) Diagnostics {
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return Diagnostics{src.At(prefix, err.Error(), "")}
	}
	var out Diagnostics
	var visit func(e *jsonschema.ValidationError)
	visit = func(e *jsonschema.ValidationError) {
		ptr := prefix
		for _, t := range e.InstanceLocation {
			ptr += "/" + escapePointer(t)
		}
		if skip != nil && skip(ptr) {
			return
		}
		switch k := e.ErrorKind.(type) {
		case *kind.Not:
			out = append(out, src.At(ptr, "this value is not allowed here", propertyNameHint(ptr)))
			return
		case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
			if len(e.Causes) > 0 {
				for _, c := range e.Causes {
					visit(c)
				}
				return
			}
		case *kind.Required:
			for _, m := range k.Missing {
				out = append(out, src.At(ptr, fmt.Sprintf("missing required field %q", m), requiredHint(ptr, m)))
			}
			return
		case *kind.AdditionalProperties:
			props := append([]string(nil), k.Properties...)
			sort.Strings(props)
			for _, p := range props {
				// An unknown key is wrong whatever its value: a templated value is no reason to skip it.
				child := ptr + "/" + escapePointer(p)
				var cands []string
				if known != nil {
					cands = known(ptr)
				}
				hint := didYouMean(p, cands)
				if hint == "" && len(cands) > 0 {
					hint = "known fields: " + strings.Join(cands, ", ")
				}
				d := src.AtKey(child, fmt.Sprintf("unknown field %q", p), hint)
				d.Severity = unknown
				out = append(out, d)
			}
			return
		case *kind.Type:
			out = append(out, src.At(ptr, fmt.Sprintf("must be %s, not %s", article(k.Want), article([]string{k.Got})), ""))
			return
		case *kind.Enum:
			want := make([]string, len(k.Want))
			for i, w := range k.Want {
				want[i] = fmt.Sprint(w)
			}
			hint := ""
			if s, ok := k.Got.(string); ok {
				hint = didYouMean(s, want)
			}
			out = append(out, src.At(ptr, fmt.Sprintf("%s is not one of %s", display(k.Got), strings.Join(quoteAll(want), ", ")), hint))
			return
		case *kind.Pattern:
			msg, hint := patternMessage(ptr, k)
			out = append(out, src.At(ptr, msg, hint))
			return
		case *kind.Minimum:
			out = append(out, src.At(ptr, fmt.Sprintf("must be at least %s (got %s)", rat(k.Want), rat(k.Got)), ""))
			return
		case *kind.Maximum:
			out = append(out, src.At(ptr, fmt.Sprintf("must be at most %s (got %s)", rat(k.Want), rat(k.Got)), ""))
			return
		case *kind.MinItems:
			out = append(out, src.At(ptr, fmt.Sprintf("needs at least %s (has %d)", english.Count(k.Want, "item"), k.Got), ""))
			return
		case *kind.MaxItems:
			out = append(out, src.At(ptr, fmt.Sprintf("allows at most %s (has %d)", english.Count(k.Want, "item"), k.Got), ""))
			return
		case *kind.MinLength:
			out = append(out, src.At(ptr, fmt.Sprintf("must be at least %s long (is %d)", english.Count(k.Want, "character"), k.Got), ""))
			return
		case *kind.MaxLength:
			out = append(out, src.At(ptr, fmt.Sprintf("must be at most %s long (is %d)", english.Count(k.Want, "character"), k.Got), ""))
			return
		case *kind.PropertyNames:
			out = append(out, src.AtKey(ptr+"/"+escapePointer(k.Property), fmt.Sprintf("field name %q is not allowed here", k.Property), propertyNameHint(ptr)))
			return
		}
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				visit(c)
			}
			return
		}
		out = append(out, src.At(ptr, e.ErrorKind.LocalizedString(printer), ""))
	}
	visit(ve)
	return out
}

func rat(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func display(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

func article(types []string) string {
	out := make([]string, len(types))
	for i, t := range types {
		if t == "null" {
			out[i] = "null"
		} else {
			out[i] = english.A(t)
		}
	}
	return strings.Join(out, " or ")
}

func requiredHint(ptr, field string) string {
	switch {
	case ptr == "":
		if field == "steps" {
			return "a workflow needs a steps array with at least one step"
		}
		return "a workflow needs a name"
	case strings.HasPrefix(ptr, "/steps/") && strings.Count(ptr, "/") == 2:
		return "every step needs an id and a tool"
	case strings.HasPrefix(ptr, "/inputs/"):
		return "declare the type: string, number, boolean, array or object"
	}
	return ""
}

func patternMessage(ptr string, k *kind.Pattern) (string, string) {
	switch {
	case strings.HasSuffix(ptr, "/id") && strings.HasPrefix(ptr, "/steps/"):
		return fmt.Sprintf("step id %q is not valid", k.Got), "use lowercase letters, digits and _, starting with a letter, e.g. " + fmt.Sprintf("%q", sanitizeID(k.Got))
	case ptr == "/version":
		return fmt.Sprintf("version %q is not a semantic version", k.Got), "write MAJOR.MINOR.PATCH, e.g. \"1.0.0\""
	case strings.HasSuffix(ptr, "/timeout") || strings.HasSuffix(ptr, "Interval"):
		return fmt.Sprintf("%q is not a duration", k.Got), "write a number with a unit, e.g. \"30s\", \"5m\", \"1h30m\""
	}
	return fmt.Sprintf("%q does not match the pattern %s", k.Got, k.Want), ""
}

func propertyNameHint(ptr string) string {
	if ptr == "/inputs" {
		return "input names are letters, digits and _, starting with a letter or _"
	}
	if strings.Contains(ptr, "/pipeline/") {
		return "aggregate is read-only: $out and $merge stages write data; use the ingest tool to store results"
	}
	return ""
}

// sanitizeID turns a label into a valid step id.
func sanitizeID(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == '_' || r == '-' || r == ' ' || r == '.':
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
				b.WriteByte('_')
			}
		}
	}
	id := strings.Trim(b.String(), "_")
	if id == "" || id[0] < 'a' || id[0] > 'z' {
		id = "step_" + id
	}
	return strings.TrimSuffix(id, "_")
}

// jsonFields lists the JSON field names of a struct type, sorted.
func jsonFields(v any) []string {
	t := reflect.TypeOf(v)
	var out []string
	for i := 0; i < t.NumField(); i++ {
		tag := strings.Split(t.Field(i).Tag.Get("json"), ",")[0]
		if tag != "" && tag != "-" {
			out = append(out, tag)
		}
	}
	sort.Strings(out)
	return out
}

// fileFields returns the known field names of the file-format object at ptr.
func fileFields(ptr string) []string {
	parts := strings.Split(ptr, "/")
	switch {
	case ptr == "":
		return jsonFields(Definition{})
	case len(parts) == 3 && parts[1] == "steps":
		return jsonFields(Step{})
	case len(parts) == 4 && parts[1] == "steps" && parts[3] == "retry":
		return jsonFields(Retry{})
	case len(parts) == 3 && parts[1] == "inputs":
		return jsonFields(Input{})
	case ptr == "/mcp":
		return jsonFields(MCPOptions{})
	case ptr == "/budget", len(parts) == 4 && parts[1] == "steps" && parts[3] == "budget":
		return jsonFields(Budget{})
	}
	return nil
}

// toolFields returns the declared input names of a tool.
func toolFields(spec *toolspec.Spec) []string {
	sch, err := spec.Schema()
	if err != nil || sch == nil {
		return nil
	}
	out := make([]string, 0, len(sch.Properties))
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for k := range sch.Properties {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
