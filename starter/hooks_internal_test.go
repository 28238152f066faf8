package starter

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseHooks: --hook NAME=WORKFLOW binds a name to a workflow with WEFT_HOOK_SECRET; a
// malformed, repeated or secretless binding is refused saying what to write.
func TestParseHooks(t *testing.T) {
	for _, c := range []struct {
		name    string
		flags   []string
		secret  string
		want    string
		workflw string
	}{
		{"bound", []string{"deploy=release-notes"}, "s", "", "release-notes"},
		{"no equals", []string{"deploy"}, "s", "write NAME=WORKFLOW", ""},
		{"empty workflow", []string{"deploy="}, "s", "write NAME=WORKFLOW", ""},
		{"twice", []string{"deploy=a", "deploy=b"}, "s", "bound twice", ""},
		{"no secret", []string{"deploy=a"}, "", "WEFT_HOOK_SECRET", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			hooks, err := parseHooks(c.flags, c.secret)
			if c.want != "" {
				require.ErrorContains(t, err, c.want)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.workflw, hooks["deploy"].Workflow)
			require.Equal(t, c.secret, hooks["deploy"].Secret)
		})
	}
}
