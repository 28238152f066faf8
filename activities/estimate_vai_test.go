package activities_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
)

// TestEstimateDocsDefault: estimate's docs is optional with vai's default (executeEstimate:
// inputs.docs || 1000), so a vai file that gives only queries or a model runs.
func TestEstimateDocsDefault(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   map[string]any
		docs float64
	}{
		{"no inputs", map[string]any{}, 1000},
		{"a model only", map[string]any{"model": "voyage-4-lite"}, 1000},
		{"queries only", map[string]any{"queries": 500}, 1000},
		{"docs given", map[string]any{"docs": 20}, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := run(t, activities.Config{}, "estimate", tc.in)
			require.NoError(t, err)
			require.Equal(t, tc.docs, res.Output.(map[string]any)["docs"])
		})
	}
}
