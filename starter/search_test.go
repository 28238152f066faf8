package starter_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/internal/vaipkg/vaipkgtest"
)

// TestSearchCommand: weft search asks the registry npm's settings name (npm_config_registry here)
// over HTTP, lists official packages first with version, tier and the first line of their
// description, keeps other packages out, and says what failed when the registry does.
func TestSearchCommand(t *testing.T) {
	reg := vaipkgtest.NewSearchRegistry(t, 0,
		vaipkgtest.Hit{Name: "vai-workflow-digest", Version: "1.2.0", Description: "Search a collection\nand list the best matches", Keywords: []string{"search"}},
		vaipkgtest.Hit{Name: "@vaicli/vai-workflow-search-plus", Version: "2.0.0", Description: "Hybrid search, reranked"},
		vaipkgtest.Hit{Name: "search-utils", Version: "9.9.9", Description: "vai-workflow search helpers, not a workflow package"},
	)
	t.Setenv("WEFT_NPM_REGISTRY", "")
	t.Setenv("npm_config_registry", reg.URL)

	code, out, errOut := weft(t, "", "search", "search")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, `Workflow packages (@vaicli/*, vai-workflow-*) matching "search" on `+reg.URL+`:
  @vaicli/vai-workflow-search-plus  2.0.0  official   Hybrid search, reranked
  vai-workflow-digest               1.2.0  community  Search a collection
Install one: weft install NAME (weft check NAME after, to see its findings)
`, out)
	require.Equal(t, []string{"scope:vaicli search", "vai-workflow search"}, reg.Texts())

	code, out, _ = weft(t, "", "search", "--json", "--limit", "1")
	require.Equal(t, 0, code)
	var found []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &found))
	require.Len(t, found, 1)
	require.Equal(t, "@vaicli/vai-workflow-search-plus", found[0]["name"])
	require.Equal(t, "official", found[0]["tier"])

	code, out, _ = weft(t, "", "search", "zebra")
	require.Equal(t, 0, code)
	require.Equal(t, `No workflow packages (@vaicli/*, vai-workflow-*) matching "zebra" on `+reg.URL+"\n", out)

	code, _, errOut = weft(t, "", "search", "--limit", "0")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--limit 0: give 1 to 250")

	down := vaipkgtest.NewSearchRegistry(t, http.StatusBadGateway)
	t.Setenv("npm_config_registry", down.URL)
	code, _, errOut = weft(t, "", "search", "x")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "searching "+down.URL+" (WEFT_NPM_REGISTRY or npm_config_registry set another registry)")
	require.Contains(t, errOut, "502 Bad Gateway")
}

// TestCreateCommand: weft create packages a workflow file in vai's layout; weft check and weft
// install read what it made; --from is required and an existing package is not overwritten.
func TestCreateCommand(t *testing.T) {
	packagesEnv(t)
	dir := filepath.Join(t.TempDir(), "pkg")
	code, out, errOut := weft(t, "", "create", "--from", "../testdata/vai/numeric-segments.json", "--output", dir, "--author", "Ana")
	require.Equal(t, 0, code, out+errOut)
	require.Equal(t, "created vai-workflow-numeric-segments in "+dir+": README.md, package.json, workflow.json (category analysis; tools filter, generate, search)\n"+
		"check it: weft check "+dir+"; try it: weft install "+dir+"; publish it, with a LICENSE added: npm publish "+dir+"\n", out)
	code, out, errOut = weft(t, "", "check", dir)
	require.Equal(t, 0, code, out+errOut)
	require.NotContains(t, out, "package.json: warning")
	code, out, errOut = weft(t, "", "install", dir)
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "installed vai-workflow-numeric-segments@1.0.0 (community)")

	code, _, errOut = weft(t, "", "create", "--from", "../testdata/vai/numeric-segments.json", "--output", dir)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "README.md already exists: give another --output, or --force")
	code, _, errOut = weft(t, "", "create", "--output", dir)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--from FILE is required")
}
