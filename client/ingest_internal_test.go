package client

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/internal/docread"
)

// TestIngestPartsStayUnderTheRequestLimit: documents go in runs of at most ~1 MB of JSON, in
// order, a document larger than that alone.
func TestIngestPartsStayUnderTheRequestLimit(t *testing.T) {
	doc := func(n int) map[string]any { return map[string]any{"text": strings.Repeat("x", n), "source": "s"} }
	cases := []struct {
		name  string
		sizes []int
		want  []int // documents per part
	}{
		{"small together", []int{10, 10, 10}, []int{3}},
		{"split at the limit", []int{600 << 10, 600 << 10, 10}, []int{1, 2}},
		{"a large one alone", []int{10, 3 << 20, 10}, []int{1, 1, 1}},
		{"none", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var docs []map[string]any
			for _, n := range c.sizes {
				docs = append(docs, doc(n))
			}
			var got []int
			for _, p := range ingestParts(docs) {
				got = append(got, len(p))
			}
			require.Equal(t, c.want, got)
		})
	}
}

// TestPruneCandidates: a stored source is pruned when it lies under a folder read (or is a file
// named) and its file is gone; others, and files that exist, stay.
func TestPruneCandidates(t *testing.T) {
	t.Chdir(t.TempDir())
	require.NoError(t, os.MkdirAll("docs", 0o755))
	require.NoError(t, os.WriteFile("docs/here.md", []byte("x"), 0o644))
	stored := map[string][]map[string]any{"docs/here.md": nil, "docs/gone.md": nil, "other/gone.md": nil, "named.md": nil, "docsx/gone.md": nil}
	cases := []struct {
		name string
		read docread.Result
		want []string
	}{
		{"folder", docread.Result{Roots: []string{"docs"}}, []string{"docs/gone.md"}},
		{"named file", docread.Result{Files: []string{"named.md"}}, []string{"named.md"}},
		{"the working directory", docread.Result{Roots: []string{"."}}, []string{"docs/gone.md", "docsx/gone.md", "named.md", "other/gone.md"}},
		{"nothing given covers them", docread.Result{Roots: []string{"else"}}, []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, pruneCandidates(c.read, stored))
		})
	}
}
