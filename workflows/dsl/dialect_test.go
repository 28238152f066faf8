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
		{"only vai's http field", `{"name":"w","steps":[{"id":"p","tool":"http","inputs":{"url":"https://example.com","followRedirects":true}}]}`, dsl.DialectVai},
		{"only vai's rerank field, in a loop's step", `{"name":"w","steps":[{"id":"l","tool":"loop","inputs":{"items":["a"],"as":"x","step":{"tool":"rerank","inputs":{"query":"{{ x }}","documents":["d"],"topK":1}}}}]}`, dsl.DialectVai},
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
		{"id":"page","tool":"http","inputs":{"url":"{{ inputs.u }}","followRedirects":true,"maxByte":10}},
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
	require.Contains(t, all, `steps[0].inputs.followRedirects: unknown field "followRedirects"`)
	require.Contains(t, all, `steps[1].inputs.topK: unknown field "topK": rerank does not take it`)
	page, _ := w.Step("page")
	require.NotContains(t, page.Inputs, "followRedirects", "an ignored field must never reach the tool")
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
	require.Contains(t, err.Error(), `steps[0].inputs.followRedirects: unknown field "followRedirects"`)
	require.Contains(t, err.Error(), `steps[1].inputs.topK: unknown field "topK"`)
	require.Contains(t, err.Error(), `write an index in brackets: r.output.results[0].content`)
}

// TestVaiFieldsOnly: a file whose only vai trait is a field vai's tool takes (http followRedirects,
// rerank topK) runs in vai's dialect, the field a warning; a file that something marks as weft's
// stays strict, and so does an unmarked file with a field neither weft's nor vai's tool takes.
func TestVaiFieldsOnly(t *testing.T) {
	http := func(extra string) string {
		return `{"name":"w","steps":[{"id":"p","tool":"http"` + extra + `,"inputs":{"url":"https://example.com","followRedirects":true}}]}`
	}
	tests := []struct {
		name, file, data string
		err              string // "" when it loads, with warn among its warnings
		warn             string
	}{
		{"vai's field", "w.json", http(""), "",
			`steps[0].inputs.followRedirects: unknown field "followRedirects": http does not take it, so it is ignored (remove it: weft's http follows up to 5 redirects whatever it says (vai follows none unless it is true))`},
		{"weft's $schema", "w.json", strings.Replace(http(""), `{"name"`, `{"$schema":"https://weft.dev/schemas/workflow-v1.json","name"`, 1),
			`steps[0].inputs.followRedirects: unknown field "followRedirects"`, ""},
		{"a .weft.json name", "w.weft.json", http(""), `steps[0].inputs.followRedirects: unknown field "followRedirects"`, ""},
		{"a duration as text", "w.json", http(`,"timeout":"30s"`), `steps[0].inputs.followRedirects: unknown field "followRedirects"`, ""},
		{"a typo is no vai field", "w.json", strings.Replace(http(""), "followRedirects", "maxByte", 1),
			`steps[0].inputs.maxByte: unknown field "maxByte" (did you mean "maxBytes"?)`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := dsl.Load(tt.file, []byte(tt.data))
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, dsl.DialectVai, w.Dialect)
			require.Equal(t, "steps[0].inputs.followRedirects is a field of vai's http tool", w.DialectReason)
			require.Contains(t, w.Warnings.Error(), tt.warn)
		})
	}
	// an unmarked file refused for an unknown field says how a vai file says it is one; a file
	// marked as weft's does not
	const vaiHint = `warning: nothing marks this file as weft's or vai's, so it is read as weft's, where an input field a tool does not take is an error (if it is a vai file, say so with a "$schema" whose URL names vai`
	_, err := dsl.Load("w.json", []byte(strings.Replace(http(""), "followRedirects", "maxByte", 1)))
	require.ErrorContains(t, err, vaiHint)
	_, err = dsl.Load("w.weft.json", []byte(http("")))
	require.Error(t, err)
	require.NotContains(t, err.Error(), "nothing marks this file")

	// a definition built in Go is weft's
	_, err = dsl.FromDefinition(&dsl.Definition{Name: "w", Steps: []dsl.Step{{ID: "p", Tool: "http",
		Inputs: map[string]any{"url": "https://example.com", "followRedirects": true}}}})
	require.ErrorContains(t, err, `unknown field "followRedirects"`)
}

// TestVaiLoopNestedFields: in vai's dialect a loop's nested step gets the same leniency as a
// step: a field its tool does not take is a warning with a did-you-mean, and never reaches the
// tool; in weft's format it stays an error.
func TestVaiLoopNestedFields(t *testing.T) {
	file := `{"name":"w","branding":{"icon":"x"},"steps":[
		{"id":"l","tool":"loop","inputs":{"items":["https://a.example"],"as":"u","step":{"tool":"http","inputs":{"url":"{{ u }}","maxByte":10,"followRedirects":true}}}}]}`
	w, err := dsl.Load("w.json", []byte(file))
	require.NoError(t, err)
	all := w.Warnings.Error()
	require.Contains(t, all, `steps[0].inputs.step.inputs.maxByte: unknown field "maxByte": http does not take it, so it is ignored (as vai ignores it) (did you mean "maxBytes"?)`)
	require.Contains(t, all, `steps[0].inputs.step.inputs.followRedirects: unknown field "followRedirects"`)
	l, _ := w.Step("l")
	lit, _ := l.Nested().Inputs.Literal()
	require.NotContains(t, lit, "maxByte", "an ignored field must never reach the tool")
	require.NotContains(t, lit, "followRedirects")

	acc, err := dsl.LoadAccepted("w.json", []byte(file))
	require.NoError(t, err)
	l, _ = acc.Step("l")
	lit, _ = l.Nested().Inputs.Literal()
	require.NotContains(t, lit, "maxByte")

	strict := strings.Replace(file, `"branding":{"icon":"x"}`, `"$schema":"https://weft.dev/schemas/workflow-v1.json"`, 1)
	_, err = dsl.Load("w.json", []byte(strict))
	require.ErrorContains(t, err, `steps[0].inputs.step.inputs.maxByte: unknown field "maxByte"`)
}

// TestVaiLoopNestedAliases: vai's names for a tool's inputs in a loop's nested step mark the file
// as vai's and become the tool's own names, as on a step of its own.
func TestVaiLoopNestedAliases(t *testing.T) {
	file := `{"name":"w","steps":[
		{"id":"l","tool":"loop","inputs":{"items":["a b c"],"as":"t","step":{"tool":"chunk","inputs":{"text":"{{ t }}","chunk_size":200,"size":100}}}}]}`
	w, err := dsl.Load("w.json", []byte(file))
	require.NoError(t, err)
	require.Equal(t, dsl.DialectVai, w.Dialect)
	require.Equal(t, "steps[0].inputs.step.inputs uses vai's name chunk_size", w.DialectReason)
	require.Contains(t, w.Warnings.Error(), "steps[0].inputs.step.inputs.size: size is another name for chunkSize, which is set too: size is ignored")
	l, _ := w.Step("l")
	v, _ := l.Nested().Inputs.Literal()
	lit, _ := v.(map[string]any)
	require.Equal(t, float64(200), lit["chunkSize"])
	require.NotContains(t, lit, "chunk_size")
	require.NotContains(t, lit, "size")
}
