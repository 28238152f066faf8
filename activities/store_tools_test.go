package activities_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/devdb"
)

var storeURI string

func TestMain(m *testing.M) {
	db, err := devdb.StartTemp(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	storeURI = db.URI
	code := m.Run()
	db.Close()
	os.Exit(code)
}

var corpus = map[string]string{
	"auth.md":    "Authentication uses tokens. Sign in with your password, then the server issues a session token that expires after an hour.",
	"billing.md": "Invoices are sent monthly. You can download past invoices and change the credit card used for payments.",
	"deploy.md":  "Deployments roll out gradually. A failed health check stops the rollout and the previous version keeps serving traffic.",
}

func ingestCorpus(t *testing.T, cfg activities.Config, db, coll string) {
	for _, src := range []string{"auth.md", "billing.md", "deploy.md"} {
		res, err := run(t, cfg, "ingest", map[string]any{"text": corpus[src], "source": src, "db": db, "collection": coll, "metadata": map[string]any{"doc": src}, "chunkSize": 100, "chunkOverlap": 0})
		require.NoError(t, err)
		require.Equal(t, "local-glove-sif-100d", res.Output.(map[string]any)["model"])
	}
}

func TestIngestSearchQueryOnTheEmbeddedStore(t *testing.T) {
	cfg := activities.Config{MongoDBURI: storeURI}
	ingestCorpus(t, cfg, "kb1", "docs")
	ingestCorpus(t, cfg, "kb1", "docs") // a retried ingest: same ids, no duplicates

	res, err := run(t, cfg, "collections", map[string]any{"db": "kb1"})
	require.NoError(t, err)
	cols := res.Output.(map[string]any)["collections"].([]any)
	require.Len(t, cols, 1)
	col := cols[0].(map[string]any)
	require.Equal(t, "docs", col["name"])
	require.Equal(t, float64(100), col["dimensions"])
	count := col["documentCount"].(float64)
	require.GreaterOrEqual(t, count, float64(6))

	res, err = run(t, cfg, "search", map[string]any{"query": "how do I log in with my password", "db": "kb1", "collection": "docs", "limit": 3})
	require.NoError(t, err)
	out := res.Output.(map[string]any)
	first := out["results"].([]any)[0].(map[string]any)
	require.Equal(t, "auth.md", first["source"])
	require.Equal(t, "exact", out["metadata"].(map[string]any)["searchPath"])
	require.Equal(t, "local-bm25-hybrid", out["metadata"].(map[string]any)["ranking"])
	require.Len(t, out["results"], 3)
	for _, k := range []string{"score", "similarity", "keywordScore"} {
		v := first[k].(float64)
		require.True(t, v > 0 && v <= 1, "%s %v is a relevance in (0,1]", k, v)
	}

	res, err = run(t, cfg, "search", map[string]any{"query": "invoices", "db": "kb1", "collection": "docs", "filter": map[string]any{"metadata.doc": "deploy.md"}})
	require.NoError(t, err)
	for _, r := range res.Output.(map[string]any)["results"].([]any) {
		require.Equal(t, "deploy.md", r.(map[string]any)["source"])
	}

	// No Voyage key: query reranks offline (BM25 fused with embedding similarity).
	res, err = run(t, cfg, "query", map[string]any{"query": "download an old invoice", "db": "kb1", "collection": "docs", "limit": 2})
	require.NoError(t, err)
	out = res.Output.(map[string]any)
	require.Len(t, out["results"], 2)
	top := out["results"].([]any)[0].(map[string]any)
	require.Equal(t, "billing.md", top["source"])
	require.Greater(t, top["rerankedScore"], 0.0)
	meta := out["metadata"].(map[string]any)
	require.Equal(t, true, meta["reranked"])
	require.Equal(t, "local-bm25-hybrid", meta["rerankModel"])
	require.Equal(t, top["score"], top["rerankedScore"], "offline, the reranker is the fusion search already ranked by")

	res, err = run(t, cfg, "rerank", map[string]any{"query": "health check rollout", "documents": []any{corpus["auth.md"], corpus["deploy.md"], corpus["billing.md"]}})
	require.NoError(t, err)
	require.Equal(t, float64(1), res.Output.(map[string]any)["results"].([]any)[0].(map[string]any)["index"])

	res, err = run(t, cfg, "aggregate", map[string]any{"db": "kb1", "collection": "docs", "pipeline": []any{map[string]any{"$match": map[string]any{"source": "auth.md"}}}})
	require.NoError(t, err)
	for _, d := range res.Output.(map[string]any)["results"].([]any) {
		require.Equal(t, "auth.md", d.(map[string]any)["source"])
	}

	// Searching with another model's dimensions is an input error that names the fix.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"data":[{"index":0,"embedding":[0.1,0.2]}],"model":"voyage-4-lite","usage":{"total_tokens":2}}`)
	}))
	defer srv.Close()
	_, err = run(t, activities.Config{MongoDBURI: storeURI, VoyageAPIKey: "k", VoyageBaseURL: srv.URL}, "search",
		map[string]any{"query": "x", "db": "kb1", "collection": "docs", "model": "voyage-4-lite"})
	require.ErrorContains(t, err, "holds 100-dimensional embeddings but the query has 2")
}

func TestQueryRerankWithVoyage(t *testing.T) {
	cfg := activities.Config{MongoDBURI: storeURI}
	ingestCorpus(t, cfg, "kb2", "docs")
	var asked []any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("fake Voyage: request body: %v", err) // not require: this is the server's goroutine
			w.WriteHeader(400)
			return
		}
		asked = body["documents"].([]any)
		// Rank the deploy passage first, whatever vector search thought.
		var data []any
		for i, d := range asked {
			score := 0.1
			if len(d.(string)) > 0 && d.(string)[:11] == "Deployments" {
				score = 0.99
			}
			data = append(data, map[string]any{"index": i, "relevance_score": score})
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data, "model": "rerank-2.5", "usage": map[string]any{"total_tokens": 50}})
	}))
	defer srv.Close()
	cfg.VoyageAPIKey, cfg.VoyageBaseURL = "k", srv.URL
	res, err := run(t, cfg, "query", map[string]any{"query": "password", "db": "kb2", "collection": "docs", "limit": 1, "model": "local-glove-sif-100d"})
	require.NoError(t, err)
	out := res.Output.(map[string]any)
	require.Len(t, out["results"], 1)
	top := out["results"].([]any)[0].(map[string]any)
	require.Equal(t, "deploy.md", top["source"])
	require.Equal(t, 0.99, top["rerankedScore"])
	require.Equal(t, true, out["metadata"].(map[string]any)["reranked"])
	require.Greater(t, len(asked), 1, "query reranks more candidates than it returns")
}

func TestStoreSettingMissing(t *testing.T) {
	_, err := run(t, activities.Config{}, "search", map[string]any{"query": "x", "collection": "docs"})
	require.ErrorContains(t, err, "set MONGODB_URI")
	_, err = run(t, activities.Config{MongoDBURI: storeURI}, "search", map[string]any{"query": "x"})
	require.ErrorContains(t, err, `no collection: pass "collection" in the tool's arguments (in a workflow file, set it in the step's inputs or once in defaults.collection)`)
}

// TestEmptyCollectionWarns: a search of a collection that holds nothing says so, naming the
// collections that do hold documents, instead of answering a silent "0 results".
func TestEmptyCollectionWarns(t *testing.T) {
	cfg := activities.Config{MongoDBURI: storeURI}
	ingestCorpus(t, cfg, "kbwarn", "docs")
	for _, tool := range []string{"search", "query"} {
		t.Run(tool, func(t *testing.T) {
			res, err := run(t, cfg, tool, map[string]any{"query": "tokens", "db": "weft", "collection": "nothing_here"})
			require.NoError(t, err)
			require.Len(t, res.Warnings, 1)
			require.Contains(t, res.Warnings[0], `collection "nothing_here" in db "weft" has no documents`)
			require.Contains(t, res.Warnings[0], "kbwarn.docs")
			require.Equal(t, res.Warnings, toStrings(res.Output.(map[string]any)["warnings"]))
			// A search with hits has no warning.
			res, err = run(t, cfg, tool, map[string]any{"query": "tokens", "db": "kbwarn", "collection": "docs"})
			require.NoError(t, err)
			require.Empty(t, res.Warnings)
		})
	}
}

func toStrings(v any) []string {
	var out []string
	switch x := v.(type) {
	case []string:
		return x
	case []any:
		for _, e := range x {
			out = append(out, fmt.Sprint(e))
		}
	}
	return out
}

// TestMemory: remember stores a fact once per scope, recall finds it by meaning within its scope
// only, and facts can be listed and forgotten.
func TestMemory(t *testing.T) {
	cfg := activities.Config{MongoDBURI: storeURI, Database: "memtest"}
	remember := func(scope, text string) map[string]any {
		res, err := run(t, cfg, "remember", map[string]any{"scope": scope, "text": text})
		require.NoError(t, err)
		return res.Output.(map[string]any)
	}
	first := remember("support:ana", "Ana prefers answers in French.")
	require.Equal(t, true, first["stored"])
	again := remember("support:ana", "Ana prefers answers in French.")
	require.Equal(t, true, again["duplicate"], "the same fact in the same scope is stored once")
	require.Equal(t, first["id"], again["id"])
	remember("support:ana", "Ana's invoices go to the finance team.")
	remember("support:bo", "Bo prefers answers in German.")

	res, err := run(t, cfg, "recall", map[string]any{"scope": "support:ana", "query": "which language does she want?", "limit": 5})
	require.NoError(t, err)
	hits := res.Output.(map[string]any)["results"].([]any)
	require.Len(t, hits, 2, "only Ana's scope")
	require.Equal(t, "Ana prefers answers in French.", hits[0].(map[string]any)["text"])

	_, err = run(t, cfg, "recall", map[string]any{"scope": "ana smith!", "query": "x"})
	require.ErrorContains(t, err, "scope")

	tools := activities.NewTools(cfg)
	list, err := tools.Memories(context.Background(), "memtest", "support:ana")
	require.NoError(t, err)
	require.Len(t, list, 2)
	n, err := tools.Forget(context.Background(), "memtest", "support:ana", list[0].ID)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	res, err = run(t, cfg, "recall", map[string]any{"scope": "support:ana", "query": "invoices"})
	require.NoError(t, err)
	require.Len(t, res.Output.(map[string]any)["results"], 1, "a forgotten fact is not recalled (the search cache follows)")
	_, err = tools.Forget(context.Background(), "memtest", "support:ana", "nope")
	require.ErrorContains(t, err, "no memory nope")
}

// TestPingStore: a health check's question to the store is a ping, answered by the store weft
// uses; without MONGODB_URI it says what to set.
func TestPingStore(t *testing.T) {
	require.NoError(t, activities.NewTools(activities.Config{MongoDBURI: storeURI}).PingStore(context.Background()))
	require.ErrorContains(t, activities.NewTools(activities.Config{}).PingStore(context.Background()), "set MONGODB_URI")
}
