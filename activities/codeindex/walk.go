package codeindex

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
)

// File is one source file found by Walk.
type File struct {
	// Path is relative to the walked root, with forward slashes.
	Path     string
	Language string
	Size     int64
}

// WalkOptions bound a walk.
type WalkOptions struct {
	// MaxFiles stops the walk after this many files (0: no limit); Truncated says so.
	MaxFiles int
	// MaxFileBytes skips larger files (0: 1 MiB).
	MaxFileBytes int64
	// Languages keeps only these languages (lower case; empty: every language Detect knows).
	Languages []string
}

// WalkResult is what a walk found.
type WalkResult struct {
	Files []File
	// Skipped counts files left out: ignored, too large, binary, or in no known language.
	Skipped   int
	Truncated bool
}

// alwaysSkipped are directories no code index wants, ignored or not.
var alwaysSkipped = map[string]bool{".git": true, "node_modules": true, ".hg": true, ".svn": true, "__pycache__": true, ".venv": true}

// Walk lists the source files under root in path order, honouring every .gitignore on the way
// (and .git/info/exclude), skipping binary files and files over opts.MaxFileBytes.
func Walk(root string, opts WalkOptions) (*WalkResult, error) {
	r, err := OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return WalkRoot(r, opts)
}

// OpenRoot opens the directory root for WalkRoot and ReadFile: every file under it is then
// opened relative to it (os.Root), so neither a link nor a directory swapped for a link while
// the index runs leads out of it.
func OpenRoot(root string) (*os.Root, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("code index path %s: %w", root, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("code index path %s is a file: give the directory to index", root)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("code index path %s: %w", root, err)
	}
	return r, nil
}

// WalkRoot is Walk of a directory OpenRoot opened. It lists and reads only through r.
func WalkRoot(r *os.Root, opts WalkOptions) (*WalkResult, error) {
	maxBytes := maxFileBytes(opts.MaxFileBytes)
	langs := map[string]bool{}
	for _, l := range opts.Languages {
		langs[strings.ToLower(l)] = true
	}
	ig := &ignorer{}
	ig.load(r, "", ".git/info/exclude")
	res := &WalkResult{}
	stop := errors.New("enough files")
	err := fs.WalkDir(r.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			if rel == "." {
				return err
			}
			res.Skipped++
			return nil // an unreadable entry is skipped, not fatal
		}
		if d.IsDir() {
			if rel == "." {
				ig.load(r, "", ".gitignore")
				return nil
			}
			if alwaysSkipped[d.Name()] || ig.ignored(rel, true) {
				return fs.SkipDir
			}
			ig.load(r, rel, ".gitignore")
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if ig.ignored(rel, false) {
			res.Skipped++
			return nil
		}
		lang := Detect(rel)
		if lang == "" || (len(langs) > 0 && !langs[lang]) {
			res.Skipped++
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > maxBytes || binary(r, rel) {
			res.Skipped++
			return nil
		}
		if opts.MaxFiles > 0 && len(res.Files) >= opts.MaxFiles {
			res.Truncated = true
			return stop
		}
		res.Files = append(res.Files, File{Path: rel, Language: lang, Size: info.Size()})
		return nil
	})
	if err != nil && !errors.Is(err, stop) {
		return nil, fmt.Errorf("walking %s: %w", r.Name(), err)
	}
	return res, nil
}

func maxFileBytes(n int64) int64 {
	if n <= 0 {
		return 1 << 20
	}
	return n
}

// ErrChanged is wrapped by ReadFile's error for a file that is no longer what the walk listed:
// not a regular file (a link out of the root is not opened at all), over the size limit, or
// binary.
var ErrChanged = errors.New("changed since it was listed")

// ReadFile reads the file a walk of r listed, judging what it opened rather than what was
// listed: it is opened through r (a link leading out of the root is refused, whenever it was
// swapped in), without blocking, and read only when the open file is a regular file, at most
// maxBytes (0: 1 MiB) and not binary.
func ReadFile(r *os.Root, f File, maxBytes int64) ([]byte, error) {
	maxBytes = maxFileBytes(maxBytes)
	h, err := openRegular(r, f.Path)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	data, err := io.ReadAll(io.LimitReader(h, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", f.Path, err)
	}
	if int64(len(data)) > maxBytes {
		return nil, fmt.Errorf("%s is over %d bytes: %w", f.Path, maxBytes, ErrChanged)
	}
	if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
		return nil, fmt.Errorf("%s is binary: %w", f.Path, ErrChanged)
	}
	return data, nil
}

// openRegular opens rel under r without blocking (a named pipe does not wait for a writer) and
// returns it only when the open file is a regular file.
func openRegular(r *os.Root, rel string) (*os.File, error) {
	h, err := r.OpenFile(filepath.FromSlash(rel), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := h.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file: %w", rel, ErrChanged)
	}
	if err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// binary: a NUL byte in the first 8 KB (or not a regular file once opened).
func binary(r *os.Root, rel string) bool {
	f, err := openRegular(r, rel)
	if err != nil {
		return true
	}
	defer f.Close()
	buf := make([]byte, 8192)
	n, _ := io.ReadFull(f, buf)
	return bytes.IndexByte(buf[:n], 0) >= 0
}

// rule is one .gitignore line.
type rule struct {
	base    string // directory of the .gitignore, relative to the root ("" for the root)
	re      *regexp.Regexp
	negate  bool
	dirOnly bool
}

// ignorer applies .gitignore rules in order: the last matching rule decides.
type ignorer struct{ rules []rule }

func (ig *ignorer) load(r *os.Root, dir, name string) {
	f, err := openRegular(r, path.Join(dir, name))
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \t\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := rule{base: dir}
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		}
		line = strings.TrimPrefix(line, `\`)
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimSuffix(line, "/")
		}
		anchored := strings.Contains(line, "/")
		line = strings.TrimPrefix(line, "/")
		if line == "" {
			continue
		}
		pat := globRegexp(line)
		if !anchored {
			pat = "(?:.*/)?" + pat // a bare name matches at any depth
		}
		re, err := regexp.Compile("^" + pat + "$")
		if err != nil {
			continue
		}
		r.re = re
		ig.rules = append(ig.rules, r)
	}
}

// ignored reports whether rel (a path relative to the root) is ignored.
func (ig *ignorer) ignored(rel string, dir bool) bool {
	out := false
	for _, r := range ig.rules {
		p := rel
		if r.base != "" {
			if !strings.HasPrefix(rel, r.base+"/") {
				continue
			}
			p = rel[len(r.base)+1:]
		}
		if r.dirOnly && !dir {
			// a file inside an ignored directory is never reached: the walk skipped it
			continue
		}
		if r.re.MatchString(p) {
			out = !r.negate
		}
	}
	return out
}

// globRegexp translates a gitignore glob to a regular expression.
func globRegexp(g string) string {
	var b strings.Builder
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch {
		case strings.HasPrefix(g[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(g[i:], "/**"):
			b.WriteString("/.*")
			i += 2
		case strings.HasPrefix(g[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			j := strings.IndexByte(g[i:], ']')
			if j < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := g[i+1 : i+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + class + "]")
			i += j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}

// languages by file extension (lower case, with the dot) or whole file name.
var languages = map[string]string{
	".go": "go", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
	".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
	".py": "python", ".java": "java", ".kt": "kotlin", ".rs": "rust", ".rb": "ruby",
	".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp",
	".cs": "csharp", ".php": "php", ".swift": "swift", ".scala": "scala",
	".sh": "shell", ".bash": "shell", ".sql": "sql", ".proto": "protobuf",
	".md": "markdown", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml",
	"makefile": "make", "dockerfile": "dockerfile",
}

// Detect is the language of a file from its name ("" when not a language the index reads).
func Detect(name string) string {
	base := strings.ToLower(path.Base(name))
	if l, ok := languages[base]; ok {
		return l
	}
	return languages[strings.ToLower(path.Ext(base))]
}

// Languages lists the languages Detect knows.
func Languages() []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range languages {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}
