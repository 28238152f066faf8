package toolspec_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/toolspec"
)

// compileDoc compiles a schema document (draft 2020-12).
func compileDoc(t *testing.T, doc any) *jsonschema.Schema {
	t.Helper()
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	d, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	require.NoError(t, c.AddResource("weft://test.json", d))
	s, err := c.Compile("weft://test.json")
	require.NoError(t, err)
	return s
}

// TestPortable: a type list becomes an anyOf that takes the same values, each type's keywords in
// its branch.
func TestPortable(t *testing.T) {
	cases := []struct {
		name, schema, want string
		values             []string // checked to be taken, or refused, alike
	}{
		{"two types, a keyword each", `{"type":["string","number"],"pattern":"^[0-9]+s$","minimum":1,"description":"d"}`,
			`{"anyOf":[{"pattern":"^[0-9]+s$","type":"string"},{"minimum":1,"type":"number"}],"description":"d"}`,
			[]string{`"30s"`, `"x"`, `5`, `0`, `true`, `null`}},
		{"nullable list", `{"type":["null","array"],"items":{"type":"integer"}}`,
			`{"anyOf":[{"items":{"type":"integer"},"type":"array"},{"type":"null"}]}`,
			[]string{`null`, `[1]`, `["a"]`, `{}`}},
		{"nested, beside an enum", `{"type":"object","properties":{"a":{"type":["array","object"],"minItems":1,"enum":[[1],{"k":1}]}}}`,
			`{"properties":{"a":{"anyOf":[{"minItems":1,"type":"array"},{"type":"object"}],"enum":[[1],{"k":1}]}},"type":"object"}`,
			[]string{`{"a":[1]}`, `{"a":[]}`, `{"a":{"k":1}}`, `{"a":"x"}`}},
		{"a list of one", `{"type":["string"]}`, `{"type":"string"}`, []string{`"x"`, `1`}},
		{"no list: unchanged", `{"type":"string","minLength":1}`, `{"minLength":1,"type":"string"}`, []string{`""`, `"x"`}},
		{"its own anyOf too", `{"type":["string","integer"],"anyOf":[{"minLength":2},{"minimum":3}]}`,
			`{"allOf":[{"anyOf":[{"minLength":2},{"minimum":3}]},{"anyOf":[{"type":"string"},{"type":"integer"}]}]}`,
			[]string{`"ab"`, `"a"`, `3`, `1`, `true`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var doc any
			require.NoError(t, json.Unmarshal([]byte(c.schema), &doc))
			got := toolspec.Portable(doc)
			b, err := json.Marshal(got)
			require.NoError(t, err)
			require.JSONEq(t, c.want, string(b))
			require.Empty(t, toolspec.TypeLists(got))
			before, after := compileDoc(t, doc), compileDoc(t, got)
			for _, v := range c.values {
				inst, err := jsonschema.UnmarshalJSON(strings.NewReader(v))
				require.NoError(t, err)
				require.Equal(t, before.Validate(inst) == nil, after.Validate(inst) == nil, "%s is taken by one form and not the other", v)
			}
		})
	}
}

// TestPortableSchemasOfMCPTools: what the MCP gateway publishes of each tool it offers (input and
// output, Portable) has no type list, and compiles.
func TestPortableSchemasOfMCPTools(t *testing.T) {
	n := 0
	for _, s := range toolspec.All() {
		if !s.MCP {
			continue
		}
		n++
		var in any
		require.NoError(t, json.Unmarshal([]byte(s.InputJSON()), &in), s.Name)
		for what, doc := range map[string]any{"input": in, "output": s.OutputSchema()} {
			require.NotNil(t, doc, "%s declares its %s", s.Name, what)
			p := toolspec.Portable(doc)
			require.Empty(t, toolspec.TypeLists(p), "%s's %s schema", s.Name, what)
			compileDoc(t, p)
		}
	}
	require.Equal(t, 15, n, "the tools the gateway offers")
}
