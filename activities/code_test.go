package activities_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
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
	cfg := activities.Config{MongoDBURI: storeURI}
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
		{"fixture mocks for tools in weft test", "go", "starter/test.go"},
	}
	for _, q := range questions {
		res, err := run(t, cfg, "code_search", map[string]any{"query": q.q, "db": "code2", "collection": "weft", "language": q.lang, "limit": 5})
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
		t.Logf("%q: want %s, rank %d (0: not in top 5); got %v", q.q, q.want, rank, got)
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
