package dsl_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

const vaiHint = `if it is a vai file, say so with a "$schema" whose URL names vai`

// TestVaiFieldsMarkOnlyThemselves: a file read in vai's dialect only because a tool is given a
// field of vai's tool (http followRedirects) ignores that field, and only that: a typo elsewhere
// (limt, on a step or a loop's nested step) stays an error with its did-you-mean, beside a
// warning saying how a vai file says it is one. With a vai $schema the typo is a warning.
func TestVaiFieldsMarkOnlyThemselves(t *testing.T) {
	http := `{"id":"p","tool":"http","inputs":{"url":"https://example.com","followRedirects":true}}`
	tests := []struct{ name, other, err string }{
		{"a step", `{"id":"s","tool":"search","inputs":{"query":"q","collection":"c","limt":3}}`,
			`steps[1].inputs.limt: unknown field "limt" (did you mean "limit"?)`},
		{"a loop's nested step", `{"id":"l","tool":"loop","inputs":{"items":["a"],"as":"x","step":{"tool":"search","inputs":{"query":"{{ x }}","collection":"c","limt":3}}}}`,
			`steps[1].inputs.step.inputs.limt: unknown field "limt"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := `{"name":"w","steps":[` + http + `,` + tt.other + `]}`
			_, err := dsl.Load("w.json", []byte(file))
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.err)
			require.Contains(t, err.Error(), `warning: steps[0].inputs.followRedirects: unknown field "followRedirects": http does not take it, so it is ignored`)
			require.Contains(t, err.Error(), "read as vai's only because a tool is given a field of vai's tool")
			require.Contains(t, err.Error(), vaiHint)

			marked := strings.Replace(file, `{"name"`, `{"$schema":"https://vai.example/workflow.json","name"`, 1)
			w, err := dsl.Load("w.json", []byte(marked))
			require.NoError(t, err)
			require.Contains(t, w.Warnings.Error(), `unknown field "limt"`)
		})
	}
	// a file with vai's fields and nothing else unknown loads as before
	w, err := dsl.Load("w.json", []byte(`{"name":"w","steps":[`+http+`]}`))
	require.NoError(t, err)
	require.Equal(t, dsl.DialectVai, w.Dialect)
}

// TestBuiltInGoIsWeft: a definition built in Go (FromDefinition, as the MCP gateway builds one
// from a client's arguments) is weft's even with vai's name for an input or a numeric path
// segment: a typo is an error, vai's input name is taken as in any weft file, and a numeric
// segment is an error saying what to write.
func TestBuiltInGoIsWeft(t *testing.T) {
	chunk := func(inputs map[string]any) *dsl.Definition {
		return &dsl.Definition{Name: "mcp-chunk", Steps: []dsl.Step{{ID: "call", Tool: "chunk", Inputs: inputs}}}
	}
	_, err := dsl.FromDefinition(chunk(map[string]any{"text": "abc", "chunk_size": 100, "overlapp": 5}))
	require.ErrorContains(t, err, `steps[0].inputs.overlapp: unknown field "overlapp" (did you mean "overlap"?)`)

	w, err := dsl.FromDefinition(chunk(map[string]any{"text": "abc", "chunk_size": 100}))
	require.NoError(t, err)
	require.Equal(t, dsl.DialectWeft, w.Dialect)
	require.Equal(t, "the definition was built in Go", w.DialectReason)
	s, _ := w.Step("call")
	lit, _ := s.InputValue.Literal()
	require.EqualValues(t, 100, lit.(map[string]any)["chunkSize"])

	def := chunk(map[string]any{"text": "abc"})
	def.Output = "{{ call.output.chunks.0 }}"
	_, err = dsl.FromDefinition(def)
	require.ErrorContains(t, err, "call.output.chunks[0]")
}

// TestAcceptedLoopDropsUnknown: on an accepted run (replay) a loop's nested step drops the
// fields its tool does not take, as a step does, in weft's dialect too: one rule for both.
func TestAcceptedLoopDropsUnknown(t *testing.T) {
	file := `{"$schema":"https://weft.dev/schemas/workflow-v1.json","name":"w","steps":[
		{"id":"h","tool":"http","inputs":{"url":"https://a.example","maxByte":10}},
		{"id":"l","tool":"loop","inputs":{"items":["https://a.example"],"as":"u","step":{"tool":"http","inputs":{"url":"{{ u }}","maxByte":10}}}}]}`
	w, err := dsl.LoadAccepted("w.json", []byte(file))
	require.NoError(t, err)
	h, _ := w.Step("h")
	lit, _ := h.InputValue.Literal()
	require.NotContains(t, lit, "maxByte")
	l, _ := w.Step("l")
	lit, _ = l.Nested().Inputs.Literal()
	require.NotContains(t, lit, "maxByte", "a loop's nested step must not pass the tool a field it does not take")
}

// TestVaiHintOnlyWhenItHelps: the "mark it as vai" warning is given only when a vai $schema
// would make the file valid: not for a file that stays invalid anyway, nor for a field a vai
// $schema does not make ignorable (a handoff agent's).
func TestVaiHintOnlyWhenItHelps(t *testing.T) {
	typo := `{"id":"s","tool":"search","inputs":{"query":"q","collection":"c","limt":3}}`
	_, err := dsl.Load("w.json", []byte(`{"name":"w","steps":[`+typo+`]}`))
	require.ErrorContains(t, err, vaiHint)

	for name, file := range map[string]string{
		"another error": `{"name":"w","steps":[` + typo + `,{"id":"t","tool":"search","dependsOn":["nowhere"],"inputs":{"query":"q","collection":"c"}}]}`,
		"a handoff agent's field": `{"name":"h","steps":[{"id":"a","tool":"agent","inputs":{"prompt":"p","tools":["search"],
			"handoffs":[{"name":"b","description":"d","agent":{"tools":["search"],"promt":"x"}}]}}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := dsl.Load("w.json", []byte(file))
			require.Error(t, err)
			require.NotContains(t, err.Error(), vaiHint)
		})
	}
}
