package activities

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
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
)

// A Git repository code_index clones comes from a file's author, an MCP client or a model, so
// the clone reaches only what the operator allowed:
//   - the URL is https (http only to a host the operator wrote as http://host), with no user
//     info, query or fragment, on a host WEFT_CODE_GIT_HOSTS lists; file://, ssh, git:// and
//     local paths never reach go-git;
//   - every request, a redirect's included, is checked against the same list, and every dial
//     goes through the http tool's private-address guard (WEFT_HTTP_ALLOW);
//   - nothing of the worker's is sent: no proxy, no credentials (go-git reads no git config or
//     credential helper, and Authorization and Cookie headers are removed), no process started;
//   - the download and the files written are bounded (WEFT_CODE_GIT_MAX_BYTES), the clone's time
//     too (WEFT_CODE_GIT_TIMEOUT), and the clone is shallow and removed afterwards.

const (
	defaultCodeGitMaxBytes = 256 << 20
	defaultCodeGitTimeout  = 5 * time.Minute
)

// gitRepo is a repository a code_index step names, checked against the operator's settings.
type gitRepo struct {
	url *url.URL
	ref string
}

// root is the name its chunks are stored under (metadata.root), so indexing the same repository
// at the same ref again replaces them: its URL, and @ref when a ref was given.
func (r gitRepo) root() string {
	if r.ref == "" {
		return r.url.String()
	}
	return r.url.String() + "@" + r.ref
}

// codeGitRepo checks the repository a step names: scheme, host and form.
func (t *Tools) codeGitRepo(raw, ref string) (gitRepo, error) {
	if len(t.cfg.CodeGitHosts) == 0 {
		return gitRepo{}, &ConfigError{Msg: "code_index clones Git repositories only from hosts the operator allows, and none are: set WEFT_CODE_GIT_HOSTS on the worker to the hosts it may clone from (comma-separated, e.g. github.com,gitlab.com)"}
	}
	bad := func(why string) (gitRepo, error) {
		return gitRepo{}, &InputError{Msg: fmt.Sprintf("repo %q: %s", redactURL(raw), why)}
	}
	u, err := url.Parse(raw)
	if err == nil && u.Scheme != "" && !strings.EqualFold(u.Scheme, "https") && !strings.EqualFold(u.Scheme, "http") {
		return bad(fmt.Sprintf("scheme %s is refused: code_index clones over https only (file, ssh and git are never used)", strings.ToLower(u.Scheme)))
	}
	if err != nil || u.Scheme == "" || u.Host == "" {
		return bad("not an https URL (local paths and scp-style addresses like git@host:owner/repo are refused): write https://host/owner/repo")
	}
	u.Scheme = strings.ToLower(u.Scheme)
	switch {
	case u.User != nil:
		return bad("credentials in the URL are refused: code_index clones public repositories and sends no credentials")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return bad("a query or fragment is refused: give the repository's URL, and its branch or tag as ref")
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

// redactURL is raw without user info, query or fragment (they may hold credentials), for
// messages.
func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && (u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "") {
		u.User, u.RawQuery, u.ForceQuery, u.Fragment = nil, "", false, ""
		return u.String()
	}
	return raw
}

// gitClone is one clone's guard: the tools whose settings it enforces, what it may still
// download, and the first refusal (kept here too, since go-git does not always wrap errors).
type gitClone struct {
	t       *Tools
	base    http.RoundTripper
	left    atomic.Int64
	max     int64
	repo    string
	mu      sync.Mutex
	refusal error
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

// cloneCodeRepo clones repo shallowly into a new temporary directory and writes out the files of
// its commit that code_index could index (regular files up to maxFileBytes): the directory to
// walk, how many files were left out, and a function removing it all.
func (t *Tools) cloneCodeRepo(ctx context.Context, repo gitRepo, maxFileBytes int64) (dir string, skipped int, cleanup func(), err error) {
	useGitTransport()
	maxBytes := t.cfg.CodeGitMaxBytes
	if maxBytes <= 0 {
		maxBytes = defaultCodeGitMaxBytes
	}
	timeout := t.cfg.CodeGitTimeout
	if timeout <= 0 {
		timeout = defaultCodeGitTimeout
	}
	base := t.httpClient(timeout).Transport
	if tr, ok := base.(*http.Transport); ok {
		defer tr.CloseIdleConnections() // a transport per clone: its connections end with it
	}
	guard := &gitClone{t: t, base: base, max: maxBytes, repo: repo.root()}
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
	cleanup = func() { _ = os.RemoveAll(tmp) }
	fail := func(err error) (string, int, func(), error) {
		cleanup()
		return "", 0, nil, err
	}
	storage := filesystem.NewStorage(osfs.New(filepath.Join(tmp, "git")), cache.NewObjectLRUDefault())
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
	return dir, skipped, cleanup, nil
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

// writeGitTree writes the regular files of tree under dir, leaving out links, submodules, files
// over maxFileBytes and names that would leave dir; it counts what it left out, and refuses a tree
// whose files add up to more than the clone may fetch (a small pack can inflate to much more).
func writeGitTree(ctx context.Context, tree *object.Tree, dir string, maxFileBytes int64, guard *gitClone) (int, error) {
	if maxFileBytes <= 0 {
		maxFileBytes = 1 << 20
	}
	skipped := 0
	var written int64
	err := tree.Files().ForEach(func(f *object.File) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if (f.Mode != filemode.Regular && f.Mode != filemode.Executable && f.Mode != filemode.Deprecated) ||
			!filepath.IsLocal(filepath.FromSlash(f.Name)) || f.Size > maxFileBytes {
			skipped++
			return nil
		}
		if written += f.Size; written > guard.max {
			return guard.tooLarge("holds")
		}
		full := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			return err
		}
		rd, err := f.Reader()
		if err != nil {
			return err
		}
		defer rd.Close()
		out, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, io.LimitReader(rd, f.Size))
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		return err
	})
	if err != nil {
		var ie *InputError
		if asInput(err, &ie) {
			return 0, ie
		}
		return 0, fmt.Errorf("writing out the files of repo %s: %w", guard.repo, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, err
	}
	return skipped, nil
}
