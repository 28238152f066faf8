package toolspec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	gschema "github.com/google/jsonschema-go/jsonschema"
)

// A tool's input and output schemas are derived from its Go types (Spec.In, Spec.Out) by
// google/jsonschema-go: JSON names, types, required fields (those without omitempty), nested
// structs and descriptions (the `jsonschema` tag). That library keeps tags to descriptions, so the
// constraints a validator needs are read here from two more tags on the same field:
//
//	weft:"min=1,max=50,default=5"   minimum, maximum, default (typed by the field), minLength,
//	                                maxLength, minItems, maxItems, enum=a|b|c, type=array|object
//	                                (for an `any` field), itemType=string|object (its items),
//	                                nullable (a slice or pointer that may be null), open (a
//	                                struct, or list of them, that may hold undeclared fields),
//	                                content (the field carries what the tool works on or
//	                                gives, not a setting: Spec.Content, no schema keyword);
//	                                item.KEY=V puts a constraint on each item of a list
//	pattern:"^[a-z]+$"              a regular expression (kept apart: patterns hold commas);
//	itemPattern:"..."               the same for each item of a list
//
// A field no Go type can describe (a value that may be an array or an object, a schema with
// anyOf) takes its whole schema from Spec.RawInput, keyed by its JSON name.

// SchemaOf is the JSON Schema of t (a struct) as a JSON document, derived as a tool's input
// schema is (json names, required fields, jsonschema descriptions, weft constraints).
func SchemaOf(t reflect.Type) (string, error) { return deriveSchema(t, nil, false) }

// deriveSchema returns the JSON Schema of t (a struct) as a JSON document. Output schemas are
// descriptions of what a tool returns, not checks: they drop required and additionalProperties.
func deriveSchema(t reflect.Type, raw map[string]string, output bool) (string, error) {
	if t.Kind() == reflect.Interface {
		return "{}", nil // any value
	}
	s, err := gschema.ForType(t, &gschema.ForOptions{})
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return "", err
	}
	if err := refine(doc, t, output); err != nil {
		return "", err
	}
	if props, _ := doc["properties"].(map[string]any); props != nil {
		for name, r := range raw {
			if _, ok := props[name]; !ok {
				return "", fmt.Errorf("raw schema for %q: the input type has no field %q", name, name)
			}
			var fs map[string]any
			if err := json.Unmarshal([]byte(r), &fs); err != nil {
				return "", fmt.Errorf("raw schema for %q is not JSON: %w", name, err)
			}
			if old, _ := props[name].(map[string]any); old["description"] != nil {
				d := old["description"]
				if _, own := fs["description"]; !own {
					fs["description"] = d
				}
			}
			props[name] = fs
		}
	}
	b, err = json.Marshal(doc)
	return string(b), err
}

// mockSchema is the schema of a stand-in for a value of type t: its fields and their types, as an
// input's are derived (an undeclared field refused, but in an open struct), none of them required.
func mockSchema(t reflect.Type) (any, error) {
	doc, err := deriveSchema(t, nil, false)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal([]byte(doc), &out); err != nil {
		return nil, err
	}
	dropRequired(out)
	return out, nil
}

// dropRequired removes every "required" list from a schema document (not a field of that name).
func dropRequired(v any) {
	switch d := v.(type) {
	case map[string]any:
		if _, ok := d["required"].([]any); ok {
			delete(d, "required")
		}
		//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
		for _, sub := range d {
			dropRequired(sub)
		}
	case []any:
		for _, sub := range d {
			dropRequired(sub)
		}
	}
}

// refine applies the weft and pattern tags of struct t's fields to the object schema doc, and
// normalises what the library adds that weft's schemas do not say: null in the types of slices
// and pointers (unless nullable) and `additionalProperties: {}` on maps.
func refine(doc map[string]any, t reflect.Type, output bool) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	normalise(doc)
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if items, ok := doc["items"].(map[string]any); ok {
			return refine(items, t.Elem(), output)
		}
		return nil
	case reflect.Map:
		if ap, ok := doc["additionalProperties"].(map[string]any); ok {
			return refine(ap, t.Elem(), output)
		}
		return nil
	case reflect.Struct:
	default:
		return nil
	}
	if output {
		delete(doc, "required")
		delete(doc, "additionalProperties")
	}
	props, _ := doc["properties"].(map[string]any)
	for _, f := range reflect.VisibleFields(t) {
		name, ok := jsonName(f)
		if !ok || f.Anonymous {
			continue
		}
		if props[name] == true {
			props[name] = map[string]any{} // an `any` field: the library writes the schema true
		}
		fs, _ := props[name].(map[string]any)
		if fs == nil {
			continue
		}
		if err := refine(fs, f.Type, output); err != nil {
			return err
		}
		if p, ok := f.Tag.Lookup("pattern"); ok {
			fs["pattern"] = p
		}
		if p, ok := f.Tag.Lookup("itemPattern"); ok {
			items, _ := fs["items"].(map[string]any)
			if items == nil {
				return fmt.Errorf("%s.%s: itemPattern on a field that is not a list", t.Name(), f.Name)
			}
			items["pattern"] = p
		}
		if err := applyTag(fs, f); err != nil {
			return fmt.Errorf("%s.%s: %w", t.Name(), f.Name, err)
		}
	}
	return nil
}

// normalise removes what google/jsonschema-go adds that weft's schemas do not say.
func normalise(doc map[string]any) {
	if ts, ok := doc["type"].([]any); ok && len(ts) == 2 && ts[0] == "null" {
		doc["type"] = ts[1]
	}
	if ap, ok := doc["additionalProperties"].(map[string]any); (ok && len(ap) == 0) || doc["additionalProperties"] == true {
		delete(doc, "additionalProperties")
	}
	if doc["items"] == true {
		delete(doc, "items") // []any: any items
	}
}

// jsonName is the field's name in JSON, and whether it is in JSON at all.
func jsonName(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	if name, _, _ := strings.Cut(tag, ","); name != "" {
		return name, true
	}
	return f.Name, true
}

func applyTag(fs map[string]any, f reflect.StructField) error {
	tag, ok := f.Tag.Lookup("weft")
	if !ok {
		return nil
	}
	ft := f.Type
	for ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	for _, kv := range strings.Split(tag, ",") {
		k, v, _ := strings.Cut(kv, "=")
		if ik, ok := strings.CutPrefix(k, "item."); ok {
			// a constraint on each item of a list
			if ft.Kind() != reflect.Slice && ft.Kind() != reflect.Array {
				return fmt.Errorf("weft tag %s: the field is not a list", k)
			}
			items, _ := fs["items"].(map[string]any)
			if items == nil {
				items = map[string]any{}
				fs["items"] = items
			}
			if err := applyKey(items, ft.Elem(), ik, v); err != nil {
				return err
			}
			continue
		}
		if err := applyKey(fs, ft, k, v); err != nil {
			return err
		}
	}
	return nil
}

func applyKey(fs map[string]any, ft reflect.Type, k, v string) error {
	{
		switch k {
		case "min", "max":
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("weft tag %s=%q: not a number", k, v)
			}
			fs[map[string]string{"min": "minimum", "max": "maximum"}[k]] = n
		case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties":
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("weft tag %s=%q: not an integer", k, v)
			}
			fs[k] = n
		case "default":
			d, err := typed(ft, v)
			if err != nil {
				return fmt.Errorf("weft tag default=%q: %w", v, err)
			}
			fs["default"] = d
		case "enum":
			var vals []any
			for _, e := range strings.Split(v, "|") {
				d, err := typed(ft, e)
				if err != nil {
					return fmt.Errorf("weft tag enum value %q: %w", e, err)
				}
				vals = append(vals, d)
			}
			fs["enum"] = vals
		case "type":
			ts := strings.Split(v, "|")
			if len(ts) == 1 {
				fs["type"] = ts[0]
			} else {
				fs["type"] = ts
			}
		case "itemType":
			ts := strings.Split(v, "|")
			items := map[string]any{"type": ts[0]}
			if len(ts) > 1 {
				items["type"] = ts
			}
			fs["items"] = items
		case "open":
			// a struct (or a list of them) that may carry fields it does not declare
			if items, ok := fs["items"].(map[string]any); ok {
				delete(items, "additionalProperties")
			}
			delete(fs, "additionalProperties")
		case "content":
			// no schema keyword: Spec.Content reads it (what the console's builder wires by)
		case "nullable":
			if t, ok := fs["type"].(string); ok {
				fs["type"] = []any{"null", t}
			}
		default:
			return fmt.Errorf("weft tag: unknown key %q (min, max, default, enum, minLength, maxLength, minItems, maxItems, type, itemType, open, nullable, content; item.KEY for a list's items)", k)
		}
	}
	return nil
}

// typed reads a tag value as the field's JSON type.
func typed(t reflect.Type, v string) (any, error) {
	switch t.Kind() {
	case reflect.String:
		return v, nil
	case reflect.Bool:
		return strconv.ParseBool(v)
	case reflect.Int, reflect.Int64, reflect.Int32:
		return strconv.Atoi(v)
	case reflect.Float64, reflect.Float32:
		return strconv.ParseFloat(v, 64)
	}
	var out any
	if err := json.Unmarshal([]byte(v), &out); err != nil {
		return nil, fmt.Errorf("not JSON for a %s field", t)
	}
	return out, nil
}

// Defaults returns the declared default of every top-level input: what a handler's typed input
// holds when a step leaves the field out.
func (s *Spec) Defaults() map[string]any {
	s.compile()
	return s.defaults
}

// Tool is a typed declaration: a tool's Spec with the Go types of its input and output. Package
// activities binds each activity tool's handler to its Tool, so the compiler checks that the
// handler takes In and returns Out.
type Tool[In, Out any] struct{ *Spec }

// Declare registers s with In and Out as its input and output types; the schemas are derived
// from them (built on first use).
func Declare[In, Out any](s *Spec) Tool[In, Out] {
	s.In, s.Out = reflect.TypeFor[In](), reflect.TypeFor[Out]()
	register(s)
	return Tool[In, Out]{s}
}

// Describe gives s In and Out as its input and output types, as Declare does, without
// registering it: a tool that is not a workflow step (the MCP gateway's own tools) with schemas,
// validation, defaults and Decode derived the same way.
func Describe[In, Out any](s *Spec) Tool[In, Out] {
	s.In, s.Out = reflect.TypeFor[In](), reflect.TypeFor[Out]()
	return Tool[In, Out]{s}
}

// Decode reads a step's inputs (valid against the schema, aliases renamed) into In, with the
// declared defaults for the fields the step leaves out.
func (t Tool[In, Out]) Decode(inputs map[string]any) (In, error) {
	var in In
	withDefaults := inputs
	if d := t.Defaults(); len(d) > 0 {
		withDefaults = make(map[string]any, len(inputs)+len(d))
		//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
		for k, v := range d {
			withDefaults[k] = v
		}
		//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
		for k, v := range inputs {
			withDefaults[k] = v
		}
	}
	b, err := json.Marshal(withDefaults)
	if err != nil {
		return in, fmt.Errorf("%s: inputs are not JSON: %w", t.Name, err)
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return in, fmt.Errorf("%s: inputs do not fit the tool's input type: %w", t.Name, err)
	}
	return in, nil
}

// typeKeywords are the keywords that constrain one JSON type only: Portable moves them into that
// type's branch.
var typeKeywords = map[string][]string{
	"string":  {"minLength", "maxLength", "pattern", "format"},
	"number":  {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
	"integer": {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
	"array":   {"items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains"},
	"object":  {"properties", "required", "additionalProperties", "patternProperties", "minProperties", "maxProperties"},
}

// Portable returns a copy of the schema document doc in the form every MCP client reads: no
// `type` list (["string","number"], or ["null","array"] for a nullable value), which some clients
// refuse and the MCP Inspector warns about. A type list becomes an anyOf with one branch per type,
// each holding the keywords that constrain that type (a pattern the string's, items the array's),
// null last; what applies to every type (description, default, enum) stays beside it. The
// schema takes the same values. A list of one type becomes that type.
func Portable(doc any) any {
	switch d := doc.(type) {
	case []any:
		out := make([]any, len(d))
		for i, v := range d {
			out[i] = Portable(v)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(d))
		//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
		for k, v := range d {
			switch k {
			case "enum", "const", "default", "examples", "required":
				out[k] = v // values, not schemas
			case "properties", "patternProperties", "$defs":
				sub, _ := v.(map[string]any)
				cp := make(map[string]any, len(sub))
				//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
				for name, s := range sub {
					cp[name] = Portable(s)
				}
				out[k] = cp
			default:
				out[k] = Portable(v)
			}
		}
		ts, ok := out["type"].([]any)
		if !ok {
			return out
		}
		delete(out, "type")
		if len(ts) == 1 {
			out["type"] = ts[0]
			return out
		}
		var branches []any
		null := false
		for _, t := range ts {
			name, _ := t.(string)
			if name == "null" {
				null = true
				continue
			}
			b := map[string]any{"type": name}
			for _, k := range typeKeywords[name] {
				if v, ok := out[k]; ok {
					b[k] = v
				}
			}
			branches = append(branches, b)
		}
		for _, t := range ts {
			for _, k := range typeKeywords[fmt.Sprint(t)] {
				delete(out, k)
			}
		}
		if null {
			branches = append(branches, map[string]any{"type": "null"})
		}
		if old, ok := out["anyOf"]; ok {
			// both an anyOf of its own and a type list: the value must satisfy each
			delete(out, "anyOf")
			out["allOf"] = append(asList(out["allOf"]), map[string]any{"anyOf": old}, map[string]any{"anyOf": branches})
			return out
		}
		out["anyOf"] = branches
		return out
	}
	return doc
}

// TypeLists lists where the schema document doc has a `type` list (what Portable rewrites), as
// paths from its root ("/properties/x", "/items", "/[]" for a list's members): none in a portable
// schema.
func TypeLists(doc any) []string { return typeLists(doc, "") }

func typeLists(v any, at string) []string {
	var out []string
	switch d := v.(type) {
	case map[string]any:
		if _, ok := d["type"].([]any); ok {
			out = append(out, at)
		}
		//workflowcheck:ignore the list is for a check that it is empty; its order is not read
		for k, sub := range d {
			if k != "enum" && k != "const" && k != "default" && k != "examples" {
				out = append(out, typeLists(sub, at+"/"+k)...)
			}
		}
	case []any:
		for _, sub := range d {
			out = append(out, typeLists(sub, at+"/[]")...)
		}
	}
	return out
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// DecodeFields is Decode of the named fields of inputs alone, a field set to null taking its
// default as one left out: a step kind the workflow runs itself reads its settings so, and its
// other inputs (a loop's items, a review's data) keep their values as they are.
func (t Tool[In, Out]) DecodeFields(inputs map[string]any, fields ...string) (In, error) {
	picked := make(map[string]any, len(fields))
	for _, f := range fields {
		if v, ok := inputs[f]; ok && v != nil {
			picked[f] = v
		}
	}
	return t.Decode(picked)
}
