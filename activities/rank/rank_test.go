package rank_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/rank"
)

func TestBM25(t *testing.T) {
	docs := []string{"the cat sat on the mat", "dogs chase cats all day", "interest rates rose", "cat food for cats"}
	s, err := rank.BM25("cat food", docs)
	require.NoError(t, err)
	require.Equal(t, 3, rank.Order(s)[0])
	require.Greater(t, s[1], 0.0, "stemming matches cats to cat")
	require.Zero(t, s[2])
}

func TestTitleWords(t *testing.T) {
	for name, want := range map[string]string{
		"api/rate-limits.md":                  "api rate limits",
		"docs/Getting_Started.html":           "docs Getting Started",
		"https://example.com/guides/webhooks": "https example com guides webhooks",
		"notes":                               "notes",
		"":                                    "",
	} {
		require.Equal(t, want, rank.TitleWords(name), name)
	}
}

func TestFuse(t *testing.T) {
	cases := []struct {
		name  string
		query string
		cands []rank.Candidate
		first int
	}{
		{"keywords lift a document the vectors rank lower", "invoice",
			[]rank.Candidate{{Text: "payments and cards", Similarity: 0.6}, {Text: "download an invoice", Similarity: 0.4}}, 1},
		{"a source name counts as a title", "rate limit",
			[]rank.Candidate{{Text: "300 requests per minute", Name: "api/rate-limits.md", Similarity: 0.3},
				{Text: "retries wait", Name: "arch/retries.md", Similarity: 0.3}}, 0},
		{"without shared words similarity decides", "the",
			[]rank.Candidate{{Text: "a", Similarity: 0.2}, {Text: "b", Similarity: 0.7}}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := rank.Fuse(c.query, c.cands)
			require.NoError(t, err)
			require.Len(t, s, len(c.cands))
			require.Equal(t, c.first, rank.Ranked(s)[0])
			for _, x := range s {
				require.True(t, x.Relevance >= 0 && x.Relevance <= 1, "relevance %v", x.Relevance)
				require.InDelta(t, rank.SimilarityWeight*x.Similarity+(1-rank.SimilarityWeight)*x.Keywords, x.Relevance, 1e-12)
			}
		})
	}
	s, err := rank.Fuse("cat", []rank.Candidate{{Text: "cat", Similarity: 1.4}, {Text: "dog", Similarity: -0.3}})
	require.NoError(t, err)
	require.Equal(t, 1.0, s[0].Similarity, "similarity is clamped to [0,1]")
	require.Zero(t, s[1].Similarity)
	require.Zero(t, s[1].Keywords)
	require.Less(t, s[0].Relevance, 1.0)
	s, err = rank.Fuse("cat", nil)
	require.NoError(t, err)
	require.Empty(t, s)
}
