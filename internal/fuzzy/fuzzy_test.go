package fuzzy

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"query", "query", 0}, {"qurey", "query", 1}, {"promt", "prompt", 1},
		{"colection", "collection", 1}, {"kitten", "sitting", 3}, {"", "abc", 3}, {"été", "ete", 2},
	} {
		require.Equal(t, tc.want, Distance(tc.a, tc.b), "%s → %s", tc.a, tc.b)
	}
}

func TestNearest(t *testing.T) {
	cands := []string{"prompt", "model", "query", "collection", "Limit"}
	for _, tc := range []struct{ s, want string }{
		{"promt", "prompt"}, {"qurey", "query"}, {"colection", "collection"}, {"limit", "Limit"},
		{"query", ""}, {"banana", ""}, {"x", ""}, {"mdl", ""},
	} {
		require.Equal(t, tc.want, Nearest(tc.s, cands), tc.s)
	}
	require.Equal(t, "", Nearest("a", nil))
}
