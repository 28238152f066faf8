package dsl_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

func TestDetectDialect(t *testing.T) {
	step := `{"id":"s","tool":"search","inputs":{"query":"q","collection":"c"}}`
	tests := []struct {
		name, file string
		want       dsl.Dialect
	}{
		{"plain file", `{"name":"w","steps":[` + step + `]}`, dsl.DialectWeft},
		{"weft's $schema", `{"$schema":"https://weft.dev/schemas/workflow-v1.json","name":"w","branding":{"icon":"x"},"steps":[` + step + `]}`, dsl.DialectWeft},
		{"vai's $schema", `{"$schema":"https://vai.example/workflow.json","name":"w","steps":[` + step + `]}`, dsl.DialectVai},
		{"branding", `{"name":"w","branding":{"icon":"x"},"steps":[` + step + `]}`, dsl.DialectVai},
		{"milliseconds", `{"name":"w","steps":[{"id":"s","tool":"search","timeout":5000,"inputs":{"query":"q","collection":"c"}}]}`, dsl.DialectVai},
		{"vai's input name", `{"name":"w","steps":[{"id":"c","tool":"chunk","inputs":{"text":"t","chunk_size":200}}]}`, dsl.DialectVai},
		{"numeric segment", `{"name":"w","steps":[` + step + `],"output":"{{ s.output.results.0.content }}"}`, dsl.DialectVai},
		{"a number in text is no segment", `{"name":"w","steps":[` + step + `],"output":"version v1.2 of {{ s.output.results[0].content }}"}`, dsl.DialectWeft},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := dsl.Load("w.json", []byte(tt.file))
			require.NoError(t, err)
			require.Equal(t, tt.want, w.Dialect, w.DialectReason)
		})
	}
}

// TestVaiDialectLeniency: in vai's dialect an input a tool does not take is a warning with a
// did-you-mean and never reaches the tool, and results.0 reads the first result; in weft's own
// format both stay errors.
func TestVaiDialectLeniency(t *testing.T) {
	lenient := `{"name":"w","branding":{"icon":"x"},"inputs":{"u":{"type":"string"}},"steps":[
		{"id":"page","tool":"http","inputs":{"url":"{{ inputs.u }}","responseType":"json","maxByte":10}},
		{"id":"r","tool":"rerank","condition":"page.output.body.items.0 != null","inputs":{"query":"q","documents":"{{ page.output.body.items }}","topK":2}}],
		"output":"{{ r.output.results.0.content }}"}`
	w, err := dsl.Load("w.json", []byte(lenient))
	require.NoError(t, err)
	var warnings []string
	for _, d := range w.Warnings {
		warnings = append(warnings, d.String())
	}
	all := strings.Join(warnings, "\n")
	require.Contains(t, all, `steps[0].inputs.maxByte: unknown field "maxByte": http does not take it, so it is ignored (as vai ignores it) (did you mean "maxBytes"?)`)
	require.Contains(t, all, `steps[0].inputs.responseType: unknown field "responseType"`)
	require.Contains(t, all, `steps[1].inputs.topK: unknown field "topK": rerank does not take it`)
	page, _ := w.Step("page")
	require.NotContains(t, page.Inputs, "responseType", "an ignored field must never reach the tool")
	lit, _ := page.InputValue.Literal()
	require.NotContains(t, lit, "maxByte")
	r, _ := w.Step("r")
	ok, err := r.Condition.EvalBool(map[string]any{"page": map[string]any{"output": map[string]any{"body": map[string]any{"items": []any{"a"}}}}})
	require.NoError(t, err)
	require.True(t, ok)
	out, err := w.Output.Resolve(map[string]any{"r": map[string]any{"output": map[string]any{"results": []any{map[string]any{"content": "first"}}}}})
	require.NoError(t, err)
	require.Equal(t, "first", out)

	// the worker compiles the accepted text the same way
	acc, err := dsl.LoadAccepted("w.json", []byte(lenient))
	require.NoError(t, err)
	accR, _ := acc.Step("r")
	require.NotContains(t, accR.Inputs, "topK")

	strict := strings.Replace(lenient, `"branding":{"icon":"x"}`, `"$schema":"https://weft.dev/schemas/workflow-v1.json"`, 1)
	_, err = dsl.Load("w.json", []byte(strict))
	require.Error(t, err)
	require.Contains(t, err.Error(), `steps[0].inputs.responseType: unknown field "responseType"`)
	require.Contains(t, err.Error(), `steps[1].inputs.topK: unknown field "topK"`)
	require.Contains(t, err.Error(), `write an index in brackets: r.output.results[0].content`)
}
