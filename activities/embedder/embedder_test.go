package embedder_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/embedder"
)

func load(t testing.TB) *embedder.Embedder {
	e, err := embedder.Load()
	require.NoError(t, err)
	return e
}

func TestRelatedTextsAreCloser(t *testing.T) {
	e := load(t)
	sim := func(a, b string) float64 { return embedder.Cosine(e.Embed(a), e.Embed(b)) }
	cases := []struct{ a, near, far string }{
		{"the cat sat on the mat", "a kitten is sleeping on the rug", "interest rates rose at the central bank"},
		{"how do I reset my password", "steps to recover a forgotten login credential", "the recipe needs two cups of flour"},
		{"rate limiting for the public API", "throttling requests to the service endpoint", "the football match ended in a draw"},
	}
	for _, c := range cases {
		require.Greater(t, sim(c.a, c.near), sim(c.a, c.far), "%q should be closer to %q than to %q", c.a, c.near, c.far)
	}
	v := e.Embed("anything at all")
	require.Len(t, v, embedder.Dimensions)
	require.InDelta(t, 1.0, embedder.Cosine(v, v), 1e-6)
	require.InDelta(t, 1.0, sim("Hello, World!", "hello world"), 1e-6, "case and punctuation do not matter")
}

func TestUnknownWordsUseSpelling(t *testing.T) {
	e := load(t)
	sim := func(a, b string) float64 { return embedder.Cosine(e.Embed(a), e.Embed(b)) }
	require.Greater(t, sim("zorbliquent", "zorbliquents"), sim("zorbliquent", "fnargwhistle"))
	zero := e.Embed("?!...")
	for _, x := range zero {
		require.Zero(t, x)
	}
}

// TestParaphraseMRR is a small retrieval probe: each query must find its paraphrase among all
// documents. It reports MRR and fails below 0.6.
func TestParaphraseMRR(t *testing.T) {
	e := load(t)
	pairs := [][2]string{
		{"how do I cancel my subscription", "stopping a paid plan and ending recurring billing"},
		{"the server is running out of memory", "the machine has exhausted its available RAM"},
		{"where can I find the invoice for last month", "download billing statements for previous periods"},
		{"add a new user to the team", "invite a colleague to join the workspace"},
		{"the app crashes when I upload a photo", "image uploads make the application fail"},
		{"how long does shipping take", "delivery times for orders"},
		{"change the language of the interface", "switch the display language settings"},
		{"is my data encrypted", "security and encryption of stored information"},
		{"the website is very slow today", "pages are loading slowly"},
		{"book a table for dinner", "make a restaurant reservation for the evening"},
		{"what is the capital of france", "paris is the french capital city"},
		{"my flight was delayed", "the airplane departure was postponed"},
	}
	docs := make([][]float32, len(pairs))
	for i, p := range pairs {
		docs[i] = e.Embed(p[1])
	}
	var mrr float64
	for i, p := range pairs {
		q := e.Embed(p[0])
		target := embedder.Cosine(q, docs[i])
		rank := 1
		for j := range docs {
			if j != i && embedder.Cosine(q, docs[j]) > target {
				rank++
			}
		}
		mrr += 1 / float64(rank)
	}
	mrr /= float64(len(pairs))
	t.Logf("paraphrase MRR@%d = %.2f (%s)", len(pairs), mrr, embedder.Model)
	require.GreaterOrEqual(t, mrr, 0.6)
}

func BenchmarkEmbed(b *testing.B) {
	e := load(b)
	text := "Durable workflows resume after a crash without redoing the steps that already finished, and reviews pause a run until someone decides."
	b.ReportAllocs()
	for b.Loop() {
		_ = e.Embed(text)
	}
}
