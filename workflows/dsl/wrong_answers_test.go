package dsl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

// TestUnknownInputKeyWithTemplateValue: an unknown tool input is refused whatever its value; a
// templated value used to make validate skip it (issue 21, item 1).
func TestUnknownInputKeyWithTemplateValue(t *testing.T) {
	tests := []struct{ name, step, msg string }{
		{"llm, templated value", `{"id":"ask","tool":"llm","inputs":{"promt":"{{ inputs.q }}"}}`, `steps[0].inputs.promt: unknown field "promt" (did you mean "prompt"?)`},
		{"llm, literal value", `{"id":"ask","tool":"llm","inputs":{"promt":"hi"}}`, `unknown field "promt" (did you mean "prompt"?)`},
		{"search, templated object", `{"id":"s","tool":"search","inputs":{"query":"x","fitler":{"a":"{{ inputs.q }}"}}}`, `unknown field "fitler"`},
		{"loop step, templated value", `{"id":"l","tool":"loop","inputs":{"items":["a"],"step":{"tool":"generate","inputs":{"promt":"{{ item }}"}}}}`, `unknown field "promt"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := `{"name":"x","inputs":{"q":{"type":"string"}},"steps":[` + tt.step + `]}`
			_, err := dsl.Load("w.json", []byte(file))
			require.ErrorContains(t, err, tt.msg)
		})
	}
	// A known key with a templated value is still checked at run time, not now.
	_, err := dsl.Load("w.json", []byte(`{"name":"x","inputs":{"q":{"type":"string"}},"steps":[{"id":"ask","tool":"llm","inputs":{"prompt":"{{ inputs.q }}"}}]}`))
	require.NoError(t, err)
}

// TestInvalidUTF8IsRefused: a byte that is not UTF-8 is refused at validate time with its position,
// not at run time with a protobuf error (issue 21, item 10).
func TestInvalidUTF8IsRefused(t *testing.T) {
	tests := []struct{ name, data, msg string }{
		{"Latin-1 in a string", "{\"name\":\"x\",\n \"steps\":[{\"id\":\"a\",\"tool\":\"template\",\"inputs\":{\"text\":\"caf\xE9\"}}]}",
			"w.json:2:60: invalid UTF-8: byte 0xE9 does not start a UTF-8 character (save the file as UTF-8"},
		{"truncated sequence", "{\"name\":\"x\xE2\x82\",\"steps\":[]}", "w.json:1:11: invalid UTF-8"},
		{"UTF-16", "\xFF\xFE{\x00}\x00", "the file is UTF-16: save it as UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := dsl.Load("w.json", []byte(tt.data))
			require.ErrorContains(t, err, tt.msg)
		})
	}
	w, err := dsl.Load("w.json", []byte(`{"name":"x","steps":[{"id":"a","tool":"template","inputs":{"text":"café ✓"}}]}`))
	require.NoError(t, err, "valid UTF-8 passes")
	require.Equal(t, "x", w.Def.Name)
}
