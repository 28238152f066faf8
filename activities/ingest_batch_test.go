package activities_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/chunk"
	"github.com/weftworks/weft/activities/toolspec"
)

// storedChunks reads every chunk of db.coll as ingest stored it (the vector left out), by id.
func storedChunks(t *testing.T, db, coll string) map[string]map[string]any {
	t.Helper()
	c, err := mongo.Connect(options.Client().ApplyURI(storeURI))
	require.NoError(t, err)
	defer func() { _ = c.Disconnect(context.Background()) }()
	cur, err := c.Database(db).Collection(coll).Find(context.Background(), bson.D{})
	require.NoError(t, err)
	var docs []bson.M
	require.NoError(t, cur.All(context.Background(), &docs))
	out := map[string]map[string]any{}
	for _, d := range docs {
		out[d["_id"].(string)] = map[string]any{"text": d["text"], "source": d["source"], "chunkIndex": d["chunkIndex"],
			"metadata": fmt.Sprint(d["metadata"]), "model": d["model"]}
	}
	return out
}

func dropDatabases(t *testing.T, dbs ...string) {
	c, err := mongo.Connect(options.Client().ApplyURI(storeURI))
	require.NoError(t, err)
	defer func() { _ = c.Disconnect(context.Background()) }()
	for _, db := range dbs {
		require.NoError(t, c.Database(db).Drop(context.Background()))
	}
}

// TestIngestBatchLikeOneIngestEach: a batch of documents is embedded 64 chunks a request and
// stored in one go, and each item's output and stored chunks are what ingesting it alone gives.
// An item naming no collection, and one whose chunk the provider refuses, get their own errors;
// the others are stored.
func TestIngestBatchLikeOneIngestEach(t *testing.T) {
	f, cfg := fakeProvider(t)
	f.MaxInputChars = 400
	cfg.MongoDBURI, cfg.NoEmbedCache = storeURI, true // every chunk goes to the provider: requests compare
	tools := activities.NewTools(cfg)
	h := tools.BatchHandlers()["ingest"]
	require.NotNil(t, h, "ingest declares Batch and binds a batch handler")
	batch := activities.BatchActivity(toolspec.Ingest.Spec, h)
	t.Cleanup(func() { dropDatabases(t, "ingestbatch", "ingestalone") }) // other tests list the store's collections

	const n = 40
	item := func(db string, i int) map[string]any {
		text := fmt.Sprintf("Document %d explains one thing. It has a second sentence about topic %d. And a third one, to make two chunks.", i, i%7)
		coll := "docs"
		if i%5 == 0 {
			coll = "notes"
		}
		return map[string]any{"text": text, "source": fmt.Sprintf("doc-%d.md", i), "db": db, "collection": coll,
			"chunkSize": 100, "chunkOverlap": 0, "metadata": map[string]any{"n": float64(i)}}
	}
	items := make([]map[string]any, n)
	for i := range items {
		items[i] = item("ingestbatch", i)
		if i%5 == 0 {
			items[i]["collection"] = "notes" // a second group: its own collection
		}
	}
	items[7]["collection"] = ""                      // no collection: its own error
	items[11]["collection"] = "weft_memory"          // weft's own: its own error
	items[13]["metadata"] = map[string]any{"a.b": 1} // a key the store cannot keep: its own error
	// a chunk over the provider's limit: 640 characters in one chunk of up to 1,000
	items[23]["text"], items[23]["chunkSize"] = strings.Repeat("A sentence that is long enough. ", 20), 1000
	out, err := batch(context.Background(), toolspec.BatchIn{Items: items})
	require.NoError(t, err)
	require.Len(t, out.Items, n)
	batchRequests, _ := f.Counts()

	aloneTools := activities.NewTools(cfg) // one worker's tools for every ingest alone
	var want []string
	for i, it := range out.Items {
		switch i {
		case 7, 11, 13:
			// the same error as ingesting the document alone
			in := item("ingestbatch", i)
			for k, v := range items[i] {
				in[k] = v
			}
			_, aloneErr := runOn(t, aloneTools, "ingest", in)
			require.Error(t, aloneErr)
			require.NotEmpty(t, it.Error)
			require.Contains(t, aloneErr.Error(), it.Error, "item %d: its own error, as alone", i)
			continue
		case 23:
			require.Contains(t, it.Error, "maximum context length", "the refused chunk's document gets the provider's words")
			continue
		}
		require.Empty(t, it.Error, "item %d", i)
		// the same document ingested alone, into another database
		alone, err := runOn(t, aloneTools, "ingest", item("ingestalone", i))
		require.NoError(t, err)
		got, single := asMap(t, it.Output), alone.Output.(map[string]any)
		require.Equal(t, single["chunksCreated"], got["chunksCreated"], "item %d", i)
		require.Equal(t, single["source"], got["source"])
		require.Equal(t, single["model"], got["model"])
		require.Equal(t, single["metadata"], got["metadata"])
		require.Equal(t, "ingestbatch", got["db"])
		require.Positive(t, it.Usage.EmbeddingTokens, "item %d has its share of the usage", i)
		want = append(want, single["source"].(string))
	}
	for _, coll := range []string{"docs", "notes"} {
		batched, alone := storedChunks(t, "ingestbatch", coll), storedChunks(t, "ingestalone", coll)
		require.NotEmpty(t, batched)
		require.Equal(t, alone, batched, "%s: the same chunks under the same ids, with the same text, source, index and metadata", coll)
	}
	require.Len(t, want, n-4)
	requests, _ := f.Counts()
	// 36 documents of 2 chunks in two collections, plus the halves that isolate document 23
	// (log2 of 40 rounds); alone, at least one request each.
	require.Less(t, batchRequests, 24, "the batch's requests")
	require.GreaterOrEqual(t, requests-batchRequests, n-4, "one request or more per document alone")
	t.Logf("batched: %d requests for %d documents; one ingest each: %d", batchRequests, n, requests-batchRequests)
}

// TestIngestBatchStoresNothingOfARefusedDocument: a document whose first chunk falls in one
// request and whose second (too long for the provider) in the next gets its error, and none of
// its chunks is stored, as when it is ingested alone (its two chunks go in one request): a batch
// embeds every chunk before it stores any.
func TestIngestBatchStoresNothingOfARefusedDocument(t *testing.T) {
	f, cfg := fakeProvider(t)
	f.MaxInputChars = 400
	cfg.MongoDBURI, cfg.NoEmbedCache = storeURI, true
	t.Cleanup(func() { dropDatabases(t, "ingestedge") })
	batch := activities.BatchActivity(toolspec.Ingest.Spec, activities.NewTools(cfg).BatchHandlers()["ingest"])
	var items []map[string]any
	for i := range 63 { // 63 documents of one chunk: chunks 0-62 of the group
		items = append(items, map[string]any{"text": fmt.Sprintf("Short document %d.", i), "source": fmt.Sprintf("s%d.md", i),
			"db": "ingestedge", "collection": "docs", "chunkSize": 1000})
	}
	// chunk 63 (accepted) and chunk 64 (refused): the first request ends between them
	edge := strings.Repeat("Short sentence. ", 20) + "\n\n" + strings.Repeat("A longer sentence that runs on. ", 28)
	parts, err := chunk.Split(edge, "recursive", 1000, 0)
	require.NoError(t, err)
	require.Len(t, parts, 2)
	require.Less(t, len(parts[0]), f.MaxInputChars)
	require.Greater(t, len(parts[1]), f.MaxInputChars)
	items = append(items, map[string]any{"text": edge, "source": "edge.md", "db": "ingestedge", "collection": "docs", "chunkSize": 1000, "chunkOverlap": 0})
	out, err := batch(context.Background(), toolspec.BatchIn{Items: items})
	require.NoError(t, err)
	require.Contains(t, out.Items[63].Error, "maximum context length")
	stored := storedChunks(t, "ingestedge", "docs")
	require.Len(t, stored, 63, "the other documents are stored")
	for _, c := range stored {
		require.NotEqual(t, "edge.md", c["source"], "no chunk of the refused document")
	}
}

// TestIngestReplaceLeavesTheNewTextAlone: a changed document ingested again with replace keeps
// its new chunks only, alone and in a batch; without replace the old chunks stay beside the new
// ones (ids hold their content), and replace touches no other source.
func TestIngestReplaceLeavesTheNewTextAlone(t *testing.T) {
	_, cfg := fakeProvider(t)
	cfg.MongoDBURI = storeURI
	tools := activities.NewTools(cfg)
	batch := activities.BatchActivity(toolspec.Ingest.Spec, tools.BatchHandlers()["ingest"])
	t.Cleanup(func() { dropDatabases(t, "ingestreplace") })
	doc := func(source, text string, replace bool) map[string]any {
		return map[string]any{"text": text, "source": source, "db": "ingestreplace", "collection": "docs", "chunkSize": 100, "chunkOverlap": 0, "replace": replace}
	}
	old := "The old version of the page. It says one thing. It has a second sentence to make a second chunk of it, and more."
	texts := func(source string) []string {
		var out []string
		for _, c := range storedChunks(t, "ingestreplace", "docs") {
			if c["source"] == source {
				out = append(out, c["text"].(string))
			}
		}
		sort.Strings(out)
		return out
	}
	want := func(text string) []string {
		cs, err := chunk.Split(text, "recursive", 100, 0)
		require.NoError(t, err)
		sort.Strings(cs)
		return cs
	}
	cases := []struct {
		name    string
		batched bool
		replace bool
	}{
		{"alone", false, true},
		{"batched", true, true},
		{"alone without replace", false, false},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src, other := fmt.Sprintf("page-%d.md", i), fmt.Sprintf("other-%d.md", i)
			_, err := batch(context.Background(), toolspec.BatchIn{Items: []map[string]any{doc(src, old, false), doc(other, "Another page.", false)}})
			require.NoError(t, err)
			require.Equal(t, want(old), texts(src))
			changed := "The new version. Shorter."
			if c.batched {
				out, err := batch(context.Background(), toolspec.BatchIn{Items: []map[string]any{doc(src, changed, c.replace), doc(fmt.Sprintf("third-%d.md", i), "A third page.", c.replace)}})
				require.NoError(t, err)
				require.Empty(t, out.Items[0].Error)
			} else {
				_, err := run(t, cfg, "ingest", doc(src, changed, c.replace))
				require.NoError(t, err)
			}
			if c.replace {
				require.Equal(t, want(changed), texts(src), "the old chunks are gone")
			} else {
				both := append(want(changed), want(old)...)
				sort.Strings(both)
				require.Equal(t, both, texts(src), "without replace the old chunks stay")
			}
			require.Equal(t, []string{"Another page."}, texts(other), "another source is left alone")
		})
	}
}
