package vaipkg_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/internal/vaipkg"
	"github.com/weftworks/weft/internal/vaipkg/vaipkgtest"
)

// searchHits are what the fake registry holds: official and community workflow packages, a
// package that is no workflow package, and one whose description would drive a terminal.
var searchHits = []vaipkgtest.Hit{
	{Name: "vai-workflow-digest", Version: "1.2.0", Description: "Search a collection and list the best matches", Keywords: []string{"vai-workflow", "search"}},
	{Name: "@vaicli/vai-workflow-code-review", Version: "2.0.0", Description: "Review code with citations", Keywords: []string{"vai-workflow", "code"}},
	{Name: "vai-workflow-legal", Version: "0.3.1", Description: "Legal research\x1b[2J\x1b]0;pwned\x07 over case law", Keywords: []string{"vai-workflow", "search"}},
	{Name: "left-pad-vai-workflow", Version: "1.0.0", Description: "not a workflow package, though its text says vai-workflow search"},
	{Name: "@other/vai-workflow-notes", Version: "1.0.0", Description: "A community package under another scope", Keywords: []string{"vai-workflow"}},
}

func TestSearch(t *testing.T) {
	tests := []struct {
		name, query string
		limit       int
		want        []string // name@version (tier), in order
		texts       []string // what the registry was asked
	}{
		{name: "everything", want: []string{"@vaicli/vai-workflow-code-review@2.0.0 (official)", "vai-workflow-digest@1.2.0 (community)",
			"vai-workflow-legal@0.3.1 (community)", "@other/vai-workflow-notes@1.0.0 (community)"},
			texts: []string{"scope:vaicli", "vai-workflow"}},
		{name: "a query", query: "  search ", want: []string{"vai-workflow-digest@1.2.0 (community)", "vai-workflow-legal@0.3.1 (community)"},
			texts: []string{"scope:vaicli search", "vai-workflow search"}},
		{name: "official match", query: "code", want: []string{"@vaicli/vai-workflow-code-review@2.0.0 (official)"},
			texts: []string{"scope:vaicli code", "vai-workflow code"}},
		{name: "a limit", limit: 2, want: []string{"@vaicli/vai-workflow-code-review@2.0.0 (official)", "vai-workflow-digest@1.2.0 (community)"},
			texts: []string{"scope:vaicli", "vai-workflow"}},
		{name: "nothing found", query: "zebra", texts: []string{"scope:vaicli zebra", "vai-workflow zebra"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := vaipkgtest.NewSearchRegistry(t, 0, searchHits...)
			got, err := vaipkg.Registry{URL: reg.URL + "/"}.Search(context.Background(), tc.query, tc.limit)
			require.NoError(t, err)
			var names []string
			for _, r := range got {
				names = append(names, r.Name+"@"+r.Version+" ("+r.Tier+")")
				require.NotContains(t, r.Description, "\x1b", "a package's text is cleaned")
				require.Equal(t, "ana", r.Publisher)
			}
			require.Equal(t, tc.want, names)
			require.Equal(t, tc.texts, reg.Texts())
		})
	}

	reg := vaipkgtest.NewSearchRegistry(t, http.StatusServiceUnavailable)
	_, err := vaipkg.Registry{URL: reg.URL}.Search(context.Background(), "x", 0)
	require.ErrorContains(t, err, "searching "+reg.URL+" (WEFT_NPM_REGISTRY or npm_config_registry set another registry)")
	require.ErrorContains(t, err, "503 Service Unavailable")
}
