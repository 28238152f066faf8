package dsl

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Value returns the value at pointer in the file (false when there is none).
func (s *Source) Value(pointer string) (any, bool) {
	v := s.Root
	if pointer == "" {
		return v, true
	}
	for _, tok := range strings.Split(pointer[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := v.(type) {
		case map[string]any:
			next, ok := c[tok]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// Check validates the value at pointer against schema, a decoded JSON Schema document (as
// toolspec derives them from Go types), and says what the value does not take as validate says
// it of a workflow file: each finding at its line and column, a wrong type as "must be an array,
// not a string", an unknown field with a did-you-mean among the fields the schema declares there.
// Other files weft reads use it (`weft test`'s fixtures, and their mocks of a tool's output), so
// their messages are a workflow's, never a Go decoder's.
func (s *Source) Check(pointer string, schema any) Diagnostics {
	v, ok := s.Value(pointer)
	if !ok {
		return nil
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return Diagnostics{s.At(pointer, "internal: schema: "+err.Error(), "")}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return Diagnostics{s.At(pointer, "internal: schema: "+err.Error(), "")}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "weft://check.json"
	if err := c.AddResource(url, doc); err != nil {
		return Diagnostics{s.At(pointer, "internal: schema: "+err.Error(), "")}
	}
	sch, err := c.Compile(url)
	if err != nil {
		return Diagnostics{s.At(pointer, "internal: schema: "+err.Error(), "")}
	}
	if err := sch.Validate(v); err != nil {
		known := func(ptr string) []string { return schemaFieldsAt(schema, strings.TrimPrefix(ptr, pointer)) }
		return schemaDiags(s, err, pointer, nil, SeverityError, known).sorted()
	}
	return nil
}

// schemaFieldsAt lists the fields the object schema at pointer (relative to schema's instance)
// declares, sorted: what an unknown field there was likely meant to be.
func schemaFieldsAt(schema any, pointer string) []string {
	sch, _ := schema.(map[string]any)
	if pointer != "" {
		for _, tok := range strings.Split(pointer[1:], "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			props, _ := sch["properties"].(map[string]any)
			switch {
			case props[tok] != nil:
				sch, _ = props[tok].(map[string]any)
			case sch["additionalProperties"] != nil:
				sch, _ = sch["additionalProperties"].(map[string]any)
			case sch["items"] != nil:
				sch, _ = sch["items"].(map[string]any)
			default:
				return nil
			}
		}
	}
	props, _ := sch["properties"].(map[string]any)
	return sortedKeys(props)
}
