package starter_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestValidateCountsInEnglish: weft validate says "1 step" and "1 warning", not "1 steps" or
// "1 warning(s)".
func TestValidateCountsInEnglish(t *testing.T) {
	dir := t.TempDir()
	one := filepath.Join(dir, "one.json")
	require.NoError(t, os.WriteFile(one, []byte(`{"name":"one","steps":[{"id":"a","tool":"template","inputs":{"text":"x"},"concurrency":2}]}`), 0o644))
	code, out, errOut := weft(t, "", "validate", one)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "one.json: valid, 1 step, 1 warning\n")

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"name":"bad","steps":[{"id":"a","tool":"nope"}]}`), 0o644))
	_, out, _ = weft(t, "", "validate", bad)
	require.Contains(t, out, "bad.json: invalid, 1 error, 0 warnings\n")
}

// TestValidateChecksWorkflowCalls: weft validate resolves the workflows a file calls as weft run
// does and refuses what their runs would refuse when they start: an input the called workflow
// does not declare (with its did-you-mean), a literal of the wrong type, a required input left
// out, a workflow that is not there. A call that gives what the workflow declares validates.
func TestValidateChecksWorkflowCalls(t *testing.T) {
	dir := t.TempDir()
	callee := `{"name":"lookup","inputs":{"question":{"type":"string","required":true},"limit":{"type":"number","default":3}},
	  "steps":[{"id":"a","tool":"template","inputs":{"text":"{{ inputs.question }}"}}],"output":"{{ a.output.text }}"}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "lookup.json"), []byte(callee), 0o644))
	caller := func(call string) string {
		f := filepath.Join(dir, "caller.json")
		require.NoError(t, os.WriteFile(f, []byte(`{"name":"caller","inputs":{"q":{"type":"string"}},"steps":[{"id":"sub","tool":"workflow","inputs":`+call+`}]}`), 0o644))
		return f
	}
	for _, tt := range []struct{ name, call, want string }{
		{"a misspelled input", `{"workflow":"lookup","inputs":{"questoin":"x"}}`, `steps[0].inputs.inputs.questoin: workflow "lookup" has no input "questoin" (did you mean "question"?)`},
		{"a wrong type", `{"workflow":"lookup","inputs":{"question":"x","limit":"five"}}`, `steps[0].inputs.inputs.limit: workflow "lookup"'s input "limit": expected number, got string`},
		{"a required input left out", `{"workflow":"lookup","inputs":{"limit":2}}`, `steps[0].inputs.inputs: workflow "lookup" needs input "question" (string), which this step does not give`},
		{"a workflow that is not there", `{"workflow":"lookpu","inputs":{}}`, `calls workflow "lookpu"`},
		{"a call as declared", `{"workflow":"lookup","inputs":{"question":"{{ inputs.q }}","limit":2}}`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := weft(t, "", "validate", caller(tt.call))
			if tt.want == "" {
				require.Equal(t, 0, code, "%s %s", out, errOut)
				return
			}
			require.NotEqual(t, 0, code)
			require.Contains(t, out+errOut, tt.want)
		})
	}
}
