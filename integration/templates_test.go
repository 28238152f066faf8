package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/templates"
	"github.com/weftworks/weft/worker"
)

// TestTemplatesOnTheEmbeddedStack runs the built-in templates with the real tools (local
// embedder, offline reranker, embedded FerretDB), no keys and no network: the corpus goes in with
// batch-ingest, then the retrieval templates must find the right documents.
func TestTemplatesOnTheEmbeddedStack(t *testing.T) {
	c := dial(t)
	queue := "templates"
	w, err := worker.New(c, worker.Options{TaskQueue: queue, Config: activities.Config{MongoDBURI: store.URI}})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	docsFile := func(coll string) string {
		var docs []map[string]string
		for _, d := range templates.Corpus()[coll] {
			docs = append(docs, map[string]string{"text": d.Text, "source": d.Source})
		}
		b, err := json.Marshal(docs)
		require.NoError(t, err)
		p := filepath.Join(t.TempDir(), coll+".json")
		require.NoError(t, os.WriteFile(p, b, 0o644))
		raw, err := os.ReadFile(p)
		require.NoError(t, err)
		return string(raw)
	}
	for _, coll := range []string{"api_docs", "architecture"} {
		code, out, errOut := weft(t, queue, "run", "batch-ingest", "--quiet", "--input", "collection="+coll, "--input", "docs="+docsFile(coll))
		require.Equal(t, 0, code, out+errOut)
		require.Contains(t, out, `"documents": 24`)
	}

	code, out, errOut := weft(t, queue, "run", "multi-collection-search", "--json", "--input", "query=how long are old API versions supported")
	require.Equal(t, 0, code, out+errOut)
	var res struct {
		Output struct {
			Results []struct {
				Source        string  `json:"source"`
				RerankedScore float64 `json:"rerankedScore"`
			} `json:"results"`
			ResultCount float64 `json:"resultCount"`
		} `json:"output"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.NotEmpty(t, res.Output.Results)
	var top []string
	for _, r := range res.Output.Results[:3] {
		top = append(top, r.Source)
	}
	require.Contains(t, top, "api/versioning.md", "top 3: %v", top)

	code, out, errOut = weft(t, queue, "run", "smart-ingest", "--json", "--input", "text=Deployments roll out gradually, one percent of traffic first. A failed health check stops the rollout and traffic stays on the previous version.",
		"--input", "source=copy.md", "--input", "threshold=0.9")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, `"ingested": true`, "the knowledge collection starts empty")
	code, out, errOut = weft(t, queue, "run", "smart-ingest", "--json", "--input", "text=Deployments roll out gradually, one percent of traffic first. A failed health check stops the rollout and traffic stays on the previous version.",
		"--input", "source=copy2.md", "--input", "threshold=0.9")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, `"ingested": false`, "the same text again is a duplicate")

	for _, args := range [][]string{
		{"search-with-fallback", "--input", "query=who can read provider credentials"},
		{"consistency-check", "--input", "topic=retries", "--input", "left=api_docs", "--input", "right=architecture"},
		{"cost-analysis", "--input", "docs=1000"},
	} {
		code, out, errOut := weft(t, queue, append([]string{"run", "--quiet"}, args...)...)
		require.Equal(t, 0, code, "%s: %s", strings.Join(args, " "), out+errOut)
	}
}
