package activities_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/embedder"
	"github.com/weftworks/weft/activities/mongostore"
)

// TestCodeToolsOnTheEmbeddedStore: code_index walks a tree (ignored files left out), stores
// chunks with their path, lines and symbol; code_search finds a function by what it does, within
// a language; code_status counts what is stored.
func TestCodeToolsOnTheEmbeddedStore(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		".gitignore":              "generated/\n",
		"auth/token.go":           "package auth\n\n// IssueToken signs a session token for the user after the password check.\nfunc IssueToken(user string, password string) (string, error) {\n\treturn sign(user), nil\n}\n",
		"billing/invoice.py":      "import datetime\n\n\ndef send_invoice(customer, amount):\n    \"\"\"Email the monthly invoice to the customer.\"\"\"\n    return mail(customer, amount)\n",
		"web/cart.ts":             "export function addToCart(cart: string[], item: string): string[] {\n  return [...cart, item];\n}\n",
		"generated/auth_token.go": "package generated\n\nfunc IssueTokenGenerated() {}\n",
	}
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
	cfg := activities.Config{MongoDBURI: storeURI, CodeRoots: []string{root}}
	res, err := run(t, cfg, "code_index", map[string]any{"path": root, "db": "code1", "collection": "repo", "chunkSize": 200})
	require.NoError(t, err)
	out := res.Output.(map[string]any)
	require.Equal(t, float64(3), out["files"])
	require.Equal(t, map[string]any{"go": float64(1), "python": float64(1), "typescript": float64(1)}, out["languages"])
	indexed := out["chunks"]

	res, err = run(t, cfg, "code_search", map[string]any{"query": "sign a session token after checking the password", "db": "code1", "collection": "repo", "limit": 3})
	require.NoError(t, err)
	hits := res.Output.(map[string]any)["results"].([]any)
	first := hits[0].(map[string]any)
	require.Equal(t, "auth/token.go", first["path"])
	require.Equal(t, "IssueToken", first["symbol"])
	require.Equal(t, float64(3), first["startLine"], "the doc comment belongs to the function")
	require.Equal(t, float64(6), first["endLine"])

	res, err = run(t, cfg, "code_search", map[string]any{"query": "sign a session token", "db": "code1", "collection": "repo", "language": "python"})
	require.NoError(t, err)
	for _, h := range res.Output.(map[string]any)["results"].([]any) {
		require.Equal(t, "python", h.(map[string]any)["language"])
	}

	// re-indexing overwrites: the same chunks, no duplicates
	_, err = run(t, cfg, "code_index", map[string]any{"path": root, "db": "code1", "collection": "repo", "chunkSize": 200})
	require.NoError(t, err)
	res, err = run(t, cfg, "code_status", map[string]any{"db": "code1", "collection": "repo"})
	require.NoError(t, err)
	st := res.Output.(map[string]any)
	require.Equal(t, float64(3), st["files"])
	require.Equal(t, indexed, st["chunks"])
	require.Len(t, st["roots"], 1)

	_, err = run(t, cfg, "code_index", map[string]any{"path": filepath.Join(root, "nope"), "db": "code1", "collection": "repo"})
	require.ErrorContains(t, err, "no such file")
}

// TestCodeIndexThroughput indexes this repository with the local embedder into the embedded
// store and asks a few questions whose answer is a known file. Set WEFT_MEASURE_CODE=1 to run it.
func TestCodeIndexThroughput(t *testing.T) {
	if os.Getenv("WEFT_MEASURE_CODE") == "" {
		t.Skip("set WEFT_MEASURE_CODE=1 to index the whole repository")
	}
	cfg := activities.Config{MongoDBURI: storeURI, CodeRoots: []string{".."}}
	start := time.Now()
	res, err := run(t, cfg, "code_index", map[string]any{"path": "..", "db": "code2", "collection": "weft", "maxFiles": 20000})
	require.NoError(t, err)
	took := time.Since(start).Seconds()
	out := res.Output.(map[string]any)
	files, chunks := out["files"].(float64), out["chunks"].(float64)
	t.Logf("indexed %v files, %v chunks (%v skipped) in %.1fs: %.0f files/s, %.0f chunks/s; languages %v",
		files, chunks, out["skipped"], took, files/took, chunks/took, out["languages"])
	questions := []struct{ q, lang, want string }{
		{"split a text into chunks with overlap", "go", "activities/chunk/"},
		{"gitignore pattern matching while walking a directory", "go", "activities/codeindex/walk.go"},
		{"detect whether a workflow file is written in vai's dialect", "go", "workflows/dsl/dialect.go"},
		{"numeric path segments rewritten to indexes", "go", "workflows/expr/numeric.go"},
		{"fixture mocks for tools in weft test", "go", "fixtures/run.go"},
	}
	for _, q := range questions {
		for _, tool := range []string{"code_search", "code_query"} {
			res, err := run(t, cfg, tool, map[string]any{"query": q.q, "db": "code2", "collection": "weft", "language": q.lang, "limit": 5})
			require.NoError(t, err)
			rank := 0
			var got []string
			for i, h := range res.Output.(map[string]any)["results"].([]any) {
				p := h.(map[string]any)["path"].(string)
				got = append(got, fmt.Sprintf("%s:%v", p, h.(map[string]any)["symbol"]))
				if rank == 0 && len(p) >= len(q.want) && p[:len(q.want)] == q.want {
					rank = i + 1
				}
			}
			t.Logf("%s %q: want %s, rank %d (0: not in top 5); got %v", tool, q.q, q.want, rank, got)
		}
	}
}

// TestCodeIndexReadsOnlyAllowedDirectories: a code_index step's path is a file author's, a
// client's or a model's: it reads only under WEFT_CODE_ROOTS (none by default), and a link inside
// an allowed directory does not lead out of it.
func TestCodeIndexReadsOnlyAllowedDirectories(t *testing.T) {
	allowed, outside := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.go"), []byte("package s\n\nconst Key = \"hunter2\"\n"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(allowed, "escape")))
	cases := []struct {
		name  string
		roots []string
		path  string
		err   string
	}{
		{"nothing allowed by default", nil, allowed, "set WEFT_CODE_ROOTS"},
		{"outside", []string{allowed}, outside, "outside the directories code_index may read"},
		{"the worker's files", []string{allowed}, "/etc", "outside the directories code_index may read"},
		{"up and out", []string{allowed}, filepath.Join(allowed, ".."), "outside the directories code_index may read"},
		{"a link out", []string{allowed}, filepath.Join(allowed, "escape"), "outside the directories code_index may read"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := activities.Config{MongoDBURI: storeURI, CodeRoots: c.roots}
			_, err := run(t, cfg, "code_index", map[string]any{"path": c.path, "db": "code2", "collection": "repo"})
			require.ErrorContains(t, err, c.err)
		})
	}
}

// TestCodeIndexRemovesStaleChunks: re-indexing removes the chunks of files deleted since and the
// old chunks of files changed since, so search no longer finds code that is gone; an index
// limited to some languages leaves the others' chunks alone.
func TestCodeIndexRemovesStaleChunks(t *testing.T) {
	root := t.TempDir()
	write := func(p, c string) {
		full := filepath.Join(root, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
	write("auth/token.go", "package auth\n\n// IssueToken signs a session token for the user after the password check.\nfunc IssueToken(user string) string {\n\treturn sign(user)\n}\n")
	write("billing/invoice.py", "def send_invoice(customer, amount):\n    \"\"\"Email the monthly invoice to the customer.\"\"\"\n    return mail(customer, amount)\n")
	write("web/cart.ts", "export function addToCart(cart: string[], item: string): string[] {\n  return [...cart, item];\n}\n")
	cfg := activities.Config{MongoDBURI: storeURI, CodeRoots: []string{root}}
	index := func(extra map[string]any) map[string]any {
		in := map[string]any{"path": root, "db": "code3", "collection": "repo"}
		for k, v := range extra {
			in[k] = v
		}
		res, err := run(t, cfg, "code_index", in)
		require.NoError(t, err)
		return res.Output.(map[string]any)
	}
	search := func(q string) []string {
		res, err := run(t, cfg, "code_search", map[string]any{"query": q, "db": "code3", "collection": "repo", "limit": 10})
		require.NoError(t, err)
		var got []string
		for _, h := range res.Output.(map[string]any)["results"].([]any) {
			got = append(got, h.(map[string]any)["content"].(string))
		}
		return got
	}
	status := func() map[string]any {
		res, err := run(t, cfg, "code_status", map[string]any{"db": "code3", "collection": "repo"})
		require.NoError(t, err)
		return res.Output.(map[string]any)
	}
	out := index(nil)
	require.Equal(t, float64(3), out["chunks"])
	require.Equal(t, float64(0), out["removed"])
	require.Contains(t, strings.Join(search("email the monthly invoice"), "\n"), "send_invoice")

	require.NoError(t, os.Remove(filepath.Join(root, "billing", "invoice.py")))
	write("auth/token.go", "package auth\n\n// RevokeToken ends a session before it expires.\nfunc RevokeToken(token string) {\n\tforget(token)\n}\n")
	steps := []struct {
		name        string
		in          map[string]any
		removed     float64
		files       float64
		gone, found []string
	}{
		{"an index of one language leaves the others alone", map[string]any{"languages": []any{"typescript"}}, 0, 3, nil, []string{"send_invoice", "IssueToken"}},
		{"a full index removes deleted and changed files' chunks", nil, 2, 2, []string{"send_invoice", "IssueToken"}, []string{"RevokeToken", "addToCart"}},
		{"an unchanged tree removes nothing", nil, 0, 2, []string{"send_invoice", "IssueToken"}, []string{"RevokeToken", "addToCart"}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			out := index(s.in)
			require.Equal(t, s.removed, out["removed"])
			require.Equal(t, s.files, status()["files"])
			found := strings.Join(search("session token invoice cart"), "\n")
			for _, g := range s.gone {
				require.NotContains(t, found, g)
			}
			for _, f := range s.found {
				require.Contains(t, found, f)
			}
		})
	}
}

// TestCodeFindSimilar: given a snippet, code_find_similar returns the indexed chunks most like it,
// by cosine similarity, within a language and above a threshold.
func TestCodeFindSimilar(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"auth/token.go":      "package auth\n\n// IssueToken signs a session token for the user after the password check.\nfunc IssueToken(user string, password string) (string, error) {\n\treturn sign(user), nil\n}\n",
		"billing/invoice.py": "def send_invoice(customer, amount):\n    \"\"\"Email the monthly invoice to the customer.\"\"\"\n    return mail(customer, amount)\n",
		"web/cart.ts":        "export function addToCart(cart: string[], item: string): string[] {\n  return [...cart, item];\n}\n",
	}
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
	cfg := activities.Config{MongoDBURI: storeURI, CodeRoots: []string{root}}
	_, err := run(t, cfg, "code_index", map[string]any{"path": root, "db": "code4", "collection": "repo"})
	require.NoError(t, err)

	cases := []struct {
		name  string
		in    map[string]any
		paths []string // the results' paths, most similar first (nil: none)
	}{
		{"a rewrite of a function finds it first", map[string]any{"code": "def email_invoice(customer, total):\n    # mail the monthly invoice to the customer\n    return send_mail(customer, total)\n", "limit": 1},
			[]string{"billing/invoice.py"}},
		{"within a language", map[string]any{"code": "def email_invoice(customer, total):\n    # mail the monthly invoice to the customer\n    return send_mail(customer, total)\n", "language": "go", "threshold": 0},
			[]string{"auth/token.go"}},
		{"under a path", map[string]any{"code": "function addItem(cart, item) { return cart.concat([item]); }", "pathPrefix": "web/", "threshold": 0},
			[]string{"web/cart.ts"}},
		{"nothing is that alike", map[string]any{"code": "func IssueToken()", "threshold": 0.999}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := map[string]any{"db": "code4", "collection": "repo"}
			for k, v := range c.in {
				in[k] = v
			}
			res, err := run(t, cfg, "code_find_similar", in)
			require.NoError(t, err)
			out := res.Output.(map[string]any)
			var paths []string
			prev := 2.0
			for _, h := range out["results"].([]any) {
				hit := h.(map[string]any)
				paths = append(paths, hit["path"].(string))
				score := hit["score"].(float64)
				require.LessOrEqual(t, score, prev, "most similar first")
				prev = score
			}
			require.Equal(t, c.paths, paths)
			require.Equal(t, float64(len(c.paths)), out["count"])
		})
	}
}

// fakeVoyage answers /embeddings with a small vector per text (the same text, the same vector)
// and /rerank by the order prefer puts first, recording each request's model and documents.
type fakeVoyage struct {
	url string

	mu          sync.Mutex
	embedModel  []string // the model of each /embeddings request
	reranked    [][]any  // the documents of each /rerank request
	rerankModel []string // the model of each /rerank request
}

func startFakeVoyage(t *testing.T, prefer string) *fakeVoyage {
	t.Helper()
	f := &fakeVoyage{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("fake Voyage: request body: %v", err) // not require: this is the server's goroutine
			w.WriteHeader(400)
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		switch {
		case strings.HasSuffix(r.URL.Path, "/embeddings"):
			model, _ := body["model"].(string)
			f.embedModel = append(f.embedModel, model)
			var data []any
			for i, in := range body["input"].([]any) {
				h := sha256.Sum256([]byte(in.(string)))
				vec := make([]float64, 8)
				for j := range vec {
					vec[j] = float64(h[j]) - 127.5
				}
				data = append(data, map[string]any{"index": i, "embedding": vec})
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"data": data, "model": model, "usage": map[string]any{"total_tokens": 3}})
		case strings.HasSuffix(r.URL.Path, "/rerank"):
			docs := body["documents"].([]any)
			f.reranked = append(f.reranked, docs)
			model, _ := body["model"].(string)
			f.rerankModel = append(f.rerankModel, model)
			var data []any
			for i, d := range docs {
				score := 0.1
				if strings.Contains(d.(string), prefer) {
					score = 0.99
				}
				data = append(data, map[string]any{"index": i, "relevance_score": score})
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"data": data, "model": model, "usage": map[string]any{"total_tokens": 50}})
		default:
			t.Errorf("fake Voyage: unexpected path %s", r.URL.Path)
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

// take returns the models of the /embeddings requests and the documents of the /rerank
// requests since the last take.
func (f *fakeVoyage) take() ([]string, [][]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, r := f.embedModel, f.reranked
	f.embedModel, f.reranked = nil, nil
	return m, r
}

// rerankModels returns the models of the /rerank requests since the last call.
func (f *fakeVoyage) rerankModels() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.rerankModel
	f.rerankModel = nil
	return m
}

// emptiedAfter empties the collections a test fills when it ends, so that tests listing the
// store's non-empty collections (TestEmptyCollectionWarns lists eight) do not meet them.
func emptiedAfter(t *testing.T, db string, colls ...string) {
	t.Helper()
	t.Cleanup(func() {
		ctx := context.Background()
		s, err := mongostore.Open(ctx, storeURI)
		require.NoError(t, err)
		defer s.Close(ctx)
		for _, c := range colls {
			_, err := s.Delete(ctx, db, c, nil)
			require.NoError(t, err)
		}
	})
}

// codeTree writes files under a new directory and returns it.
func codeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
	return root
}

var threeFiles = map[string]string{
	"auth/token.go":      "package auth\n\n// IssueToken signs a session token for the user after the password check.\nfunc IssueToken(user string, password string) (string, error) {\n\treturn sign(user), nil\n}\n",
	"billing/invoice.py": "def send_invoice(customer, amount):\n    \"\"\"Email the monthly invoice to the customer.\"\"\"\n    return mail(customer, amount)\n",
	"web/cart.ts":        "export function addToCart(cart: string[], item: string): string[] {\n  return [...cart, item];\n}\n",
}

// TestCodeQuery: code_query is code_search with five results by default, five times as many
// candidates as results (more than code_search reranks) and always reranked: offline in search's
// order (rerankedScore repeats score), with a Voyage key by Voyage's reranker, which reads each
// chunk's path and symbol with its code. The collection's model embeds the question even when a
// Voyage key would make voyage-code-3 the default.
func TestCodeQuery(t *testing.T) {
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("pkg/f%02d.go", i)] = fmt.Sprintf("package pkg\n\n// Func%02d returns %d.\nfunc Func%02d() int {\n\treturn %d\n}\n", i, i, i, i)
	}
	for p, c := range threeFiles {
		files[p] = c
	}
	root := codeTree(t, files)
	emptiedAfter(t, "code5", "repo")
	cfg := activities.Config{MongoDBURI: storeURI, CodeRoots: []string{root}}
	res, err := run(t, cfg, "code_index", map[string]any{"path": root, "db": "code5", "collection": "repo"})
	require.NoError(t, err)
	require.Equal(t, embedder.Model, res.Output.(map[string]any)["model"])

	// offline
	res, err = run(t, cfg, "code_query", map[string]any{"query": "email the monthly invoice", "db": "code5", "collection": "repo"})
	require.NoError(t, err)
	out := res.Output.(map[string]any)
	require.Equal(t, float64(5), out["count"], "five results by default")
	require.Equal(t, "local-bm25-hybrid", out["rerankModel"])
	first := out["results"].([]any)[0].(map[string]any)
	require.Equal(t, "billing/invoice.py", first["path"])
	for _, h := range out["results"].([]any) {
		require.Equal(t, h.(map[string]any)["score"], h.(map[string]any)["rerankedScore"])
	}
	res, err = run(t, cfg, "code_search", map[string]any{"query": "email the monthly invoice", "db": "code5", "collection": "repo"})
	require.NoError(t, err)
	require.Nil(t, res.Output.(map[string]any)["rerankModel"], "code_search reranks only when asked")
	require.Nil(t, res.Output.(map[string]any)["results"].([]any)[0].(map[string]any)["rerankedScore"])

	// with Voyage's reranker, which prefers the cart
	voy := startFakeVoyage(t, "addToCart")
	vcfg := cfg
	vcfg.VoyageAPIKey, vcfg.VoyageBaseURL = "k", voy.url
	vcfg.NoEmbedCache = true
	cases := []struct {
		name     string
		tool     string
		in       map[string]any
		count    int
		reranked int // documents the reranker read
	}{
		{"code_query reranks five times its limit", "code_query", map[string]any{}, 5, 25},
		{"at most what the collection holds", "code_query", map[string]any{"limit": 10}, 10, 33},
		{"code_search reranks fewer when asked", "code_search", map[string]any{"rerank": true, "limit": 5}, 5, 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := map[string]any{"query": "email the monthly invoice", "db": "code5", "collection": "repo"}
			for k, v := range c.in {
				in[k] = v
			}
			res, err := run(t, vcfg, c.tool, in)
			require.NoError(t, err)
			out := res.Output.(map[string]any)
			require.Equal(t, float64(c.count), out["count"])
			require.Equal(t, "rerank-2.5", out["rerankModel"])
			top := out["results"].([]any)[0].(map[string]any)
			require.Equal(t, "web/cart.ts", top["path"], "the reranker's order")
			require.Equal(t, 0.99, top["rerankedScore"])
			models, reranked := voy.take()
			require.Empty(t, models, "the question is embedded with the collection's local model, not voyage-code-3")
			require.Len(t, reranked, 1)
			require.Len(t, reranked[0], c.reranked)
			require.Contains(t, fmt.Sprint(reranked[0]), "web/cart.ts addToCart\n", "the reranker reads the path and symbol")
		})
	}
}

// TestCodeFilter: vai's free-form filter narrows code_search, code_query and code_find_similar
// to chunks whose metadata matches (vai's names for it too, values or $in lists), alongside the
// language input; a field code_index does not write, an operator other than $in or a value of
// another kind is refused, naming it, without retries.
func TestCodeFilter(t *testing.T) {
	root := codeTree(t, threeFiles)
	emptiedAfter(t, "code6", "repo")
	cfg := activities.Config{MongoDBURI: storeURI, CodeRoots: []string{root}}
	_, err := run(t, cfg, "code_index", map[string]any{"path": root, "db": "code6", "collection": "repo"})
	require.NoError(t, err)
	all := []string{"auth/token.go", "billing/invoice.py", "web/cart.ts"}
	cases := []struct {
		name   string
		in     map[string]any
		paths  []string // the results' paths, sorted, all tools alike
		err    string
		fields string // and the error names these
	}{
		{"no filter", map[string]any{}, all, "", ""},
		{"a path", map[string]any{"filter": map[string]any{"path": "web/cart.ts"}}, []string{"web/cart.ts"}, "", ""},
		{"languages by $in, any case", map[string]any{"filter": map[string]any{"language": map[string]any{"$in": []any{"Go", "python"}}}}, []string{"auth/token.go", "billing/invoice.py"}, "", ""},
		{"a symbol under its stored name", map[string]any{"filter": map[string]any{"metadata.symbol": "IssueToken"}}, []string{"auth/token.go"}, "", ""},
		{"vai's chunkType is the kind", map[string]any{"filter": map[string]any{"chunkType": "function", "source": "billing/invoice.py"}}, []string{"billing/invoice.py"}, "", ""},
		{"a line number", map[string]any{"filter": map[string]any{"endLine": 6}}, []string{"auth/token.go"}, "", ""},
		{"with the language input: both hold", map[string]any{"language": "go", "filter": map[string]any{"language": "typescript"}}, nil, "", ""},
		{"an unknown field", map[string]any{"filter": map[string]any{"owner": "ana"}}, nil, `filter field "owner" is not chunk metadata code_index writes`, "chunkType, endLine, kind, language, path, root, source, startLine, symbol, symbols"},
		{"the flag that keeps it to code", map[string]any{"filter": map[string]any{"codeIndex": false}}, nil, `filter field "codeIndex"`, ""},
		{"another document's field", map[string]any{"filter": map[string]any{"metadata.source": "x"}}, nil, `filter field "metadata.source"`, ""},
		{"$where", map[string]any{"filter": map[string]any{"$where": "true"}}, nil, `filter field "$where"`, ""},
		{"$or widens", map[string]any{"filter": map[string]any{"$or": []any{map[string]any{"path": "x"}}}}, nil, `filter field "$or"`, ""},
		{"$expr inside", map[string]any{"filter": map[string]any{"path": map[string]any{"$expr": map[string]any{}}}}, nil, `filter.path: an object with $expr is not a string, number, boolean or {"$in": [...]}`, ""},
		{"$ne", map[string]any{"filter": map[string]any{"path": map[string]any{"$ne": "x"}}}, nil, `filter.path: an object with $ne is not`, ""},
		{"an object in $in", map[string]any{"filter": map[string]any{"path": map[string]any{"$in": []any{map[string]any{"$gt": ""}}}}}, nil, `filter.path: $in[0] is an object with $gt, not a string, number or boolean`, ""},
		{"an array", map[string]any{"filter": map[string]any{"kind": []any{"function"}}}, nil, `filter.kind: an array is not`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, tool := range []string{"code_search", "code_query", "code_find_similar"} {
				in := map[string]any{"db": "code6", "collection": "repo", "limit": 10}
				if tool == "code_find_similar" {
					in["code"], in["threshold"] = "func addItem(cart []string, item string) []string", 0
				} else {
					in["query"] = "token invoice cart"
				}
				for k, v := range c.in {
					in[k] = v
				}
				res, err := run(t, cfg, tool, in)
				if c.err != "" {
					require.ErrorContains(t, err, c.err, tool)
					require.ErrorContains(t, err, c.fields, tool)
					var ae *temporal.ApplicationError
					require.ErrorAs(t, err, &ae)
					require.True(t, ae.NonRetryable(), "no retry helps: %v", err)
					continue
				}
				require.NoError(t, err, tool)
				var paths []string
				for _, h := range res.Output.(map[string]any)["results"].([]any) {
					paths = append(paths, h.(map[string]any)["path"].(string))
				}
				sort.Strings(paths)
				require.Equal(t, c.paths, paths, tool)
			}
		})
	}
}

// TestCodeModelDefault: without a model, code is embedded with voyage-code-3 when the embedding
// provider is Voyage, and with the default otherwise; a search embeds with the model the
// collection was indexed with, whatever the default; a step's model wins over both.
func TestCodeModelDefault(t *testing.T) {
	root := codeTree(t, threeFiles)
	emptiedAfter(t, "code7", "local", "code3", "lite")
	voy := startFakeVoyage(t, "")
	local := activities.Config{MongoDBURI: storeURI, CodeRoots: []string{root}}
	withVoyage := local
	withVoyage.VoyageAPIKey, withVoyage.VoyageBaseURL = "k", voy.url
	withVoyage.NoEmbedCache = true // every embedding reaches the fake, which records its model
	index := func(cfg activities.Config, coll string, extra map[string]any) string {
		in := map[string]any{"path": root, "db": "code7", "collection": coll}
		for k, v := range extra {
			in[k] = v
		}
		res, err := run(t, cfg, "code_index", in)
		require.NoError(t, err)
		return res.Output.(map[string]any)["model"].(string)
	}
	require.Equal(t, embedder.Model, index(local, "local", nil), "no Voyage key: today's default")
	models, _ := voy.take()
	require.Empty(t, models)
	require.Equal(t, "voyage-code-3", index(withVoyage, "code3", nil))
	models, _ = voy.take()
	require.Equal(t, []string{"voyage-code-3"}, models)
	require.Equal(t, "voyage-4-lite", index(withVoyage, "lite", map[string]any{"model": "voyage-4-lite"}), "the step's model wins")
	voy.take()

	searches := []struct {
		coll  string
		model string   // the step's
		want  []string // models of the embedding requests
	}{
		{"code3", "", []string{"voyage-code-3"}},
		{"lite", "", []string{"voyage-4-lite"}},
		{"local", "", nil},
		{"lite", "voyage-code-3", []string{"voyage-code-3"}},
	}
	for _, s := range searches {
		for _, tool := range []string{"code_search", "code_query", "code_find_similar"} {
			t.Run(tool+" "+s.coll+" "+s.model, func(t *testing.T) {
				in := map[string]any{"db": "code7", "collection": s.coll, "query": "session token " + tool, "code": "func IssueToken() " + tool, "threshold": 0}
				if tool == "code_find_similar" {
					delete(in, "query")
				} else {
					delete(in, "code")
					delete(in, "threshold")
				}
				if s.model != "" {
					in["model"] = s.model
				}
				_, err := run(t, withVoyage, tool, in)
				require.NoError(t, err)
				models, _ := voy.take()
				require.Equal(t, s.want, models)
			})
		}
	}
}
