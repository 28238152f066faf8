package workflows

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/toolspec"
)

// TestEveryKindRuns: every kind of step a tool declares has the value that runs it (a kind
// without one would stop the run at its first step).
func TestEveryKindRuns(t *testing.T) {
	declared := map[toolspec.Kind]bool{}
	for _, s := range toolspec.All() {
		require.NotNil(t, stepKinds[s.Kind], "tool %s is of kind %s, which no file of workflows runs (registerKind)", s.Name, s.Kind)
		declared[s.Kind] = true
	}
	require.Len(t, stepKinds, len(declared), "a kind runs that no tool declares")
}
