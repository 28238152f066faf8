package wfpkg

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPickVersionPrereleases: a range takes a pre-release only as npm does, when the part of the
// range it satisfies names a pre-release of the same major.minor.patch.
func TestPickVersionPrereleases(t *testing.T) {
	p := packument{DistTags: map[string]string{"latest": "2.0.0"}, Versions: map[string]json.RawMessage{}}
	for _, v := range []string{"1.2.0-beta.1", "1.2.0-beta.2", "1.2.0", "1.2.5", "1.3.0-alpha.1", "2.0.0", "2.1.0-rc.1"} {
		p.Versions[v] = json.RawMessage(`{}`)
	}
	tests := []struct{ rng, want string }{
		{"^1.2.0-beta.1", "1.2.5"},
		{">=1.2.0-beta.1 <2", "1.2.5"},
		{"~1.2.0-beta.1", "1.2.5"},
		{">=1.2.0-beta.1 <1.2.0", "1.2.0-beta.2"},
		{"1.2.0-beta.1 - 1.2.0-beta.2", "1.2.0-beta.2"},
		{"^1.3.0-alpha.1", "1.3.0-alpha.1"},
		{"<1.2.0-beta.1 || ^1.3.0-alpha.0", "1.3.0-alpha.1"},
		{"^1.0.0", "1.2.5"},
		{">=1.2.6 <2.1.0", "2.0.0"},
		{"^2.1.0-rc.0", "2.1.0-rc.1"},
	}
	for _, tt := range tests {
		got, err := pickVersion(p, tt.rng)
		require.NoError(t, err, tt.rng)
		require.Equal(t, tt.want, got, tt.rng)
	}
	_, err := pickVersion(p, "^1.4.0-beta.1 <1.4.0")
	require.ErrorContains(t, err, "no version satisfies")
}
