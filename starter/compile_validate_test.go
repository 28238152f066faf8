package starter_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

// TestCompileRefusesWhatValidateRefuses: a definition built in Go (the README's "Go: build a
// workflow and run it") is refused by Builder.Compile exactly when `weft validate` refuses its
// workflow file (Builder.ToJSON), and the validate output carries Compile's message.
func TestCompileRefusesWhatValidateRefuses(t *testing.T) {
	research := func() *dsl.Builder {
		return dsl.New("Research").Input("question", "string", dsl.Required()).
			Step("research", "query", dsl.In{"query": "{{ inputs.question }}", "collection": "docs", "limit": 10})
	}
	for _, tc := range []struct {
		name  string
		b     *dsl.Builder
		valid bool
		says  string
	}{
		{"the README's workflow", research().
			Step("summary", "generate", dsl.In{"prompt": "Summarize", "context": "{{ research.output.results }}"}).
			Output(dsl.In{"summary": "{{ summary.output.text }}"}), true, ""},
		{"an unknown tool", research().Step("summary", "summarise", dsl.In{"prompt": "x"}), false, "summarise"},
		{"a reference to no step", research().Step("summary", "generate", dsl.In{"prompt": "{{ reserch.output }}"}), false, "reserch"},
		{"an undeclared input", research().Step("summary", "generate", dsl.In{"prompt": "{{ inputs.topic }}"}), false, "topic"},
		{"a field the tool does not take", research().Step("summary", "generate", dsl.In{"prompt": "x", "temprature": 0.2}), false, "temprature"},
		{"a duplicate step id", research().Step("research", "generate", dsl.In{"prompt": "x"}), false, "research"},
		{"an output that reads no step", research().Output(dsl.In{"summary": "{{ summary.output.text }}"}), false, "summary"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, cerr := tc.b.Compile()
			data, err := tc.b.ToJSON()
			require.NoError(t, err)
			file := filepath.Join(t.TempDir(), "research.json")
			require.NoError(t, os.WriteFile(file, data, 0o644))
			code, out, errOut := weft(t, "", "validate", file)
			if tc.valid {
				require.NoError(t, cerr)
				require.Equal(t, 0, code, out+errOut)
				return
			}
			require.Error(t, cerr, "Compile accepts what validate refuses:\n%s", out)
			require.Equal(t, 2, code, "validate accepts what Compile refuses: %v", cerr)
			require.Contains(t, cerr.Error(), tc.says)
			require.Contains(t, out, tc.says)
			var ds dsl.Diagnostics
			require.True(t, errors.As(cerr, &ds), "Compile's error is a list of diagnostics: %v", cerr)
			for _, d := range ds.Errors() {
				require.Contains(t, out, d.Message, "validate says what Compile says")
			}
		})
	}
}
