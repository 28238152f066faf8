package vaipkgtest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// Workflow is a small valid workflow (one template step) with one input.
const Workflow = `{
  "name": "greet",
  "description": "Greets someone",
  "inputs": { "who": { "type": "string", "default": "world", "description": "whom to greet" } },
  "steps": [ { "id": "hello", "name": "Say hello", "tool": "template", "inputs": { "text": "hello {{ inputs.who }}" } } ],
  "output": "{{ hello.output.text }}"
}`

// InvalidWorkflow refers to a step that does not exist.
const InvalidWorkflow = `{"name":"broken","steps":[{"id":"a","tool":"template","inputs":{"text":"{{ nowhere.output.text }}"}}]}`

// Manifest is a package.json in vai's layout; extra fields are merged in.
func Manifest(name, version string, extra map[string]any) string {
	m := map[string]any{
		"name": name, "version": version, "description": "A greeting workflow",
		"author": map[string]any{"name": "Ana", "email": "ana@example.com"}, "license": "MIT",
		"keywords": []string{"vai-workflow", "greeting"},
		"vai":      map[string]any{"workflowVersion": "1.0", "category": "utility", "tags": []string{"demo"}, "minVaiVersion": "1.4.0"},
	}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	return string(b)
}

// Files are a package's files by path inside the package.
type Files map[string]string

// Package is the files of a valid package.
func Package(name, version string) Files {
	return Files{"package.json": Manifest(name, version, nil), "workflow.json": Workflow, "README.md": "# " + name + "\n"}
}

// Dir writes files into a new directory and returns it.
func Dir(t *testing.T, files Files) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
	return dir
}

// Entry is one tar entry; Type defaults to a regular file.
type Entry struct {
	Name     string
	Body     string
	Type     byte
	Linkname string
	Size     int64 // declared size, when it should differ from len(Body) (0: len(Body))
	// PAXRecords of a pax header; with Type tar.TypeXGlobalHeader, a global one (git archive
	// writes one first, "comment" the commit's hash).
	PAXRecords map[string]string
}

// Tgz builds an npm tarball: the files under package/, then the extra entries as written.
func Tgz(t *testing.T, files Files, extra ...Entry) []byte {
	t.Helper()
	var entries []Entry
	for p, c := range files {
		entries = append(entries, Entry{Name: "package/" + p, Body: c})
	}
	entries = append(entries, extra...)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		typ := e.Type
		if typ == 0 {
			typ = tar.TypeReg
		}
		h := &tar.Header{Name: e.Name, Typeflag: typ, Mode: 0o644, Linkname: e.Linkname, PAXRecords: e.PAXRecords}
		if typ == tar.TypeXGlobalHeader {
			h = &tar.Header{Name: e.Name, Typeflag: typ, PAXRecords: e.PAXRecords} // archive/tar takes nothing else
		}
		if typ == tar.TypeReg {
			h.Size = int64(len(e.Body))
		}
		require.NoError(t, tw.WriteHeader(h))
		if typ == tar.TypeReg {
			_, err := tw.Write([]byte(e.Body))
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// WriteTgz writes a tarball to a new .tgz file and returns its path.
func WriteTgz(t *testing.T, tgz []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pkg.tgz")
	require.NoError(t, os.WriteFile(p, tgz, 0o644))
	return p
}

// SRI is the sha512 integrity string npm writes for data.
func SRI(data []byte) string {
	sum := sha512.Sum512(data)
	return "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

// SHA1 is the hex sha1 npm writes as dist.shasum.
func SHA1(data []byte) string {
	sum := sha1.Sum(data)
	return hex.EncodeToString(sum[:])
}

// Version is one version a fake registry serves.
type Version struct {
	Version   string
	Tarball   []byte
	Integrity string // "" : SRI(Tarball); "-": none
	Shasum    string
}

// Registry is a fake npm registry.
type Registry struct {
	*httptest.Server
	Tarballs atomic.Int32 // tarball downloads
}

// NewRegistry serves packuments for name (latest: the last version) and their tarballs, and
// finds name in searches as SearchRegistry does.
func NewRegistry(t *testing.T, name string, versions ...Version) *Registry {
	t.Helper()
	r := &Registry{}
	mux := http.NewServeMux()
	r.Server = httptest.NewServer(mux)
	t.Cleanup(r.Close)
	tarballs := map[string][]byte{}
	doc := map[string]any{"name": name}
	vs := map[string]any{}
	for _, v := range versions {
		path := "/tarballs/" + strings.ReplaceAll(name, "/", "-") + "-" + v.Version + ".tgz"
		tarballs[path] = v.Tarball
		dist := map[string]any{"tarball": r.URL + path}
		switch v.Integrity {
		case "":
			dist["integrity"] = SRI(v.Tarball)
		case "-":
		default:
			dist["integrity"] = v.Integrity
		}
		if v.Shasum != "" {
			dist["shasum"] = v.Shasum
		}
		vs[v.Version] = map[string]any{"name": name, "version": v.Version, "dist": dist, "scripts": map[string]any{"postinstall": "touch pwned"}}
		doc["dist-tags"] = map[string]any{"latest": v.Version}
	}
	doc["versions"] = vs
	packument, _ := json.Marshal(doc)
	escaped := "/" + strings.Replace(name, "/", "%2F", 1)
	tags, _ := doc["dist-tags"].(map[string]any)
	latest, _ := tags["latest"].(string)
	mux.HandleFunc("/-/v1/search", func(w http.ResponseWriter, req *http.Request) { // as SearchRegistry's
		var objects []any
		if matches(Hit{Name: name}, strings.Fields(req.URL.Query().Get("text"))) {
			objects = append(objects, map[string]any{"package": map[string]any{"name": name, "version": latest}})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"objects": objects, "total": len(objects)})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		if b, ok := tarballs[req.URL.Path]; ok {
			r.Tarballs.Add(1)
			_, _ = w.Write(b)
			return
		}
		if req.URL.EscapedPath() == escaped || req.URL.Path == "/"+name {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(packument)
			return
		}
		http.NotFound(w, req)
	})
	return r
}

// Hit is a package a fake registry's search knows.
type Hit struct {
	Name, Version, Description string
	Keywords                   []string
}

// SearchRegistry is a fake npm registry's search endpoint (/-/v1/search). As npm's, a text with
// scope:NAME finds the packages of that scope, and every other word must appear in a package's
// name, description or keywords (case-insensitive).
type SearchRegistry struct {
	*httptest.Server
	mu    sync.Mutex
	texts []string // the text of each search, in order
}

// Texts are the texts searched for so far.
func (r *SearchRegistry) Texts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.texts...)
}

// NewSearchRegistry serves searches over hits; status, when not 0, is the answer to every search.
func NewSearchRegistry(t *testing.T, status int, hits ...Hit) *SearchRegistry {
	t.Helper()
	r := &SearchRegistry{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/-/v1/search" {
			http.NotFound(w, req)
			return
		}
		text := req.URL.Query().Get("text")
		r.mu.Lock()
		r.texts = append(r.texts, text)
		r.mu.Unlock()
		if status != 0 {
			http.Error(w, "search is down", status)
			return
		}
		size, err := strconv.Atoi(req.URL.Query().Get("size"))
		if err != nil || size < 1 || size > 250 {
			http.Error(w, "size must be 1..250", http.StatusBadRequest)
			return
		}
		var objects []any
		for _, h := range hits {
			if matches(h, strings.Fields(text)) && len(objects) < size {
				objects = append(objects, map[string]any{"package": map[string]any{
					"name": h.Name, "version": h.Version, "description": h.Description, "keywords": h.Keywords,
					"date": "2026-01-02T03:04:05.000Z", "publisher": map[string]any{"username": "ana"}}})
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"objects": objects, "total": len(objects)})
	}))
	t.Cleanup(r.Close)
	return r
}

func matches(h Hit, words []string) bool {
	hay := strings.ToLower(h.Name + " " + h.Description + " " + strings.Join(h.Keywords, " "))
	for _, w := range words {
		if scope, ok := strings.CutPrefix(w, "scope:"); ok {
			if !strings.HasPrefix(h.Name, "@"+scope+"/") {
				return false
			}
			continue
		}
		if !strings.Contains(hay, strings.ToLower(w)) {
			return false
		}
	}
	return true
}
