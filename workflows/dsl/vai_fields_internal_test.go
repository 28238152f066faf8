package dsl

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVaiFieldsAreNotWefts: an entry of vaiFields names a field its weft tool neither takes nor
// renames (an alias keeps the value, so it is the better answer); a field weft comes to take
// must leave the table, or the file would be read as vai's for a field weft honours.
func TestVaiFieldsAreNotWefts(t *testing.T) {
	for spec, fields := range vaiFields {
		for k, hint := range fields {
			require.False(t, slices.Contains(toolFields(spec), k), "%s takes %s", spec.Name, k)
			_, alias := spec.Aliases[k]
			require.False(t, alias, "%s renames %s", spec.Name, k)
			require.NotEmpty(t, hint, "%s.%s says what to write instead", spec.Name, k)
		}
	}
}
