package activities

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/require"
)

// bareServer is a Git smart-HTTP server (git http-backend) whose bare repositories the tests
// build object by object, trees git itself would not make included.
type bareServer struct {
	*httptest.Server
	root, home string
	mu         sync.Mutex
	headers    []http.Header
}

func newBareServer(t *testing.T) *bareServer {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("git is not on PATH: the Git source tests need it to run a smart-HTTP server")
		}
		t.Skip("git is not on PATH: the Git source tests serve repositories with git http-backend")
	}
	s := &bareServer{root: t.TempDir(), home: t.TempDir()}
	h := &cgi.Handler{Path: gitPath, Args: []string{"http-backend"}, Env: []string{
		"GIT_PROJECT_ROOT=" + s.root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + s.home}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.headers = append(s.headers, r.Header.Clone())
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *bareServer) git(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+s.home, "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.Output()
	require.NoError(t, err, "git %v", args)
	return strings.TrimSpace(string(out))
}

// bare makes name.git whose main branch's one commit has the tree mk builds (given the bare
// repository's directory), and returns its URL.
func (s *bareServer) bare(t *testing.T, name string, mk func(bare string) string) string {
	t.Helper()
	bare := filepath.Join(s.root, name+".git")
	s.git(t, s.root, "", "init", "-q", "--bare", "-b", "main", bare)
	commit := s.git(t, bare, "", "commit-tree", mk(bare), "-m", "x")
	s.git(t, bare, "", "update-ref", "refs/heads/main", commit)
	return s.URL + "/" + name + ".git"
}

// rawTree writes a tree object of entries (mode, name, object name) as given, names git's mktree
// would refuse included.
func (s *bareServer) rawTree(t *testing.T, bare string, entries [][3]string) string {
	t.Helper()
	var b []byte
	for _, e := range entries {
		b = append(b, e[0]+" "+e[1]+"\x00"...)
		h, err := hex.DecodeString(e[2])
		require.NoError(t, err)
		b = append(b, h...)
	}
	cmd := exec.Command("git", "hash-object", "-t", "tree", "-w", "--literally", "--stdin")
	cmd.Dir = bare
	cmd.Stdin = bytes.NewReader(b)
	out, err := cmd.Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

// manyEmpty is a tree naming a tree of width empty files width times, levels deep: width^levels
// files from a pack of a few KB.
func (s *bareServer) manyEmpty(t *testing.T, bare string, width, levels int) string {
	empty := s.git(t, bare, "", "hash-object", "-w", "-t", "blob", "--stdin")
	var b strings.Builder
	for i := range width {
		fmt.Fprintf(&b, "100644 blob %s\tf%04d.go\n", empty, i)
	}
	tree := s.git(t, bare, b.String(), "mktree")
	for range levels - 1 {
		b.Reset()
		for i := range width {
			fmt.Fprintf(&b, "040000 tree %s\td%04d\n", tree, i)
		}
		tree = s.git(t, bare, b.String(), "mktree")
	}
	return tree
}

func (s *bareServer) tools(cfg Config) *Tools {
	cfg.CodeGitHosts, cfg.CodeGitAllow = []string{s.URL}, []string{"127.0.0.1"}
	return NewTools(cfg)
}

// cloneErr clones url with tools and returns the error, removing what a clone that succeeded wrote.
func cloneErr(t *testing.T, tools *Tools, url string) error {
	t.Helper()
	repo, err := tools.codeGitRepo(url, "")
	require.NoError(t, err)
	_, _, cleanup, err := tools.cloneCodeRepo(context.Background(), repo, 1<<20)
	if cleanup != nil {
		cleanup()
	}
	return err
}

// TestCodeGitManyEmptyFiles: empty files are not free. A tree naming one subtree of 1000 empty
// files 300 times (300,000 files from a pack of a few KB) is refused, never retried, by the byte
// bound (each file counts a block) or by the file bound, whichever comes first, naming the
// setting to raise; a tree a thousand times larger (10^9 files) too, well before the timeout.
func TestCodeGitManyEmptyFiles(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	s := newBareServer(t)
	wide := s.bare(t, "wide", func(bare string) string { return s.manyEmpty(t, bare, 1000, 2) })
	deep := s.bare(t, "deep", func(bare string) string { return s.manyEmpty(t, bare, 1000, 3) })
	for _, c := range []struct {
		name string
		cfg  Config
		url  string
		err  string
	}{
		{"the byte bound counts each file as a block", Config{CodeGitMaxBytes: 64 << 10}, wide, "holds more than the 65536 bytes code_index may fetch of a repository (WEFT_CODE_GIT_MAX_BYTES)"},
		{"the file bound", Config{CodeGitMaxFiles: 500}, wide, "has more than 500 files, the most code_index writes out of a repository (WEFT_CODE_GIT_MAX_FILES)"},
		// The bound, not the clock, must stop it: writing out the files up to the default bound took
		// over a minute under -race on a loaded 2-core machine (a CI run failed on the timeout).
		{"the default bounds, 10^9 files", Config{CodeGitTimeout: 10 * time.Minute}, deep, "(WEFT_CODE_GIT_MA"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := cloneErr(t, s.tools(c.cfg), c.url)
			require.ErrorContains(t, err, c.err)
			var ie *InputError
			require.True(t, asInput(err, &ie), "never retried: %v", err)
			left, _ := filepath.Glob(filepath.Join(tmp, "weft-code-git-*"))
			require.Empty(t, left, "the clone is removed")
		})
	}
}

// TestCodeGitWritingTimesOut: a clone whose files take longer to write than WEFT_CODE_GIT_TIMEOUT
// says so, naming the setting, and is not retried (the same tree takes as long again).
func TestCodeGitWritingTimesOut(t *testing.T) {
	s := newBareServer(t)
	s.bare(t, "slow", func(bare string) string { return s.manyEmpty(t, bare, 10, 2) })
	r, err := gogit.PlainOpen(filepath.Join(s.root, "slow.git"))
	require.NoError(t, err)
	ref, err := r.Reference(plumbing.NewBranchReferenceName("main"), true)
	require.NoError(t, err)
	commit, err := r.CommitObject(ref.Hash())
	require.NoError(t, err)
	tree, err := commit.Tree()
	require.NoError(t, err)
	guard := &gitClone{max: 1 << 30, maxFiles: 1 << 20, timeout: time.Minute, repo: "https://example.org/o/r"}
	past, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	_, err = writeGitTree(past, tree, t.TempDir(), 1<<20, guard)
	require.ErrorContains(t, err, "writing out the files of repo https://example.org/o/r took longer than 1m0s (WEFT_CODE_GIT_TIMEOUT)")
	var ie *InputError
	require.True(t, asInput(err, &ie), "never retried: %v", err)
}

// TestCodeGitPackInflatesInMemory: a blob of 128 MiB of zeros travels as a pack of about 128 KB,
// under the download bound; go-git would inflate it whole while indexing the pack. The pack is
// checked as it arrives, so the clone is refused (never retried) before that, and allocates
// little.
func TestCodeGitPackInflatesInMemory(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	s := newBareServer(t)
	url := s.bare(t, "zeros", func(bare string) string {
		cmd := exec.Command("sh", "-c", "head -c 134217728 /dev/zero | git hash-object -w --stdin")
		cmd.Dir = bare
		out, err := cmd.Output()
		require.NoError(t, err)
		return s.git(t, bare, fmt.Sprintf("100644 blob %s\tzeros.txt\n", strings.TrimSpace(string(out))), "mktree")
	})
	tools := s.tools(Config{CodeGitMaxBytes: 4 << 20})
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := cloneErr(t, tools, url)
	runtime.ReadMemStats(&after)
	require.ErrorContains(t, err, "holds more than the 4194304 bytes code_index may fetch of a repository (WEFT_CODE_GIT_MAX_BYTES)")
	var ie *InputError
	require.True(t, asInput(err, &ie), "never retried: %v", err)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(32<<20), "the blob is never inflated in memory")
}

// packObject is one object of a hand-made pack: its type (1 commit ... 3 blob, 7 a delta by
// name), the size its header declares and its data (inflated).
type packObject struct {
	typ      byte
	declared int
	data     []byte
}

func pack(t *testing.T, objs ...packObject) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("PACK")
	_ = binary.Write(&b, binary.BigEndian, uint32(2))
	_ = binary.Write(&b, binary.BigEndian, uint32(len(objs)))
	for _, o := range objs {
		size := o.declared
		c := o.typ<<4 | byte(size&15)
		size >>= 4
		for size > 0 {
			b.WriteByte(c | 0x80)
			c = byte(size & 0x7f)
			size >>= 7
		}
		b.WriteByte(c)
		if o.typ == packRefDelta {
			b.Write(make([]byte, 20))
		}
		zw := zlib.NewWriter(&b)
		_, err := zw.Write(o.data)
		require.NoError(t, err)
		require.NoError(t, zw.Close())
	}
	sum := sha1.Sum(b.Bytes())
	b.Write(sum[:])
	return b.Bytes()
}

func varint(n int) []byte {
	var out []byte
	for {
		c := byte(n & 0x7f)
		if n >>= 7; n == 0 {
			return append(out, c)
		}
		out = append(out, c|0x80)
	}
}

type nopWriteCloser struct{ bytes.Buffer }

func (*nopWriteCloser) Close() error { return nil }

// TestCodeGitPackCheck: what the pack check refuses, fed in small pieces as a pack arrives: an
// object declaring more than the bound, a delta whose target is larger, data inflating past
// what its header declares, and objects adding up to more than the bound; nothing of a refused
// object reaches go-git.
func TestCodeGitPackCheck(t *testing.T) {
	const limit = 1 << 20
	zeros := make([]byte, 600<<10)
	delta := append(append(varint(10), varint(2<<20)...), 0x80|0x10, 0x10) // copy 16 bytes, 2 MiB target
	for _, c := range []struct {
		name string
		pack []byte
		err  string
	}{
		{"a small pack", pack(t, packObject{3, 5, []byte("hello")}, packObject{3, 0, nil}), ""},
		{"an object over the bound", pack(t, packObject{3, 2 << 20, make([]byte, 2<<20)}), "holds more than"},
		{"a delta's target over the bound", pack(t, packObject{packRefDelta, len(delta), delta}), "holds more than"},
		{"data past its declared size", pack(t, packObject{3, 10, zeros}), "declared 10 bytes and held more"},
		{"objects adding up past the bound", pack(t, packObject{3, len(zeros), zeros}, packObject{3, len(zeros), zeros}), "holds more than"},
		{"not a pack", append([]byte("HTTP/1.1 200 OK\r\n\r\n"), make([]byte, 100)...), "not a Git pack"},
	} {
		t.Run(c.name, func(t *testing.T) {
			guard := &gitClone{max: limit, repo: "https://example.org/o/r"}
			out := &nopWriteCloser{}
			w := newGitPackCheck(out, guard)
			var err error
			for p := c.pack; len(p) > 0 && err == nil; {
				n := min(len(p), 1000)
				_, err = w.Write(p[:n])
				p = p[n:]
			}
			if cerr := w.Close(); err == nil {
				err = cerr
			}
			if c.err == "" {
				require.NoError(t, err)
				require.Equal(t, c.pack, out.Bytes())
				return
			}
			require.ErrorContains(t, err, c.err)
			require.Less(t, out.Len(), len(c.pack)-20, "the pack is stopped before its end reaches go-git")
		})
	}
}

// TestCodeGitMalformedTrees: a tree naming .git, .., a name holding a /, or one name twice (as
// a file and a directory, or as two files) is refused, never retried, naming the repository and
// the entry and not the worker's temporary paths; nothing is written outside the clone, and the
// clone is removed.
func TestCodeGitMalformedTrees(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	s := newBareServer(t)
	for _, c := range []struct {
		name    string
		entries func(blob, sub string) [][3]string
		err     string
	}{
		{"dotgit", func(blob, sub string) [][3]string {
			return [][3]string{{"40000", ".git", sub}, {"100644", "ok.go", blob}}
		}, `".git"`},
		{"dotgit-case", func(blob, sub string) [][3]string { return [][3]string{{"40000", ".GIT", sub}} }, `".GIT"`},
		{"dotdot", func(blob, sub string) [][3]string { return [][3]string{{"100644", "../escape.go", blob}} }, `"../escape.go"`},
		{"slash", func(blob, sub string) [][3]string { return [][3]string{{"100644", "/abs.go", blob}} }, `entry "/abs.go"`},
		{"file-and-dir", func(blob, sub string) [][3]string {
			return [][3]string{{"100644", "a", blob}, {"40000", "a", sub}}
		}, `entry "a/escaped.go" is named twice`},
		{"dup-file", func(blob, sub string) [][3]string {
			return [][3]string{{"100644", "a.go", blob}, {"100644", "a.go", blob}}
		}, `entry "a.go" is named twice`},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := s.bare(t, c.name, func(bare string) string {
				blob := s.git(t, bare, "package x\n", "hash-object", "-w", "--stdin")
				sub := s.git(t, bare, fmt.Sprintf("100644 blob %s\tescaped.go\n", blob), "mktree")
				return s.rawTree(t, bare, c.entries(blob, sub))
			})
			err := cloneErr(t, s.tools(Config{}), url)
			require.ErrorContains(t, err, c.err)
			require.ErrorContains(t, err, "repo "+strings.TrimSuffix(url, ".git")+" has a malformed tree")
			require.NotContains(t, err.Error(), tmp)
			var ie *InputError
			require.True(t, asInput(err, &ie), "never retried: %v", err)
			esc, _ := filepath.Glob(filepath.Join(tmp, "*.go"))
			require.Empty(t, esc)
			left, _ := filepath.Glob(filepath.Join(tmp, "weft-code-git-*"))
			require.Empty(t, left)
		})
	}
}

// TestCodeGitStaleClones: a clone removes what earlier clones left in the temporary directory
// (a worker that died) once older than an hour, and nothing younger (a clone under way).
func TestCodeGitStaleClones(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	s := newBareServer(t)
	url := s.bare(t, "small", func(bare string) string {
		blob := s.git(t, bare, "package x\n", "hash-object", "-w", "--stdin")
		return s.git(t, bare, fmt.Sprintf("100644 blob %s\tx.go\n", blob), "mktree")
	})
	old, young := filepath.Join(tmp, "weft-code-git-1"), filepath.Join(tmp, "weft-code-git-2")
	for _, d := range []string{old, young} {
		require.NoError(t, os.MkdirAll(filepath.Join(d, "src"), 0o700))
	}
	require.NoError(t, os.Chtimes(old, time.Now().Add(-2*time.Hour), time.Now().Add(-2*time.Hour)))
	require.NoError(t, cloneErr(t, s.tools(Config{}), url))
	left, _ := filepath.Glob(filepath.Join(tmp, "weft-code-git-*"))
	require.Equal(t, []string{young}, left)
}

// TestCodeGitTransportStaysGuarded: after useGitTransport, go-git clones nothing by itself: not
// a file:// URL or a local path (its file transport is removed), nor over http without a
// code_index clone's guard; and a request made under the guard never carries an Authorization
// or Cookie header to the server.
func TestCodeGitTransportStaysGuarded(t *testing.T) {
	useGitTransport()
	s := newBareServer(t)
	url := s.bare(t, "f", func(bare string) string {
		blob := s.git(t, bare, "package x\n", "hash-object", "-w", "--stdin")
		return s.git(t, bare, fmt.Sprintf("100644 blob %s\tx.go\n", blob), "mktree")
	})
	for _, u := range []string{"file://" + s.root + "/f.git", s.root + "/f.git", url} {
		_, err := gogit.PlainClone(t.TempDir(), false, &gogit.CloneOptions{URL: u})
		require.Error(t, err, u)
	}

	tools := s.tools(Config{})
	guard := &gitClone{t: tools, base: tools.codeGitClient(time.Minute), max: 1 << 20, repo: url}
	guard.left.Store(1 << 20)
	req, err := http.NewRequestWithContext(context.WithValue(context.Background(), gitCloneKey{}, guard), http.MethodGet, url+"/info/refs?service=git-upload-pack", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Basic d29ya2VyOnNlY3JldA==")
	req.Header.Set("Cookie", "session=s3cret")
	resp, err := gitTransport{}.RoundTrip(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())
	s.mu.Lock()
	defer s.mu.Unlock()
	require.NotEmpty(t, s.headers)
	for _, h := range s.headers {
		require.Empty(t, h.Get("Authorization"))
		require.Empty(t, h.Get("Cookie"))
	}
}

// TestCodeGitPackCheckReadsGitsDeltas: packs git itself makes, with deltas by offset and by
// name, pass the check whole, and are refused when a delta's result is over the bound.
func TestCodeGitPackCheckReadsGitsDeltas(t *testing.T) {
	s := newBareServer(t)
	var text strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&text, "line %d of a file that two files share\n", i)
	}
	bare := filepath.Join(s.root, "deltas.git")
	s.bare(t, "deltas", func(bare string) string {
		a := s.git(t, bare, text.String(), "hash-object", "-w", "--stdin")
		b := s.git(t, bare, text.String()+"one more line\n", "hash-object", "-w", "--stdin")
		return s.git(t, bare, fmt.Sprintf("100644 blob %s\ta.txt\n100644 blob %s\tb.txt\n", a, b), "mktree")
	})
	for _, c := range []struct {
		name  string
		flag  string
		limit int64
		err   string
	}{
		{"by offset", "--delta-base-offset", 1 << 20, ""},
		{"by name", "--no-reuse-delta", 1 << 20, ""},
		{"by offset, over the bound", "--delta-base-offset", int64(text.Len()) + 1000, "holds more than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command("git", "pack-objects", "--stdout", "--revs", c.flag)
			cmd.Dir = bare
			cmd.Stdin = strings.NewReader("main\n")
			p, err := cmd.Output()
			require.NoError(t, err)
			out := &nopWriteCloser{}
			w := newGitPackCheck(out, &gitClone{max: c.limit, repo: "https://example.org/o/r"})
			for q := p; len(q) > 0 && err == nil; {
				n := min(len(q), 777)
				_, err = w.Write(q[:n])
				q = q[n:]
			}
			if cerr := w.Close(); err == nil {
				err = cerr
			}
			if c.err == "" {
				require.NoError(t, err)
				require.Equal(t, p, out.Bytes())
				return
			}
			require.ErrorContains(t, err, c.err)
		})
	}
}
