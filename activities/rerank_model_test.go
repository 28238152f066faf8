package activities_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
)

// TestRerankModelHonoured: query, code_search and code_query send vai's rerankModel to Voyage's
// reranker (vai's executeQuery and handleCodeSearch/handleCodeQuery do), rerank-2.5 without
// one, and name the model that ranked in their output.
func TestRerankModelHonoured(t *testing.T) {
	root := codeTree(t, threeFiles)
	emptiedAfter(t, "rrm", "repo", "docs")
	cfg := activities.Config{MongoDBURI: storeURI, CodeRoots: []string{root}}
	ingestCorpus(t, cfg, "rrm", "docs")
	_, err := run(t, cfg, "code_index", map[string]any{"path": root, "db": "rrm", "collection": "repo"})
	require.NoError(t, err)

	voy := startFakeVoyage(t, "invoice")
	vcfg := cfg
	vcfg.VoyageAPIKey, vcfg.VoyageBaseURL = "k", voy.url
	vcfg.NoEmbedCache = true
	for _, tc := range []struct {
		name, tool string
		in         map[string]any
		want       string
	}{
		{"query with rerankModel", "query", map[string]any{"collection": "docs", "rerankModel": "rerank-2.5-lite"}, "rerank-2.5-lite"},
		{"query without", "query", map[string]any{"collection": "docs"}, "rerank-2.5"},
		{"code_search with rerankModel", "code_search", map[string]any{"collection": "repo", "rerank": true, "rerankModel": "rerank-2"}, "rerank-2"},
		{"code_search without", "code_search", map[string]any{"collection": "repo", "rerank": true}, "rerank-2.5"},
		{"code_query with rerankModel", "code_query", map[string]any{"collection": "repo", "rerankModel": "rerank-2.5-lite"}, "rerank-2.5-lite"},
		{"code_query without", "code_query", map[string]any{"collection": "repo"}, "rerank-2.5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := map[string]any{"query": "email the monthly invoice", "db": "rrm"}
			for k, v := range tc.in {
				in[k] = v
			}
			res, err := run(t, vcfg, tc.tool, in)
			require.NoError(t, err)
			require.Equal(t, []string{tc.want}, voy.rerankModels())
			out := res.Output.(map[string]any)
			if meta, ok := out["metadata"].(map[string]any); ok {
				out = meta
			}
			require.Equal(t, tc.want, out["rerankModel"])
		})
	}
}
