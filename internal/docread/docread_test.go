package docread_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/internal/docread"
)

// MinimalPDF is a one-page PDF whose text layer says text (Helvetica, one line).
func MinimalPDF(text string) []byte {
	stream := fmt.Sprintf("BT /F1 12 Tf 72 720 Td (%s) Tj ET", text)
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(stream), stream),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	var b strings.Builder
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return []byte(b.String())
}

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// TestReadMixedFolder: each kind's text, hidden and unknown files skipped, a file that cannot
// be read named with its reason while the others are read.
func TestReadMixedFolder(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write(t, "docs", map[string]string{
		"guide.md":          "# Guide\n\nInstall weft.",
		"notes.txt":         "plain notes",
		"spec.rst":          "Title\n=====\n\nSome *rst*.",
		"table.csv":         "name,city\nAna,Lisbon\nBo,Oslo\n",
		"page.html":         "<html><head><title>The page</title><style>p{}</style></head><body><p>Hello <b>world</b></p><script>alert(1)</script><p>Bye</p></body></html>",
		"doc.pdf":           string(MinimalPDF("PDF text layer")),
		"records.json":      `[{"text":"first record","id":1},{"text":"second record"}]`,
		"lines.jsonl":       "{\"text\":\"line one\"}\n\n{\"text\":\"line two\"}\n",
		"main.go":           "package main\n\nfunc main() {}\n",
		"image.png":         "\x89PNG\x00\x00",
		".hidden.md":        "secret",
		".git/config":       "[core]",
		"sub/deep.md":       "deep file",
		"bad.json":          "{not json",
		"binary.txt":        "a\x00b",
		"nofield.jsonl":     `{"body":"x"}`,
		"sub/excluded.md":   "leave me out",
		"sub/draft.tmp.txt": "draft",
	})
	res := docread.Read([]string{"docs"}, docread.Options{Exclude: []string{"sub/excluded.md", "*.tmp.txt"}})
	got := map[string]docread.Document{}
	for _, d := range res.Documents {
		got[d.Source] = d
	}
	cases := []struct{ source, kind, text string }{
		{"docs/guide.md", "markdown", "# Guide\n\nInstall weft."},
		{"docs/notes.txt", "text", "plain notes"},
		{"docs/spec.rst", "rst", "Title\n=====\n\nSome *rst*."},
		{"docs/table.csv", "csv", "name: Ana; city: Lisbon\nname: Bo; city: Oslo\n"},
		{"docs/page.html", "html", "The page\n\nHello world\n\nBye"},
		{"docs/doc.pdf", "pdf", "PDF text layer"},
		{"docs/records.json", "json", "first record\n\nsecond record"},
		{"docs/lines.jsonl", "jsonl", "line one\n\nline two"},
		{"docs/main.go", "code", "package main\n\nfunc main() {}\n"},
		{"docs/sub/deep.md", "markdown", "deep file"},
	}
	for _, c := range cases {
		t.Run(c.source, func(t *testing.T) {
			d, ok := got[c.source]
			require.True(t, ok, "not read: %v (problems %v)", c.source, res.Problems)
			require.Equal(t, c.kind, d.Kind)
			require.Equal(t, c.text, strings.TrimSpace(d.Text)+map[bool]string{true: "\n", false: ""}[strings.HasSuffix(c.text, "\n")])
			require.Len(t, d.Hash, 64)
		})
	}
	require.Len(t, res.Documents, len(cases))
	require.Equal(t, "go", got["docs/main.go"].Language)
	problems := map[string]string{}
	for _, p := range res.Problems {
		problems[p.Path] = p.Reason
	}
	require.Len(t, problems, 3, "%v", res.Problems)
	require.Contains(t, problems["docs/bad.json"], "not valid JSON")
	require.Contains(t, problems["docs/binary.txt"], "not UTF-8 text")
	require.Contains(t, problems["docs/nofield.jsonl"], "--json-field")
	require.Equal(t, []string{"docs"}, res.Roots)
	require.Equal(t, 5, res.Skipped, "image.png, .hidden.md, .git, sub/excluded.md, sub/draft.tmp.txt")
}

func TestReadArguments(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write(t, ".", map[string]string{"a.md": "aaaa", "b.md": "b", "c.txt": "c", "notes.weird": "named on its own, read as text", "locked.md": "x"})
	require.NoError(t, os.Chmod("locked.md", 0))
	require.NoError(t, syscall.Mkfifo("pipe", 0o644))
	t.Cleanup(func() { _ = os.Chmod("locked.md", 0o644) })
	cases := []struct {
		name     string
		args     []string
		o        docread.Options
		sources  []string
		problems []string
	}{
		{"glob", []string{"*.md"}, docread.Options{Exclude: []string{"locked.md"}}, []string{"a.md", "b.md"}, nil},
		{"file of an unknown kind named on its own", []string{"notes.weird"}, docread.Options{}, []string{"notes.weird"}, nil},
		{"missing", []string{"nope.md", "c.txt"}, docread.Options{}, []string{"c.txt"}, []string{"nope.md: no such file or folder"}},
		{"empty glob", []string{"*.rst"}, docread.Options{}, nil, []string{"*.rst: no file matches this glob"}},
		{"a file twice", []string{"a.md", "./a.md"}, docread.Options{}, []string{"a.md"}, nil},
		{"include", []string{"."}, docread.Options{Include: []string{"*.txt"}}, []string{"c.txt"}, nil},
		{"too large", []string{"a.md", "b.md"}, docread.Options{MaxFileBytes: 2}, []string{"b.md"}, []string{"a.md: 4 bytes, more than the 2 read (split it, or leave it out with --exclude)"}},
		{"a fifo", []string{"pipe"}, docread.Options{}, nil, []string{"pipe: not a regular file"}},
	}
	if os.Geteuid() != 0 { // root reads a file of mode 0
		cases = append(cases, struct {
			name     string
			args     []string
			o        docread.Options
			sources  []string
			problems []string
		}{"unreadable", []string{"locked.md", "b.md"}, docread.Options{}, []string{"b.md"}, []string{"locked.md: permission denied (weft cannot read it: check its mode or owner)"}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := docread.Read(c.args, c.o)
			var sources, problems []string
			for _, d := range res.Documents {
				sources = append(sources, d.Source)
			}
			for _, p := range res.Problems {
				problems = append(problems, p.String())
			}
			require.Equal(t, c.sources, sources)
			require.Equal(t, c.problems, problems)
		})
	}
}

func TestMatch(t *testing.T) {
	cases := []struct {
		pattern, rel string
		want         bool
	}{
		{"*.md", "a/b/c.md", true},
		{"*.md", "a/b/c.txt", false},
		{"a/*.md", "a/c.md", true},
		{"a/*.md", "a/b/c.md", false},
		{"a/**/*.md", "a/b/c/d.md", true},
		{"a/**/*.md", "a/d.md", true},
		{"**/vendor/**", "x/vendor/y/z.go", true},
		{"**/vendor/**", "x/y/z.go", false},
	}
	for _, c := range cases {
		require.Equal(t, c.want, docread.Match(c.pattern, c.rel, filepath.Base(c.rel)), "%s %s", c.pattern, c.rel)
	}
}
