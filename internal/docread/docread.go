package docread

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// Options say which files Read takes and how their text is made.
type Options struct {
	// Include keeps only files matching one of these patterns (none: every file of a known kind).
	// A pattern without a slash matches a file's name; one with a slash matches its path from the
	// folder given (** matches any number of folders).
	Include []string
	// Exclude leaves out files matching one of these patterns (as Include); it wins over Include.
	Exclude []string
	// JSONField is the field of each JSON or JSON Lines record that is its text (default "text").
	JSONField string
	// MaxFileBytes is the largest file read (default 20 MB); a larger one is a Problem.
	MaxFileBytes int64
}

// DefaultMaxFileBytes is the largest file read when Options.MaxFileBytes is 0.
const DefaultMaxFileBytes = 20 << 20

// Document is one file's text.
type Document struct {
	// Source is the file's path as the user named it (relative to the working directory when
	// under it, with / separators): what its chunks are stored and cited under.
	Source string `json:"source"`
	// Kind is how it was read: markdown, text, rst, csv, html, pdf, json, jsonl or code.
	Kind string `json:"kind"`
	// Language is a source file's language (go, python, ...), empty for other kinds.
	Language string `json:"language,omitempty"`
	Text     string `json:"-"`
	// Bytes is the file's size; Hash the sha256 of its content (hex).
	Bytes int64  `json:"bytes"`
	Hash  string `json:"hash"`
}

// Problem is a file that could not be read, and why.
type Problem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

func (p Problem) String() string { return p.Path + ": " + p.Reason }

// Result is what Read found.
type Result struct {
	Documents []Document `json:"documents"`
	Problems  []Problem  `json:"problems"`
	// Skipped counts files in the folders walked that are of no kind weft reads (images,
	// archives, binaries) or that Include and Exclude leave out, and hidden files and folders.
	Skipped int `json:"skipped"`
	// Roots are the folders given, as sources (the part of the collection --prune looks at).
	Roots []string `json:"roots"`
	// Files are the files given by name or glob, as sources.
	Files []string `json:"files"`
}

// Read reads each path: a file, a folder (walked, hidden entries skipped) or a glob. A file
// named on its own is read whatever its kind (as text when weft does not know its extension);
// a file found in a folder or by a glob only when its kind is known. A file that cannot be read
// is a Problem and the others go on; an argument that names nothing is a Problem too. Documents
// are sorted by source; a file reached twice is read once.
func Read(paths []string, o Options) Result {
	if o.JSONField == "" {
		o.JSONField = "text"
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	r := &reader{o: o, seen: map[string]bool{}}
	for _, p := range paths {
		r.arg(p)
	}
	sort.Slice(r.res.Documents, func(i, j int) bool { return r.res.Documents[i].Source < r.res.Documents[j].Source })
	return r.res
}

type reader struct {
	o    Options
	seen map[string]bool
	res  Result
}

func (r *reader) problem(p, why string) {
	r.res.Problems = append(r.res.Problems, Problem{Path: p, Reason: why})
}

func (r *reader) arg(p string) {
	st, err := os.Stat(p)
	if err != nil && strings.ContainsAny(p, "*?[") {
		matches, gerr := filepath.Glob(p)
		if gerr != nil {
			r.problem(p, fmt.Sprintf("not a valid glob: %v", gerr))
			return
		}
		if len(matches) == 0 {
			r.problem(p, "no file matches this glob")
			return
		}
		for _, m := range matches {
			if ms, err := os.Stat(m); err == nil && ms.IsDir() {
				r.dir(m)
			} else if r.wanted(filepath.Base(m), filepath.Base(m)) {
				r.res.Files = append(r.res.Files, sourceOf(m))
				r.file(m, false)
			} else {
				r.res.Skipped++
			}
		}
		return
	}
	switch {
	case err != nil:
		r.problem(p, describe(err))
	case st.IsDir():
		r.dir(p)
	default:
		r.res.Files = append(r.res.Files, sourceOf(p))
		r.file(p, true)
	}
}

func (r *reader) dir(root string) {
	r.res.Roots = append(r.res.Roots, sourceOf(root))
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			r.problem(p, describe(err))
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		if p != root && strings.HasPrefix(name, ".") {
			r.res.Skipped++
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if !d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0 {
			r.res.Skipped++
			return nil
		}
		if _, _, ok := KindOf(name); !ok || !r.wanted(rel, name) {
			r.res.Skipped++
			return nil
		}
		r.file(p, false)
		return nil
	})
	if err != nil {
		r.problem(root, describe(err))
	}
}

// wanted applies Include and Exclude to a file at rel (from the folder given) named name.
func (r *reader) wanted(rel, name string) bool {
	for _, x := range r.o.Exclude {
		if Match(x, rel, name) {
			return false
		}
	}
	if len(r.o.Include) == 0 {
		return true
	}
	for _, in := range r.o.Include {
		if Match(in, rel, name) {
			return true
		}
	}
	return false
}

// Match reports whether pattern matches a file at rel (slash path from the folder given) named
// name: a pattern without a slash matches the name, one with a slash the path, where **
// stands for any number of folders.
func Match(pattern, rel, name string) bool {
	if !strings.Contains(pattern, "/") {
		ok, _ := path.Match(pattern, name)
		return ok
	}
	return matchParts(strings.Split(strings.Trim(pattern, "/"), "/"), strings.Split(rel, "/"))
}

func matchParts(pat, parts []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(parts); i++ {
				if matchParts(pat[1:], parts[i:]) {
					return true
				}
			}
			return false
		}
		if len(parts) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], parts[0]); !ok {
			return false
		}
		pat, parts = pat[1:], parts[1:]
	}
	return len(parts) == 0
}

func (r *reader) file(p string, named bool) {
	src := sourceOf(p)
	if r.seen[src] {
		return
	}
	r.seen[src] = true
	st, err := os.Stat(p)
	if err != nil {
		r.problem(src, describe(err))
		return
	}
	if !st.Mode().IsRegular() {
		r.problem(src, "not a regular file")
		return
	}
	if st.Size() > r.o.MaxFileBytes {
		r.problem(src, fmt.Sprintf("%d bytes, more than the %d read (split it, or leave it out with --exclude)", st.Size(), r.o.MaxFileBytes))
		return
	}
	data, err := os.ReadFile(p)
	if err != nil {
		r.problem(src, describe(err))
		return
	}
	kind, lang, ok := KindOf(p)
	if !ok {
		if !named {
			r.res.Skipped++
			return
		}
		kind = "text" // named on its own: read as text if it is text
	}
	text, err := Text(kind, data, r.o.JSONField)
	if err != nil {
		r.problem(src, err.Error())
		return
	}
	if strings.TrimSpace(text) == "" {
		r.problem(src, "holds no text to ingest (empty"+map[bool]string{true: ", or a PDF of scanned images without a text layer)", false: ")"}[kind == "pdf"])
		return
	}
	sum := sha256.Sum256(data)
	r.res.Documents = append(r.res.Documents, Document{Source: src, Kind: kind, Language: lang, Text: text, Bytes: st.Size(), Hash: hex.EncodeToString(sum[:])})
}

// sourceOf is the source a file's chunks are stored under: its path relative to the working
// directory when it is under it, else its absolute path, with / separators.
func sourceOf(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.ToSlash(filepath.Clean(p))
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(abs)
}

// describe words a file system error without repeating the path.
func describe(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file or folder"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied (weft cannot read it: check its mode or owner)"
	}
	return err.Error()
}

// validText refuses bytes that are not UTF-8 text (a binary file with a text extension).
func validText(data []byte) error {
	if !utf8.Valid(data) || strings.ContainsRune(string(data[:min(len(data), 8192)]), 0) {
		return errors.New("not UTF-8 text (a binary file?): leave it out with --exclude, or convert it to UTF-8")
	}
	return nil
}
