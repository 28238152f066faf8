package activities

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/mongostore"
	"github.com/weftworks/weft/activities/rank"
)

// TestHybridIsTheSameOnBothSearchPaths: $vectorSearch reports (1+cosine)/2 where the exact search
// reports the cosine; the hybrid ranking reads both as the cosine, so an Atlas search and the
// exact one rank and score the same hits the same way.
func TestHybridIsTheSameOnBothSearchPaths(t *testing.T) {
	cosines := []float64{0.62, 0.41, 0.40, -0.05}
	hits := func(path string) []mongostore.Hit {
		texts := []string{"Sign in with your password to get a session token.", "Invoices are sent monthly.",
			"The API allows 300 requests per minute; over the limit you get HTTP 429.", "Deployments roll out gradually."}
		sources := []string{"auth.md", "billing.md", "api/rate-limits.md", "deploy.md"}
		out := make([]mongostore.Hit, len(texts))
		for i := range texts {
			score := cosines[i]
			if path == mongostore.PathVectorSearch {
				score = (1 + score) / 2
			}
			out[i] = mongostore.Hit{Source: sources[i], Content: texts[i], Score: score}
		}
		return out
	}
	exact, err := hybrid("what is the rate limit", hits(mongostore.PathExact), mongostore.PathExact)
	require.NoError(t, err)
	vs, err := hybrid("what is the rate limit", hits(mongostore.PathVectorSearch), mongostore.PathVectorSearch)
	require.NoError(t, err)
	require.Len(t, vs, len(exact))
	for i := range exact {
		e, v := exact[i], vs[i]
		require.Equal(t, e.Source, v.Source, "rank %d", i+1)
		require.InDelta(t, e.Score, v.Score, 1e-9, "score at rank %d", i+1)
		require.InDelta(t, e.Similarity, v.Similarity, 1e-9, "similarity at rank %d", i+1)
		require.InDelta(t, e.KeywordScore, v.KeywordScore, 1e-9, "keywordScore at rank %d", i+1)
	}
	require.Equal(t, "api/rate-limits.md", exact[0].Source, "keywords and the source name lift it over a higher cosine")
	require.InDelta(t, 0.0, exact[3].Similarity, 1e-12, "a negative cosine shows as 0")
}

// TestCatalogNamesTheOfflineRanking: the models tool lists the ranking results name.
func TestCatalogNamesTheOfflineRanking(t *testing.T) {
	var names []string
	for _, m := range Catalog {
		if m.Category == "rerank" && m.Provider == "local" {
			names = append(names, m.Name)
		}
	}
	require.Equal(t, []string{rank.Model}, names)
}
