package dsl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

// TestSourceCheck: a file that is not a workflow is checked against a schema with a workflow's
// messages, each at its line and column, an unknown field with a did-you-mean (issue 39: weft
// test's fixtures printed Go's decoder text).
func TestSourceCheck(t *testing.T) {
	schema := map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{
		"expect": map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{
			"noErrors": map[string]any{"type": "boolean"},
			"steps":    map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{"status": map[string]any{"type": "string"}}}},
		}},
		"mocks": map[string]any{"type": "object"},
	}}
	for _, tc := range []struct {
		name, file, pointer string
		want                []string
	}{
		{"valid", `{"expect": {"noErrors": true}}`, "", nil},
		{"a wrong type", "{\"expect\":\n  {\"noErrors\": \"yes\"}}", "", []string{"f.json:2:16: expect.noErrors: must be a boolean, not a string"}},
		{"an unknown field, deep", `{"expect": {"steps": {"a": {"stauts": "x"}}}}`, "",
			[]string{`f.json:1:29: expect.steps.a.stauts: unknown field "stauts" (did you mean "status"?)`}},
		{"an unknown field, no near name", `{"expect": {}, "zzz": 1}`, "", []string{`f.json:1:16: zzz: unknown field "zzz" (known fields: expect, mocks)`}},
		{"a list where an object goes", `{"expect": {"steps": []}}`, "", []string{"f.json:1:22: expect.steps: must be an object, not an array"}},
		{"a value inside the file", `{"mocks": {"search": {"noErrors": 1}}}`, "/mocks/search",
			[]string{"f.json:1:35: mocks.search.noErrors: must be a boolean, not a number"}},
		{"a pointer to nothing", `{}`, "/mocks/search", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := dsl.ParseJSON("f.json", []byte(tc.file))
			require.NoError(t, err)
			sch := schema
			if tc.pointer != "" {
				sch = schema["properties"].(map[string]any)["expect"].(map[string]any)
			}
			var got []string
			for _, d := range src.Check(tc.pointer, sch) {
				got = append(got, d.String())
			}
			require.Equal(t, tc.want, got)
		})
	}

	// ParseJSON reports bad JSON as ParseSource does, and bounds no size of its own.
	_, err := dsl.ParseJSON("f.json", []byte(`{"a": 1,}`))
	require.EqualError(t, err, `f.json:1:9: invalid JSON: unexpected character '}' looking for beginning of object key string (remove the trailing comma)`)
	big := make([]byte, dsl.MaxFileSize+10)
	copy(big, `"`)
	for i := 1; i < len(big)-1; i++ {
		big[i] = 'x'
	}
	big[len(big)-1] = '"'
	_, err = dsl.ParseJSON("f.json", big)
	require.NoError(t, err)
}
