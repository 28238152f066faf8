package activities

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	gitclient "github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/weftworks/weft/activities/toolspec"
)

// A Git repository code_index clones comes from a file's author, an MCP client or a model, so
// the clone reaches only what the operator allowed:
//   - the URL is https (http only to a host the operator wrote as http://host), with no user
//     info, query or fragment, on a host WEFT_CODE_GIT_HOSTS lists; file://, ssh, git:// and
//     local paths never reach go-git;
//   - every request, a redirect's included, is checked against the same list, and every dial
//     goes through a private-address guard like the http tool's, with an allowance of its own
//     (WEFT_CODE_GIT_ALLOW), so opening an internal Git host does not open it to the http tool;
//   - nothing of the worker's is sent: no proxy, no credentials (go-git reads no git config or
//     credential helper, and Authorization and Cookie headers are removed), no process started;
//   - the download, what its pack inflates to (checked as it arrives, codegitpack.go) and the
//     files written (each at least a block) are bounded (WEFT_CODE_GIT_MAX_BYTES), the files of
//     its tree too (WEFT_CODE_GIT_MAX_FILES), and the clone's time (WEFT_CODE_GIT_TIMEOUT); the
//     clone is shallow and removed afterwards, and one left by a worker that died is removed by
//     the next clone.

const (
	defaultCodeGitMaxBytes = 256 << 20
	defaultCodeGitMaxFiles = 100_000
	defaultCodeGitTimeout  = 5 * time.Minute
	// gitFileBlock is the least a written file counts against the byte bound: an empty file
	// costs a directory entry and an inode, and a tree can name one subtree many times.
	gitFileBlock = 4096
)

// gitRepo is a repository a code_index step names, checked against the operator's settings.
type gitRepo struct {
	url *url.URL
	ref string
}

// root is the name its chunks are stored under (metadata.root), so indexing the same repository
// at the same ref again replaces them: its URL, and #ref when a ref was given (a repo URL holds
// no fragment, so no URL reads as another's at a ref). The URL is normalised so one repository
// has one root: host in lower case, no default port, path cleaned, without a trailing / or .git.
func (r gitRepo) root() string {
	u := *r.url
	if p := u.Port(); (u.Scheme == "https" && p == "443") || (u.Scheme == "http" && p == "80") {
		u.Host = u.Hostname()
		if strings.Contains(u.Host, ":") {
			u.Host = "[" + u.Host + "]"
		}
	}
	p := path.Clean("/" + u.Path)
	for {
		q := strings.TrimSuffix(strings.TrimSuffix(p, "/"), ".git")
		if q == p {
			break
		}
		p = q
	}
	u.Path, u.RawPath = p, ""
	if u.Path == "/" {
		u.Path = ""
	}
	if r.ref == "" {
		return u.String()
	}
	return u.String() + "#" + r.ref
}

// codeGitRepo checks the repository a step names: scheme, host and form.
func (t *Tools) codeGitRepo(raw, ref string) (gitRepo, error) {
	if len(t.cfg.CodeGitHosts) == 0 {
		return gitRepo{}, &ConfigError{Msg: "code_index clones Git repositories only from hosts the operator allows, and none are: set WEFT_CODE_GIT_HOSTS on the worker to the hosts it may clone from (comma-separated, e.g. github.com,gitlab.com)"}
	}
	if err := checkCodeGitHosts(t.cfg.CodeGitHosts); err != nil {
		return gitRepo{}, err
	}
	u, err := toolspec.CodeRepoURL(raw)
	if err != nil {
		return gitRepo{}, &InputError{Msg: fmt.Sprintf("repo %q %v", redactURL(raw), err)}
	}
	if err := t.codeGitHostAllowed(u); err != nil {
		return gitRepo{}, err
	}
	if ref != "" {
		if strings.HasPrefix(ref, "-") || strings.ContainsAny(ref, " \t\n:~^?*[\\") || strings.Contains(ref, "..") {
			return gitRepo{}, &InputError{Msg: fmt.Sprintf("ref %q is not a branch or tag name", ref)}
		}
	}
	u.Host = strings.ToLower(u.Host)
	return gitRepo{url: u, ref: ref}, nil
}

// codeGitHostAllowed says whether WEFT_CODE_GIT_HOSTS lets code_index reach u: an entry
// host[:port] allows https to it (port 443 when it names none); http://host[:port] allows plain
// http too (port 80 when it names none, for http).
func (t *Tools) codeGitHostAllowed(u *url.URL) error {
	host, port := strings.ToLower(u.Hostname()), u.Port()
	scheme := strings.ToLower(u.Scheme)
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[scheme]
	}
	httpsOnly := false
	for _, e := range t.cfg.CodeGitHosts {
		if codeGitHostEntryError(e) != "" {
			continue
		}
		e = strings.ToLower(strings.TrimSpace(e))
		plain := strings.HasPrefix(e, "http://")
		e = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(e, "http://"), "https://"), "/")
		eh, ep := e, ""
		if h, p, err := net.SplitHostPort(e); err == nil {
			eh, ep = h, p
		}
		eh = strings.TrimSuffix(strings.TrimPrefix(eh, "["), "]")
		if eh != host {
			continue
		}
		if scheme == "http" && !plain {
			httpsOnly = true
			continue
		}
		if ep == "" {
			ep = map[string]string{"https": "443", "http": "80"}[scheme]
		}
		if ep == port {
			return nil
		}
	}
	if httpsOnly {
		return &InputError{Msg: fmt.Sprintf("repo host %s: plain http is refused; use https, or ask the operator to list it as http://%s in WEFT_CODE_GIT_HOSTS", u.Host, u.Host)}
	}
	return &InputError{Msg: fmt.Sprintf("repo host %s is not one code_index may clone from (WEFT_CODE_GIT_HOSTS): use a repository on an allowed host, or ask the operator to add it", u.Host)}
}

// checkCodeGitHosts reports the entries of WEFT_CODE_GIT_HOSTS that are not host[:port],
// https://host[:port] or http://host[:port], and what to write instead: while one is bad,
// code_index clones nothing (the operator meant something the list cannot say).
func checkCodeGitHosts(entries []string) error {
	var bad []string
	for _, e := range entries {
		if why := codeGitHostEntryError(e); why != "" {
			bad = append(bad, fmt.Sprintf("%q %s", redactURL(e), why)) // an entry may hold a credential
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &ConfigError{Msg: "WEFT_CODE_GIT_HOSTS holds entries that are not a host: " + strings.Join(bad, "; ") +
		" (write host, host:port, or http://host:port for plain http, comma-separated)"}
}

// codeGitHostEntryError says what is wrong with one WEFT_CODE_GIT_HOSTS entry ("" when nothing
// is), and what to write.
func codeGitHostEntryError(e string) string {
	e = strings.ToLower(strings.TrimSpace(e))
	scheme := "https"
	if i := strings.Index(e, "://"); i >= 0 {
		scheme, e = e[:i], e[i+3:]
		if scheme != "https" && scheme != "http" {
			return fmt.Sprintf("has scheme %s: only https:// and http:// may lead an entry", scheme)
		}
	}
	e = strings.TrimSuffix(e, "/")
	host, port := e, ""
	if h, p, err := net.SplitHostPort(e); err == nil {
		host, port = h, p
	}
	switch {
	case e == "":
		return "names no host"
	case strings.Contains(e, "@"):
		return "holds user info: code_index sends no credentials; write the host alone"
	case strings.Contains(e, "/"):
		return "holds a path: the list allows hosts, and every repository on them; write the host alone (" + scheme + "://" + strings.SplitN(e, "/", 2)[0] + ")"
	case strings.ContainsAny(host, "*?"):
		return "is a pattern: wildcards are not supported; list each host"
	case strings.ContainsAny(e, "#? \t"):
		return "is not a host"
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "has no valid port (write host:port, the port a number from 1 to 65535)"
		}
	}
	return ""
}

// redactURL is raw without user info, query or fragment (they may hold credentials), for
// messages; a raw it cannot parse loses them too, cut by hand.
func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		u.User, u.RawQuery, u.ForceQuery, u.Fragment = nil, "", false, ""
		return u.String()
	}
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		raw = raw[:i]
	}
	rest, scheme := raw, ""
	if i := strings.Index(raw, "://"); i >= 0 {
		scheme, rest = raw[:i+3], raw[i+3:]
	}
	auth := rest
	if i := strings.Index(rest, "/"); i >= 0 {
		auth = rest[:i]
	}
	if i := strings.LastIndex(auth, "@"); i >= 0 {
		rest = rest[i+1:]
	}
	return scheme + rest
}

// gitClone is one clone's guard: the tools whose settings it enforces, what it may still
// download, and the first refusal (kept here too, since go-git does not always wrap errors).
type gitClone struct {
	t        *Tools
	base     http.RoundTripper
	left     atomic.Int64
	max      int64
	maxFiles int
	timeout  time.Duration
	repo     string
	mu       sync.Mutex
	refusal  error
}

func (c *gitClone) refuse(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refusal == nil {
		c.refusal = err
	}
	return err
}

func (c *gitClone) refused() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refusal
}

type gitCloneKey struct{}

// gitTransport is the one transport go-git's http and https clients use in this process: it
// serves only requests made under a code_index clone's context, and applies that clone's guard.
type gitTransport struct{}

func (gitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c, _ := req.Context().Value(gitCloneKey{}).(*gitClone)
	if c == nil {
		return nil, errors.New("go-git is used only by code_index, through its guard")
	}
	if err := c.t.codeGitHostAllowed(req.URL); err != nil {
		return nil, c.refuse(&InputError{Msg: fmt.Sprintf("repo %s was redirected to %s://%s: %v", c.repo, req.URL.Scheme, req.URL.Host, err)})
	}
	req = req.Clone(req.Context())
	req.Header.Del("Authorization")
	req.Header.Del("Cookie")
	req.Header.Set("User-Agent", "weft-code-index")
	resp, err := c.base.RoundTrip(req)
	if err != nil {
		var ie *InputError
		if asInput(err, &ie) {
			return nil, c.refuse(&InputError{Msg: fmt.Sprintf("repo %s: %s", c.repo, ie.Msg)})
		}
		return nil, err
	}
	resp.Body = &gitBudgetBody{ReadCloser: resp.Body, c: c}
	return resp, nil
}

// gitBudgetBody counts what a clone downloads against its bound.
type gitBudgetBody struct {
	io.ReadCloser
	c *gitClone
}

func (b *gitBudgetBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.c.left.Add(-int64(n)) < 0 {
		return n, b.c.refuse(b.c.tooLarge("downloads"))
	}
	return n, err
}

func (c *gitClone) tooLarge(what string) error {
	return &InputError{Msg: fmt.Sprintf("repo %s %s more than the %d bytes code_index may fetch of a repository (WEFT_CODE_GIT_MAX_BYTES): index a smaller repository, or ask the operator to raise it", c.repo, what, c.max)}
}

var installGitTransport sync.Once

// useGitTransport makes go-git's http and https clients go through gitTransport, and removes
// its file, ssh and git clients: this process clones nothing else.
func useGitTransport() {
	installGitTransport.Do(func() {
		cl := githttp.NewClientWithOptions(&http.Client{Transport: gitTransport{}}, &githttp.ClientOptions{RedirectPolicy: githttp.FollowInitialRedirects})
		gitclient.InstallProtocol("https", cl)
		gitclient.InstallProtocol("http", cl)
		for _, p := range []string{"file", "ssh", "git"} {
			gitclient.InstallProtocol(p, nil)
		}
	})
}

// codeGitClient is the http client of one clone: every dial is judged by the address actually
// dialled (after DNS, so a listed name resolving to a private address is refused too): public
// addresses, and private, loopback or link-local ones WEFT_CODE_GIT_ALLOW names. It shares the
// http tool's classification of addresses, not its allowance (WEFT_HTTP_ALLOW).
func (t *Tools) codeGitClient(timeout time.Duration) *http.Transport {
	return guardedTransport(timeout, t.codeGitAddrAllowed, "code_index clones from private, loopback and link-local addresses only when WEFT_CODE_GIT_ALLOW names them")
}

func (t *Tools) codeGitAddrAllowed(ip netip.Addr) bool {
	ip = ip.Unmap()
	if publicAddr(ip) {
		return true
	}
	for _, a := range t.cfg.CodeGitAllow {
		if p, err := netip.ParsePrefix(a); err == nil && p.Contains(ip) {
			return true
		}
		if addr, err := netip.ParseAddr(a); err == nil && addr == ip {
			return true
		}
	}
	return false
}

// removeStaleGitClones removes what clones of a worker that died (or panicked past its
// cleanup) left in the temporary directory: weft-code-git-* directories older than an hour, or
// than twice the clone's time bound when that is longer (a clone's directory lives only while it
// is cloned and walked).
func removeStaleGitClones(timeout time.Duration) {
	stale, _ := filepath.Glob(filepath.Join(os.TempDir(), "weft-code-git-*"))
	age := max(time.Hour, 2*timeout)
	for _, d := range stale {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() && time.Since(fi.ModTime()) > age {
			_ = os.RemoveAll(d)
		}
	}
}

// cloneCodeRepo clones repo shallowly into a new temporary directory and writes out the files of
// its commit that code_index could index (regular files up to maxFileBytes): the directory to
// walk, how many files were left out, and a function removing it all. The directory is removed
// however the clone ends, a panic included, unless it is returned.
func (t *Tools) cloneCodeRepo(ctx context.Context, repo gitRepo, maxFileBytes int64) (dir string, skipped int, cleanup func(), err error) {
	useGitTransport()
	maxBytes := t.cfg.CodeGitMaxBytes
	if maxBytes <= 0 {
		maxBytes = defaultCodeGitMaxBytes
	}
	maxFiles := t.cfg.CodeGitMaxFiles
	if maxFiles <= 0 {
		maxFiles = defaultCodeGitMaxFiles
	}
	timeout := t.cfg.CodeGitTimeout
	if timeout <= 0 {
		timeout = defaultCodeGitTimeout
	}
	removeStaleGitClones(timeout)
	base := t.codeGitClient(timeout)
	defer base.CloseIdleConnections() // a transport per clone: its connections end with it
	guard := &gitClone{t: t, base: base, max: maxBytes, maxFiles: maxFiles, timeout: timeout, repo: repo.root()}
	guard.left.Store(maxBytes)
	ctx, cancel := context.WithTimeout(context.WithValue(ctx, gitCloneKey{}, guard), timeout)
	defer cancel()

	refName, err := t.codeGitRef(ctx, guard, repo)
	if err != nil {
		return "", 0, nil, err
	}
	tmp, err := os.MkdirTemp("", "weft-code-git-*")
	if err != nil {
		return "", 0, nil, fmt.Errorf("making a directory to clone %s into: %w", repo.root(), err)
	}
	remove := func() { _ = os.RemoveAll(tmp) }
	kept := false
	defer func() {
		if !kept {
			remove()
		}
	}()
	fail := func(err error) (string, int, func(), error) { return "", 0, nil, err }
	storage := gitPackStorage{Storage: filesystem.NewStorage(osfs.New(filepath.Join(tmp, "git")), cache.NewObjectLRUDefault()), guard: guard}
	r, err := git.CloneContext(ctx, storage, nil, &git.CloneOptions{URL: repo.url.String(), ReferenceName: refName,
		SingleBranch: true, Depth: 1, Tags: git.NoTags, NoCheckout: true})
	if err != nil {
		return fail(guard.cloneError(ctx, "cloning", timeout, err))
	}
	head, err := r.Head()
	if err != nil {
		return fail(guard.cloneError(ctx, "reading HEAD of", timeout, err))
	}
	commit, err := r.CommitObject(head.Hash()) // go-git points HEAD at an annotated tag's commit
	if err != nil {
		return fail(guard.cloneError(ctx, "reading the commit of", timeout, err))
	}
	tree, err := commit.Tree()
	if err != nil {
		return fail(guard.cloneError(ctx, "reading the tree of", timeout, err))
	}
	dir = filepath.Join(tmp, "src")
	skipped, err = writeGitTree(ctx, tree, dir, maxFileBytes, guard)
	if err != nil {
		return fail(err)
	}
	kept = true
	return dir, skipped, remove, nil
}

// codeGitRef is the reference to clone: the remote's HEAD when the step names no ref, else the
// branch or tag it names (a branch first, as git does), found by listing the remote's refs.
func (t *Tools) codeGitRef(ctx context.Context, guard *gitClone, repo gitRepo) (plumbing.ReferenceName, error) {
	if repo.ref == "" {
		return plumbing.HEAD, nil
	}
	remote := git.NewRemote(memory.NewStorage(), &gitconfig.RemoteConfig{Name: "origin", URLs: []string{repo.url.String()}})
	refs, err := remote.ListContext(ctx, &git.ListOptions{})
	if err != nil {
		return "", guard.cloneError(ctx, "listing the refs of", 0, err)
	}
	have := map[plumbing.ReferenceName]bool{}
	for _, r := range refs {
		have[r.Name()] = true
	}
	for _, n := range []plumbing.ReferenceName{plumbing.ReferenceName(repo.ref), plumbing.NewBranchReferenceName(repo.ref), plumbing.NewTagReferenceName(repo.ref)} {
		if (n.IsBranch() || n.IsTag()) && have[n] {
			return n, nil
		}
	}
	return "", &InputError{Msg: fmt.Sprintf("repo %s has no branch or tag %q: give one it has as ref (a commit hash is not accepted), or leave ref out for its default branch", repo.url, repo.ref)}
}

// cloneError is what a failed clone reports: the guard's refusal when there was one (never
// retried), a timeout as such, otherwise go-git's error (retried: the host may come back).
func (c *gitClone) cloneError(ctx context.Context, doing string, timeout time.Duration, err error) error {
	if r := c.refused(); r != nil {
		return r
	}
	var ie *InputError
	if asInput(err, &ie) {
		return ie
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && timeout > 0 {
		return fmt.Errorf("%s repo %s took longer than %s (WEFT_CODE_GIT_TIMEOUT): %w", doing, c.repo, timeout, err)
	}
	switch {
	case errors.Is(err, plumbing.ErrReferenceNotFound):
		return &InputError{Msg: fmt.Sprintf("%s repo %s: %v", doing, c.repo, err)}
	case strings.Contains(err.Error(), "authentication required"), strings.Contains(err.Error(), "repository not found"):
		return &InputError{Msg: fmt.Sprintf("%s repo %s: %v (code_index clones public repositories only, without credentials)", doing, c.repo, err)}
	}
	return fmt.Errorf("%s repo %s: %w", doing, c.repo, err)
}

// writeGitTree writes the regular files of tree under dir, leaving out links, submodules and
// files over maxFileBytes, and counts what it left out. It refuses (never retried: the same tree
// fails the same way) a tree with more files than the clone may have (WEFT_CODE_GIT_MAX_FILES),
// whose files add up to more than it may fetch, each counting at least a block (a tree can name
// one subtree many times, so a small pack can hold a great many files), and a malformed tree:
// an entry named .git, . or .., or holding a /, and two entries of the same name (git's fsck
// refuses them, and a checkout would be unsafe or ambiguous; skipping them would index something
// other than the repository). Errors name the repository and the entry, never the worker's paths.
func writeGitTree(ctx context.Context, tree *object.Tree, dir string, maxFileBytes int64, guard *gitClone) (int, error) {
	if maxFileBytes <= 0 {
		maxFileBytes = 1 << 20
	}
	skipped, files := 0, 0
	var written int64
	entryErr := func(name string, err error) error {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		if errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EISDIR) {
			return &InputError{Msg: fmt.Sprintf("repo %s has a malformed tree: entry %q is named twice (as a file and a directory, or twice in one directory); git refuses such a tree too: fix the repository", guard.repo, name)}
		}
		return fmt.Errorf("writing out entry %q of repo %s: %w", name, guard.repo, err)
	}
	err := tree.Files().ForEach(func(f *object.File) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if files++; files > guard.maxFiles {
			return &InputError{Msg: fmt.Sprintf("repo %s has more than %d files, the most code_index writes out of a repository (WEFT_CODE_GIT_MAX_FILES): index a smaller repository, or ask the operator to raise it", guard.repo, guard.maxFiles)}
		}
		for _, seg := range strings.Split(f.Name, "/") {
			if seg == "" || seg == "." || seg == ".." || strings.EqualFold(seg, ".git") || strings.ContainsRune(seg, 0) || strings.ContainsRune(seg, '\\') {
				return &InputError{Msg: fmt.Sprintf("repo %s has a malformed tree: entry %q is not a name git checks out (.git, . and .., and names holding a / or \\, are refused): fix the repository", guard.repo, f.Name)}
			}
		}
		if (f.Mode != filemode.Regular && f.Mode != filemode.Executable && f.Mode != filemode.Deprecated) || f.Size > maxFileBytes {
			skipped++
			return nil
		}
		if written += max(f.Size, gitFileBlock); written > guard.max {
			return guard.tooLarge("holds")
		}
		full := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			return entryErr(f.Name, err)
		}
		rd, err := f.Reader()
		if err != nil {
			return err
		}
		defer rd.Close()
		out, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return entryErr(f.Name, err)
		}
		_, err = io.Copy(out, io.LimitReader(rd, f.Size))
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return entryErr(f.Name, err)
		}
		return nil
	})
	if err != nil {
		var ie *InputError
		switch {
		case asInput(err, &ie):
			return 0, ie
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return 0, &InputError{Msg: fmt.Sprintf("writing out the files of repo %s took longer than %s (WEFT_CODE_GIT_TIMEOUT): index a smaller repository, or ask the operator to raise it", guard.repo, guard.timeout)}
		case strings.HasPrefix(err.Error(), "invalid path"): // go-git's own check of a tree's names, as it walks it
			return 0, &InputError{Msg: fmt.Sprintf("repo %s has a malformed tree: %v (.git, . and .. are not names git checks out): fix the repository", guard.repo, err)}
		}
		return 0, fmt.Errorf("writing out the files of repo %s: %w", guard.repo, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, err
	}
	return skipped, nil
}
