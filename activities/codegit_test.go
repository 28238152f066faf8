package activities_test

import (
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/weftworks/weft/activities"
)

// gitServer is a real Git smart-HTTP server (git http-backend behind net/http/cgi) serving the
// bare repositories under root, and what it was asked.
type gitServer struct {
	*httptest.Server
	root string
	home string

	mu      sync.Mutex
	headers []http.Header
}

// newGitServer starts a Git server on addr (127.0.0.1:0 when empty). It needs git on PATH; the
// test is skipped without it, unless CI=true, where it fails.
func newGitServer(t *testing.T, addr string) *gitServer {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("git is not on PATH: the Git source tests need it to run a smart-HTTP server (git http-backend)")
		}
		t.Skip("git is not on PATH: the Git source tests serve repositories with git http-backend; install git to run them")
	}
	s := &gitServer{root: t.TempDir(), home: t.TempDir()}
	h := &cgi.Handler{Path: gitPath, Args: []string{"http-backend"}, Env: []string{
		"GIT_PROJECT_ROOT=" + s.root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + s.home,
	}}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.headers = append(s.headers, r.Header.Clone())
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	if addr != "" {
		l, err := net.Listen("tcp", addr)
		require.NoError(t, err)
		s.Listener = l
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// git runs git in dir with no configuration of the machine's.
func (s *gitServer) git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+s.home, "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %s: %s", strings.Join(args, " "), out)
}

// repo makes (or updates) the bare repository name.git from a working tree holding files
// (a nil content deletes the file), committed on main and tagged tag when given; it returns the
// repository's URL.
func (s *gitServer) repo(t *testing.T, name string, files map[string][]byte, tag string) string {
	t.Helper()
	work := filepath.Join(s.root, "work-"+name)
	if _, err := os.Stat(work); err != nil {
		require.NoError(t, os.MkdirAll(work, 0o755))
		s.git(t, work, "init", "-q", "-b", "main")
	}
	for p, c := range files {
		full := filepath.Join(work, filepath.FromSlash(p))
		if c == nil {
			require.NoError(t, os.Remove(full))
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, c, 0o644))
	}
	s.git(t, work, "add", "-A")
	s.git(t, work, "commit", "-q", "-m", "change")
	if tag != "" {
		s.git(t, work, "tag", tag)
	}
	return s.publish(t, name)
}

// publish makes the bare repository name.git served from its working tree again (after a
// change made with git in it), and returns its URL.
func (s *gitServer) publish(t *testing.T, name string) string {
	t.Helper()
	bare := filepath.Join(s.root, name+".git")
	_ = os.RemoveAll(bare)
	s.git(t, s.root, "clone", "-q", "--bare", filepath.Join(s.root, "work-"+name), bare)
	return s.URL + "/" + name + ".git"
}

func (s *gitServer) sawHeader(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range s.headers {
		if h.Get(name) != "" {
			return true
		}
	}
	return false
}

// TestCodeIndexClonesAGitRepository: code_index clones a repository from a real Git server,
// indexes its files under the repository's URL (code_status lists it), indexes a tag (a light one
// and an annotated one) under URL#tag,
// and re-indexing after a push removes the chunks of the file deleted. Nothing of the worker's
// is sent (its proxy, a credential in its git config), and the clone is removed afterwards.
func TestCodeIndexClonesAGitRepository(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:9")
	home := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[http]\n\textraHeader = Authorization: Basic d29ya2VyOnNlY3JldA==\n"), 0o600))
	t.Setenv("HOME", home)

	srv := newGitServer(t, "")
	repoURL := srv.repo(t, "shop", map[string][]byte{
		"auth/token.go":      []byte("package auth\n\n// IssueToken signs a session token for the user.\nfunc IssueToken(user string) string {\n\treturn sign(user)\n}\n"),
		"billing/invoice.py": []byte("def send_invoice(customer, amount):\n    return mail(customer, amount)\n"),
		"README.md":          []byte("# shop\n"),
	}, "v1")
	cfg := activities.Config{MongoDBURI: storeURI, CodeGitAllow: []string{"127.0.0.1"}, CodeGitHosts: []string{srv.URL}}
	emptiedAfter(t, "codegit1", "repo")

	res, err := run(t, cfg, "code_index", map[string]any{"repo": repoURL, "db": "codegit1", "collection": "repo"})
	require.NoError(t, err)
	out := res.Output.(map[string]any)
	root := strings.TrimSuffix(repoURL, ".git") // the root is the URL without .git
	require.Equal(t, root, out["path"])
	require.Equal(t, float64(3), out["files"])
	require.Equal(t, map[string]any{"go": float64(1), "python": float64(1), "markdown": float64(1)}, out["languages"])

	res, err = run(t, cfg, "code_search", map[string]any{"query": "sign a session token", "db": "codegit1", "collection": "repo", "limit": 1})
	require.NoError(t, err)
	require.Equal(t, "auth/token.go", res.Output.(map[string]any)["results"].([]any)[0].(map[string]any)["path"])

	srv.git(t, filepath.Join(srv.root, "work-shop"), "tag", "-a", "release-1", "-m", "an annotated tag")
	srv.repo(t, "shop", map[string][]byte{"billing/invoice.py": nil}, "")
	res, err = run(t, cfg, "code_index", map[string]any{"repo": repoURL, "db": "codegit1", "collection": "repo"})
	require.NoError(t, err)
	out = res.Output.(map[string]any)
	require.Equal(t, float64(2), out["files"])
	require.Greater(t, out["removed"], float64(0), "the deleted file's chunks are removed")

	res, err = run(t, cfg, "code_index", map[string]any{"repo": repoURL, "ref": "v1", "db": "codegit1", "collection": "repo"})
	require.NoError(t, err)
	require.Equal(t, root+"#v1", res.Output.(map[string]any)["path"])
	require.Equal(t, float64(3), res.Output.(map[string]any)["files"], "the tag still has the file main deleted")

	res, err = run(t, cfg, "code_index", map[string]any{"repo": repoURL, "ref": "release-1", "db": "codegit1", "collection": "repo"})
	require.NoError(t, err)
	require.Equal(t, float64(3), res.Output.(map[string]any)["files"], "an annotated tag is read as its commit")

	res, err = run(t, cfg, "code_status", map[string]any{"db": "codegit1", "collection": "repo"})
	require.NoError(t, err)
	require.Equal(t, []any{root, root + "#release-1", root + "#v1"}, res.Output.(map[string]any)["roots"])

	require.False(t, srv.sawHeader("Authorization"), "no credential of the worker's is sent")
	require.False(t, srv.sawHeader("Cookie"))
	left, err := filepath.Glob(filepath.Join(tmp, "weft-code-git-*"))
	require.NoError(t, err)
	require.Empty(t, left, "the clone is removed")
}

// TestCodeIndexGitSourceBoundaries (a server's URL, http://127.0.0.1:PORT, is the
// WEFT_CODE_GIT_HOSTS entry allowing plain http to it): a repo URL reaches only what the operator allowed: an https
// (or operator-listed http) URL on a listed host, dialled through the private-address guard,
// redirects included, within the size bound; anything else is refused, never retried, with the
// setting or input to change.
func TestCodeIndexGitSourceBoundaries(t *testing.T) {
	srv := newGitServer(t, "")
	small := srv.repo(t, "small", map[string][]byte{"main.go": []byte("package main\n\nfunc main() {}\n")}, "")
	noise := make([]byte, 64<<10)
	_, _ = rand.Read(noise)
	big := srv.repo(t, "big", map[string][]byte{"main.go": []byte("package main\n"), "blob.txt": noise}, "")
	inflating := map[string][]byte{}
	for i := range 8 {
		inflating[fmt.Sprintf("gen%d.go", i)] = append([]byte(fmt.Sprintf("package gen // %d\n", i)), make([]byte, 500<<10)...)
	}
	bomb := srv.repo(t, "bomb", inflating, "")

	// other is a second Git server on another loopback address, which the guard does not allow.
	other := newGitServer(t, "127.0.0.2:0")
	other.repo(t, "small", map[string][]byte{"main.go": []byte("package main\n")}, "")
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		to := srv.URL
		if strings.HasPrefix(r.URL.Path, "/private/") {
			to = other.URL
			r.URL.Path = strings.TrimPrefix(r.URL.Path, "/private")
		}
		u, _ := url.Parse(to)
		u.Path, u.RawQuery = r.URL.Path, r.URL.RawQuery
		http.Redirect(w, r, u.String(), http.StatusFound)
	}))
	t.Cleanup(redirector.Close)

	allowLoopback := []string{"127.0.0.1"}
	cases := []struct {
		name  string
		hosts []string
		allow []string
		max   int64
		in    map[string]any
		err   string
	}{
		{"no hosts allowed", nil, allowLoopback, 0, map[string]any{"repo": small}, "set WEFT_CODE_GIT_HOSTS"},
		{"host not allowed", []string{"github.com"}, allowLoopback, 0, map[string]any{"repo": small}, "is not one code_index may clone from (WEFT_CODE_GIT_HOSTS)"},
		{"same host, other port", []string{"http://127.0.0.1:1"}, allowLoopback, 0, map[string]any{"repo": small}, "is not one code_index may clone from"},
		{"plain http to an https entry", []string{strings.TrimPrefix(srv.URL, "http://")}, allowLoopback, 0, map[string]any{"repo": small}, "plain http is refused"},
		{"private address not allowed", []string{srv.URL}, nil, 0, map[string]any{"repo": small}, "WEFT_CODE_GIT_ALLOW"},
		{"a listed name that resolves to a private address", []string{strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)}, nil, 0,
			map[string]any{"repo": strings.Replace(small, "127.0.0.1", "localhost", 1)}, "WEFT_CODE_GIT_ALLOW"},
		{"file URL", []string{srv.URL}, allowLoopback, 0, map[string]any{"repo": "file://" + srv.root + "/small.git"}, "scheme file is refused"},
		{"ssh URL", []string{"127.0.0.1"}, allowLoopback, 0, map[string]any{"repo": "ssh://git@127.0.0.1/small.git"}, "scheme ssh is refused"},
		{"git URL", []string{"127.0.0.1"}, allowLoopback, 0, map[string]any{"repo": "git://127.0.0.1/small.git"}, "scheme git is refused"},
		{"scp-style address", []string{"127.0.0.1"}, allowLoopback, 0, map[string]any{"repo": "git@127.0.0.1:small.git"}, "scp-style addresses"},
		{"local path", []string{"127.0.0.1"}, allowLoopback, 0, map[string]any{"repo": srv.root + "/small.git"}, "local paths"},
		{"credentials in the URL", []string{srv.URL}, allowLoopback, 0, map[string]any{"repo": strings.Replace(small, "http://", "http://user:s3cret@", 1)}, "credentials in the URL are refused"},
		{"a query in the URL", []string{srv.URL}, allowLoopback, 0, map[string]any{"repo": small + "?private_token=s3cret"}, "a query or fragment is refused"},
		{"redirect to a host not allowed", []string{redirector.URL}, allowLoopback, 0, map[string]any{"repo": redirector.URL + "/small.git"}, "was redirected to http://" + strings.TrimPrefix(srv.URL, "http://")},
		{"redirect to a private address", []string{redirector.URL, other.URL}, allowLoopback, 0, map[string]any{"repo": redirector.URL + "/private/small.git"}, "WEFT_CODE_GIT_ALLOW"},
		{"too large to download", []string{srv.URL}, allowLoopback, 16 << 10, map[string]any{"repo": big}, "more than the 16384 bytes code_index may fetch of a repository (WEFT_CODE_GIT_MAX_BYTES)"},
		{"inflates past the bound", []string{srv.URL}, allowLoopback, 256 << 10, map[string]any{"repo": bomb}, "holds more than the 262144 bytes"},
		{"unknown ref", []string{srv.URL}, allowLoopback, 0, map[string]any{"repo": small, "ref": "nope"}, `has no branch or tag "nope"`},
		{"path and repo", []string{srv.URL}, allowLoopback, 0, map[string]any{"repo": small, "path": "."}, "not both"},
		{"ref without repo", []string{srv.URL}, allowLoopback, 0, map[string]any{"path": ".", "ref": "main"}, "add repo, or remove ref"},
		{"a URL as path", []string{srv.URL}, allowLoopback, 0, map[string]any{"path": small}, "as repo, not path"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := activities.Config{MongoDBURI: storeURI, CodeGitHosts: c.hosts, CodeGitAllow: c.allow, CodeGitMaxBytes: c.max}
			in := map[string]any{"db": "codegit2", "collection": "repo"}
			for k, v := range c.in {
				in[k] = v
			}
			_, err := run(t, cfg, "code_index", in)
			require.ErrorContains(t, err, c.err)
			require.NotContains(t, err.Error(), "s3cret", "a credential in the URL is not repeated")
			var ae *temporal.ApplicationError
			require.ErrorAs(t, err, &ae)
			require.True(t, ae.NonRetryable(), "no retry helps: %v", err)
		})
	}
	require.False(t, other.sawHeader("User-Agent"), "the server the guard refuses is never reached")
}

// TestCodeGitAllowOpensCodeIndexOnly: an internal Git host's address is opened to code_index by
// WEFT_CODE_GIT_ALLOW, not to the http tool; and WEFT_HTTP_ALLOW, the http tool's, does not open
// it to code_index.
func TestCodeGitAllowOpensCodeIndexOnly(t *testing.T) {
	srv := newGitServer(t, "")
	small := srv.repo(t, "small", map[string][]byte{"main.go": []byte("package main\n")}, "")
	emptiedAfter(t, "codegit3", "repo")
	gitOnly := activities.Config{MongoDBURI: storeURI, CodeGitHosts: []string{srv.URL}, CodeGitAllow: []string{"127.0.0.1"}}
	_, err := run(t, gitOnly, "code_index", map[string]any{"repo": small, "db": "codegit3", "collection": "repo"})
	require.NoError(t, err)
	_, err = run(t, gitOnly, "http", map[string]any{"url": small + "/info/refs?service=git-upload-pack"})
	require.ErrorContains(t, err, "WEFT_HTTP_ALLOW", "the http tool is not opened to the Git host")

	httpOnly := activities.Config{MongoDBURI: storeURI, CodeGitHosts: []string{srv.URL}, HTTPAllow: []string{"127.0.0.1"}}
	_, err = run(t, httpOnly, "code_index", map[string]any{"repo": small, "db": "codegit3", "collection": "repo"})
	require.ErrorContains(t, err, "WEFT_CODE_GIT_ALLOW")
}
