package starter

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

// TestAskMissingInputs: at a terminal, weft run asks for each required input without a default
// that the flags do not give, in name order, and the answers become --input flags; given, defaulted
// and optional inputs are not asked for, and an empty answer leaves the input missing.
func TestAskMissingInputs(t *testing.T) {
	w, err := dsl.Load("ask", []byte(`{"name":"ask","inputs":{
	  "topic":{"type":"string","required":true,"description":"what to research"},
	  "audience":{"type":"string","required":true},
	  "given":{"type":"string","required":true},
	  "depth":{"type":"number","required":true,"default":2},
	  "note":{"type":"string"}},
	  "steps":[{"id":"t","tool":"template","inputs":{"text":"{{ inputs.topic }} {{ inputs.audience }} {{ inputs.given }} {{ inputs.depth }} {{ inputs.note }}"}}]}`))
	require.NoError(t, err)
	tests := []struct {
		name, stdin string
		want        []string
		prompts     []string
	}{
		{"both answered", "kids\ntides\n", []string{"given=x", "audience=kids", "topic=tides"}, []string{"audience (string): ", "topic (string, what to research): "}},
		{"empty answer left missing", "\ntides\n", []string{"given=x", "topic=tides"}, []string{"audience (string): ", "topic (string, what to research): "}},
		{"input ends early", "kids", []string{"given=x", "audience=kids"}, []string{"audience (string): "}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := &runOptions{runFlags: runFlags{inputs: []string{"given=x"}}}
			var errOut bytes.Buffer
			require.NoError(t, o.askMissing(strings.NewReader(tc.stdin), &errOut, w))
			require.Equal(t, tc.want, o.inputs)
			for _, p := range tc.prompts {
				require.Contains(t, errOut.String(), p)
			}
			require.NotContains(t, errOut.String(), "depth", "an input with a default is not asked for")
			require.NotContains(t, errOut.String(), "note", "an optional input is not asked for")
			require.NotContains(t, errOut.String(), "given (", "a given input is not asked for")
		})
	}
}
