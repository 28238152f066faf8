package dsl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

// TestTypedOutputReferences: a reference into a step's output is checked against the output its
// tool declares. A field it does not have (search's "resluts"; "data" on a review with forEach,
// whose output is {results, count}) is an error with a did-you-mean, instead of a null that the
// next step's schema (or nothing) reports at run time; what the output does declare, or leaves
// open (a review's data, http's headers, a result's metadata), loads.
func TestTypedOutputReferences(t *testing.T) {
	const search = `{"id":"found","tool":"search","inputs":{"query":"q","collection":"c"}}`
	const review = `{"id":"check","tool":"review","forEach":"{{ found.output.results }}","inputs":{"title":"t","data":"{{ item }}"}}`
	const review1 = `{"id":"one","tool":"review","inputs":{"title":"t","data":{"a":1}}}`
	const page = `{"id":"page","tool":"http","inputs":{"url":"https://example.com"}}`
	file := func(output string) string {
		return `{"name":"w","steps":[` + search + `,` + review + `,` + review1 + `,` + page + `],"output":` + output + `}`
	}
	tests := []struct{ name, output, err string }{
		{"a misspelled field", `"{{ found.output.resluts }}"`,
			`output: {{ found.output.resluts }}: found's output (search) has no field "resluts" (did you mean found.output.results?)`},
		{"an item's field on a forEach's output", `"{{ check.output.data }}"`,
			`output: {{ check.output.data }}: the output of check (forEach: {results, count}) has no field "data" (check has forEach: its output is {results, count}, one result per item; read check.output.results[0].data, or each item's with forEach over check.output.results)`},
		{"a nested misspelling", `"{{ found.output.results[0].scroe }}"`,
			`output: {{ found.output.results[0].scroe }}: found.output.results[0] has no field "scroe" (did you mean found.output.results[0].score?)`},
		{"a field of a list", `"{{ found.output.results.score }}"`,
			`output: {{ found.output.results.score }}: found.output.results is a list, which has no field "score" (index it: found.output.results[0].score, or write found.output.results.length)`},
		{"in a condition", `{"x":"{{ found.output.metadata.resultCont > 0 }}"}`,
			`output.x: {{ found.output.metadata.resultCont }}: found.output.metadata has no field "resultCont" (did you mean found.output.metadata.resultCount?)`},
		{"declared fields", `{"a":"{{ found.output.results[0].score }}","b":"{{ found.output.results.length }}","c":"{{ check.output.results[0].decision }}","d":"{{ check.output.count }}"}`, ""},
		{"open values", `{"a":"{{ one.output.data.a }}","b":"{{ page.output.headers.etag }}","c":"{{ found.output.results[0].metadata.source }}","d":"{{ page.output.body.x.y }}"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := dsl.Load("w.json", []byte(file(tt.output)))
			if tt.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.err)

			// vai's dialect runs it as weft does, with the field null: a warning
			w, err := dsl.LoadVai("w.json", []byte(file(tt.output)), "")
			require.NoError(t, err)
			require.Contains(t, w.Warnings.Error(), ": it resolves to null")
			// an accepted run is not checked again
			_, err = dsl.LoadAccepted("w.json", []byte(file(tt.output)))
			require.NoError(t, err)
		})
	}
}

// TestTypedInputReferences: an input written as one reference whose type is declared (a file
// input, a field of a step's declared output) and that the tool's input does not take is an
// error at validate, where the run refused it with the tool's schema message.
func TestTypedInputReferences(t *testing.T) {
	file := func(inputs string) string {
		return `{"name":"w","inputs":{"n":{"type":"number"},"tags":{"type":"array"}},"steps":[
		  {"id":"found","tool":"search","inputs":{"query":"q","collection":"c"}},
		  {"id":"again","tool":"search","inputs":` + inputs + `}]}`
	}
	for _, tt := range []struct{ name, inputs, err string }{
		{"a list for an integer", `{"query":"q","collection":"c","limit":"{{ found.output.results }}"}`,
			`steps[1].inputs.limit: {{ found.output.results }} is an array, and search's limit takes an integer`},
		{"a number for a string", `{"query":"{{ inputs.n }}","collection":"c"}`,
			`steps[1].inputs.query: {{ inputs.n }} is a number, and search's query takes a string`},
		{"an array input for a string", `{"query":"{{ inputs.tags }}","collection":"c"}`,
			`steps[1].inputs.query: {{ inputs.tags }} is an array, and search's query takes a string`},
		{"a number for an integer", `{"query":"q","collection":"c","limit":"{{ inputs.n }}"}`, ""},
		{"a string for a string", `{"query":"{{ found.output.query }}","collection":"c"}`, ""},
		{"text around a reference", `{"query":"about {{ inputs.tags }}","collection":"c"}`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := dsl.Load("w.json", []byte(file(tt.inputs)))
			if tt.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.err)
		})
	}
}
