// Package codeindex reads a source tree for the code tools: a walk that honours .gitignore
// files, language detection by file name, and chunks split at function and class boundaries
// with their line numbers and symbols (a line or character window where a language has no
// boundaries or a definition is too long).
package codeindex

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
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
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("code index path %s: %w", root, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("code index path %s is a file: give the directory to index", root)
	}
	maxBytes := opts.MaxFileBytes
	if maxBytes <= 0 {
		maxBytes = 1 << 20
	}
	langs := map[string]bool{}
	for _, l := range opts.Languages {
		langs[strings.ToLower(l)] = true
	}
	ig := &ignorer{}
	ig.load(root, "", ".git/info/exclude")
	res := &WalkResult{}
	stop := errors.New("enough files")
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			res.Skipped++
			return nil // an unreadable entry is skipped, not fatal
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "." {
				ig.load(root, "", ".gitignore")
				return nil
			}
			if alwaysSkipped[d.Name()] || ig.ignored(rel, true) {
				return filepath.SkipDir
			}
			ig.load(root, rel, ".gitignore")
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
		if err != nil || info.Size() > maxBytes || binary(p) {
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
		return nil, fmt.Errorf("walking %s: %w", root, err)
	}
	return res, nil
}

// binary: a NUL byte in the first 8 KB.
func binary(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return true
	}
	defer f.Close()
	buf := make([]byte, 8192)
	n, _ := f.Read(buf)
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

func (ig *ignorer) load(root, dir, name string) {
	f, err := os.Open(filepath.Join(root, filepath.FromSlash(dir), name))
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
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
