package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/chunk"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/internal/testkit/fakeembed"
)

// ingestStack is a worker embedding through the fake provider, on its own queue, with the CLI's
// environment pointed at the same store; the working directory is a fresh folder.
func ingestStack(t *testing.T, queue string) (*fakeembed.Server, *activities.Tools) {
	t.Helper()
	f, err := fakeembed.Start(0)
	require.NoError(t, err)
	t.Cleanup(f.Close)
	cfg := activities.Config{MongoDBURI: store.URI, OpenAIBaseURL: f.URL(), OpenAIAPIKey: "k", EmbeddingModel: "text-embedding-3-small"}
	startWorkerWithConfig(t, queue, cfg, nil)
	t.Setenv("MONGODB_URI", store.URI)
	t.Setenv("WEFT_EMBEDDING_MODEL", "text-embedding-3-small")
	t.Chdir(t.TempDir())
	return f, activities.NewTools(cfg)
}

func writeFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for name, content := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(name), 0o755))
		require.NoError(t, os.WriteFile(name, []byte(content), 0o644))
	}
}

// chunkTexts are the texts stored under source in db.coll, sorted.
func chunkTexts(t *testing.T, db, coll, source string) []string {
	t.Helper()
	c, err := mongo.Connect(options.Client().ApplyURI(store.URI))
	require.NoError(t, err)
	defer func() { _ = c.Disconnect(context.Background()) }()
	cur, err := c.Database(db).Collection(coll).Find(context.Background(), bson.D{{Key: "source", Value: source}})
	require.NoError(t, err)
	var docs []struct {
		Text string `bson:"text"`
	}
	require.NoError(t, cur.All(context.Background(), &docs))
	out := []string{}
	for _, d := range docs {
		out = append(out, d.Text)
	}
	sort.Strings(out)
	return out
}

func ingestReport(t *testing.T, stdout string) weftclient.IngestReport {
	t.Helper()
	var r weftclient.IngestReport
	require.NoError(t, json.Unmarshal([]byte(stdout), &r), stdout)
	return r
}

func statuses(r weftclient.IngestReport) map[string]string {
	out := map[string]string{}
	for _, d := range r.Documents {
		out[d.Source] = d.Status
	}
	return out
}

// TestIngestCLI: weft ingest over a folder of mixed files against a real stack. A dry run
// counts and stores nothing; the first pass stores every readable file and names the
// unreadable ones with why; a second pass makes no embedding request and starts no run; a
// changed file replaces its chunks; --prune removes the document of a deleted file; and the
// text output says the same.
func TestIngestCLI(t *testing.T) {
	const queue, db, coll = "cli-ingest", "ingestcli", "docs"
	f, tools := ingestStack(t, queue)
	long := strings.Repeat("A paragraph about durable ingestion with enough words to fill a chunk or two. ", 20)
	writeFiles(t, map[string]string{
		"docs/guide.md":     "# Guide\n\nInstall weft with one command.\n\n## Use\n\n" + long,
		"docs/notes.txt":    "Plain notes about the release.",
		"docs/spec.rst":     "Spec\n====\n\nThe reStructuredText spec.",
		"docs/table.csv":    "name,city\nAna,Lisbon\nBo,Oslo\n",
		"docs/page.html":    "<html><head><title>Page</title><script>var x;</script></head><body><p>Visible text</p></body></html>",
		"docs/records.json": `[{"text":"record one"},{"text":"record two"}]`,
		"docs/lines.jsonl":  "{\"text\":\"line one\"}\n{\"text\":\"line two\"}\n",
		"docs/code/main.go": "package main\n\nfunc main() { println(\"hi\") }\n",
		"docs/bad.json":     "{broken",
		"docs/broken.pdf":   "%PDF-1.4 not really a pdf",
		"docs/image.png":    "\x89PNG\x00",
	})
	args := []string{"ingest", "docs", "--db", db, "--collection", coll, "--json"}
	readable := 8

	t.Run("dry run counts and stores nothing", func(t *testing.T) {
		code, out, errOut := weft(t, queue, append(args, "--dry-run")...)
		require.Equal(t, 1, code, "two files cannot be read: %s", errOut)
		r := ingestReport(t, out)
		require.True(t, r.DryRun)
		require.Equal(t, readable, r.Files)
		require.Equal(t, readable, r.New)
		require.Greater(t, r.Chunks, readable, "the long guide takes several chunks")
		require.Positive(t, r.EstimatedTokens)
		require.Positive(t, r.EstimatedCostUSD, "priced at text-embedding-3-small's list price")
		require.Equal(t, "text-embedding-3-small", r.Model)
		require.Empty(t, r.Runs)
		requests, _ := f.Counts()
		require.Zero(t, requests)
		stored, err := tools.IngestedDocuments(context.Background(), db, coll)
		require.NoError(t, err)
		require.Empty(t, stored)
	})

	var firstRequests int
	t.Run("first pass stores the readable files and names the others", func(t *testing.T) {
		code, out, errOut := weft(t, queue, args...)
		require.Equal(t, 1, code, errOut)
		r := ingestReport(t, out)
		require.Equal(t, readable, r.New)
		require.Len(t, r.Runs, 1, "one run")
		require.Equal(t, 2, r.Failed)
		problems := map[string]string{}
		for _, p := range r.Problems {
			problems[p.Path] = p.Reason
		}
		require.Contains(t, problems["docs/bad.json"], "not valid JSON")
		require.Contains(t, problems["docs/broken.pdf"], "not a readable PDF")
		for src, st := range statuses(r) {
			require.Equal(t, "stored", st, src)
		}
		stored, err := tools.IngestedDocuments(context.Background(), db, coll)
		require.NoError(t, err)
		require.Len(t, stored, readable)
		require.Equal(t, []string{"line one\n\nline two"}, chunkTexts(t, db, coll, "docs/lines.jsonl"))
		require.Equal(t, []string{"name: Ana; city: Lisbon\nname: Bo; city: Oslo"}, chunkTexts(t, db, coll, "docs/table.csv"))
		require.Equal(t, []string{"Page\n\nVisible text"}, chunkTexts(t, db, coll, "docs/page.html"))
		firstRequests, _ = f.Counts()
		require.Positive(t, firstRequests)
		require.Positive(t, r.Usage.EmbeddingTokens)
	})

	t.Run("second pass makes no embedding request", func(t *testing.T) {
		code, out, _ := weft(t, queue, args...)
		require.Equal(t, 1, code)
		r := ingestReport(t, out)
		require.Equal(t, readable, r.Unchanged)
		require.Zero(t, r.New+r.Changed)
		require.Empty(t, r.Runs, "no run started")
		requests, _ := f.Counts()
		require.Equal(t, firstRequests, requests, "0 embedding calls")
	})

	t.Run("a changed file replaces its chunks", func(t *testing.T) {
		before := chunkTexts(t, db, coll, "docs/guide.md")
		require.Greater(t, len(before), 1)
		writeFiles(t, map[string]string{"docs/guide.md": "# Guide\n\nShorter now."})
		code, out, errOut := weft(t, queue, append(args, "--exclude", "bad.json", "--exclude", "*.pdf")...)
		require.Equal(t, 0, code, errOut)
		r := ingestReport(t, out)
		require.Equal(t, 1, r.Changed)
		require.Equal(t, readable-1, r.Unchanged)
		require.Equal(t, "stored", statuses(r)["docs/guide.md"])
		want, err := chunk.Split("# Guide\n\nShorter now.", "markdown", 512, 50)
		require.NoError(t, err)
		require.Equal(t, want, chunkTexts(t, db, coll, "docs/guide.md"), "the old chunks are gone")
		require.Equal(t, []string{"Plain notes about the release."}, chunkTexts(t, db, coll, "docs/notes.txt"))
	})

	t.Run("prune removes the documents of deleted files", func(t *testing.T) {
		require.NoError(t, os.Remove("docs/notes.txt"))
		code, out, errOut := weft(t, queue, append(args, "--exclude", "bad.json", "--exclude", "*.pdf", "--prune", "--dry-run")...)
		require.Equal(t, 0, code, errOut)
		require.Equal(t, []string{"docs/notes.txt"}, ingestReport(t, out).Pruned)
		require.NotEmpty(t, chunkTexts(t, db, coll, "docs/notes.txt"), "a dry run removes nothing")
		code, out, errOut = weft(t, queue, append(args, "--exclude", "bad.json", "--exclude", "*.pdf", "--prune")...)
		require.Equal(t, 0, code, errOut)
		r := ingestReport(t, out)
		require.Equal(t, []string{"docs/notes.txt"}, r.Pruned)
		require.EqualValues(t, 1, r.PrunedChunks)
		require.Empty(t, chunkTexts(t, db, coll, "docs/notes.txt"))
		require.NotEmpty(t, chunkTexts(t, db, coll, "docs/spec.rst"), "the others stay")
	})

	t.Run("text output", func(t *testing.T) {
		writeFiles(t, map[string]string{"docs/new.md": "A new page."})
		code, out, errOut := weft(t, queue, "ingest", "docs", "--db", db, "--collection", coll)
		require.Equal(t, 1, code)
		require.Contains(t, errOut, "✗ docs/bad.json: not valid JSON")
		require.Contains(t, errOut, "ingest: 1/1 documents", "plain progress lines off a terminal")
		require.Contains(t, out, "Read 8 files (1 skipped): 1 new, 0 changed, 7 unchanged, 2 unreadable.")
		require.Contains(t, out, "Ingested 1 document into ingestcli.docs: 1 chunk")
		require.Contains(t, out, "weft-ingest-docs-")
	})
}
