package dsl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

// TestCodeIndexNeedsPathOrRepo: a code_index step gives path or repo, exactly one, and ref only
// with repo; the input schema cannot say so (neither field is required alone), so validation does.
func TestCodeIndexNeedsPathOrRepo(t *testing.T) {
	for _, tc := range []struct {
		name, inputs, err string
	}{
		{"path", `{"path": "/srv/repos/x"}`, ""},
		{"repo", `{"repo": "https://github.com/o/r"}`, ""},
		{"repo at a ref", `{"repo": "https://github.com/o/r", "ref": "v1"}`, ""},
		{"templated", `{"repo": "{{ inputs.repo }}"}`, ""},
		{"neither", `{"collection": "code"}`, `steps[0].inputs: code_index needs "path" (a directory on the worker) or "repo" (a Git repository's https URL)`},
		{"both", `{"path": "/srv/x", "repo": "https://github.com/o/r"}`, `steps[0].inputs.repo: code_index takes "path" or "repo", not both`},
		{"upper-case scheme", `{"repo": "HTTPS://github.com/o/r"}`, ""},
		{"a private address (the worker's to judge)", `{"repo": "http://169.254.169.254/latest"}`, ""},
		{"an ssh address", `{"repo": "git@github.com:o/r.git"}`, `steps[0].inputs.repo: repo is not an https URL (local paths and scp-style addresses like git@host:owner/repo are refused)`},
		{"an ssh URL", `{"repo": "ssh://git@github.com/o/r.git"}`, `repo scheme ssh is refused: code_index clones over https only`},
		{"a local path", `{"repo": "/srv/git/r.git"}`, `repo is not an https URL`},
		{"credentials", `{"repo": "https://me:token@github.com/o/r"}`, `steps[0].inputs.repo: repo holds credentials`},
		{"a query", `{"repo": "https://github.com/o/r?private_token=x"}`, `steps[0].inputs.repo: repo holds a query or fragment`},
		{"a fragment", `{"repo": "https://github.com/o/r#main"}`, `repo holds a query or fragment`},
		{"an empty fragment", `{"repo": "https://github.com/o/r#"}`, `repo holds a query or fragment`},
		{"not a URL", `{"repo": "https://github.com/o/r%zz"}`, `repo is not a valid URL (invalid URL escape "%zz")`},
		{"ref without repo", `{"path": "/srv/x", "ref": "main"}`, `steps[0].inputs.ref: "ref" is a branch or tag of "repo", and the step gives no repo`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := `{"name": "x", "inputs": {"repo": {"type": "string"}}, "steps": [{"id": "idx", "tool": "code_index", "inputs": ` + tc.inputs + `}]}`
			_, err := dsl.Load("w.json", []byte(file))
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.err)
		})
	}
}
