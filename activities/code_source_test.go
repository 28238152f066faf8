package activities_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
)

// TestCodeIndexVaiSource: code_index takes vai's source, a directory or a GitHub repository
// (vai's isGitHubUrl: a URL with github.com in it, or owner/repo), as path or repo; vai's
// branch, which it ignores for a directory, is ignored there too.
func TestCodeIndexVaiSource(t *testing.T) {
	root := codeTree(t, threeFiles)
	emptiedAfter(t, "codesrc", "repo")
	cfg := activities.Config{MongoDBURI: storeURI, CodeRoots: []string{root}}
	for _, tc := range []struct {
		name string
		in   map[string]any
		err  string // "": indexes root
	}{
		{"a directory", map[string]any{"source": root}, ""},
		{"a directory with vai's branch", map[string]any{"source": root, "ref": "main"}, ""},
		{"a GitHub URL is a repo", map[string]any{"source": "https://github.com/o/r"}, "WEFT_CODE_GIT_HOSTS"},
		{"github.com without a scheme", map[string]any{"source": "github.com/o/r"}, "WEFT_CODE_GIT_HOSTS"},
		{"owner/repo", map[string]any{"source": "o/r"}, "WEFT_CODE_GIT_HOSTS"},
		{"another https URL is a repo", map[string]any{"source": "https://git.example.com/o/r.git"}, "WEFT_CODE_GIT_HOSTS"},
		{"source and path", map[string]any{"source": root, "path": root}, "not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := map[string]any{"db": "codesrc", "collection": "repo"}
			for k, v := range tc.in {
				in[k] = v
			}
			res, err := run(t, cfg, "code_index", in)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			out := res.Output.(map[string]any)
			require.Equal(t, root, out["path"])
			require.Equal(t, float64(3), out["files"])
		})
	}
}
