package docread

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ledongthuc/pdf"
	"golang.org/x/net/html"
)

// kinds maps a lower-case extension to how the file is read.
var kinds = map[string]string{
	".md": "markdown", ".markdown": "markdown", ".mdx": "markdown",
	".txt": "text", ".text": "text",
	".rst": "rst",
	".csv": "csv", ".tsv": "csv",
	".html": "html", ".htm": "html", ".xhtml": "html",
	".pdf":  "pdf",
	".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl",
}

// languages maps a source file's extension to its language.
var languages = map[string]string{
	".go": "go", ".py": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
	".ts": "typescript", ".tsx": "typescript", ".java": "java", ".kt": "kotlin", ".rs": "rust", ".rb": "ruby",
	".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".cs": "csharp", ".php": "php", ".swift": "swift",
	".scala": "scala", ".sh": "shell", ".bash": "shell", ".sql": "sql", ".lua": "lua", ".r": "r", ".ex": "elixir", ".exs": "elixir",
	".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".proto": "protobuf", ".css": "css",
}

// KindOf is how a file is read, from its extension: its kind, a source file's language, and
// whether weft reads it at all.
func KindOf(name string) (kind, language string, ok bool) {
	ext := strings.ToLower(filepath.Ext(name))
	if k, ok := kinds[ext]; ok {
		return k, "", true
	}
	if l, ok := languages[ext]; ok {
		return "code", l, true
	}
	return "", "", false
}

// Kinds lists the kinds Read knows and their extensions, for help texts.
func Kinds() map[string][]string {
	out := map[string][]string{}
	for ext, k := range kinds {
		out[k] = append(out[k], ext)
	}
	for ext := range languages {
		out["code"] = append(out["code"], ext)
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

// Text is the text of a file of the kind: field is the JSON field that is a record's text.
func Text(kind string, data []byte, field string) (string, error) {
	switch kind {
	case "pdf":
		return pdfText(data)
	}
	if err := validText(data); err != nil {
		return "", err
	}
	switch kind {
	case "csv":
		return csvText(data)
	case "html":
		return htmlText(data)
	case "json":
		return jsonText(data, field)
	case "jsonl":
		return jsonlText(data, field)
	}
	return string(data), nil
}

// csvText is one line per row: "column: value; column: value", so that each chunk carries its
// column names. A .tsv (or any file whose first line has tabs and no commas) splits on tabs.
func csvText(data []byte) (string, error) {
	r := csv.NewReader(bytes.NewReader(data))
	first, _, _ := strings.Cut(string(data), "\n")
	if strings.Contains(first, "\t") && !strings.Contains(first, ",") {
		r.Comma = '\t'
	}
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	rows, err := r.ReadAll()
	if err != nil {
		return "", fmt.Errorf("not valid CSV: %v", err)
	}
	if len(rows) == 0 {
		return "", nil
	}
	header := rows[0]
	var b strings.Builder
	for _, row := range rows[1:] {
		var cells []string
		for i, v := range row {
			if v = strings.TrimSpace(v); v == "" {
				continue
			}
			if i < len(header) && strings.TrimSpace(header[i]) != "" {
				cells = append(cells, strings.TrimSpace(header[i])+": "+v)
			} else {
				cells = append(cells, v)
			}
		}
		if len(cells) > 0 {
			b.WriteString(strings.Join(cells, "; "))
			b.WriteString("\n")
		}
	}
	if len(rows) == 1 { // a header alone is its text
		return strings.Join(header, ", "), nil
	}
	return b.String(), nil
}

// htmlText is the visible text of a page: text nodes outside script, style, template and the
// like, with block elements on their own lines and the title first.
func htmlText(data []byte) (string, error) {
	doc, err := html.Parse(bytes.NewReader(data))
	if err != nil {
		return "", fmt.Errorf("not valid HTML: %v", err)
	}
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "style", "noscript", "template", "svg", "head":
				if n.Data == "head" {
					for c := n.FirstChild; c != nil; c = c.NextSibling {
						if c.Type == html.ElementNode && c.Data == "title" {
							walk(c)
							b.WriteString("\n\n")
						}
					}
				}
				return
			}
		}
		if n.Type == html.TextNode {
			if t := strings.Join(strings.Fields(n.Data), " "); t != "" {
				if s := b.String(); s != "" && !strings.HasSuffix(s, "\n") && !strings.HasSuffix(s, " ") {
					b.WriteString(" ")
				}
				b.WriteString(t)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if n.Type == html.ElementNode && blockElements[n.Data] {
			b.WriteString("\n\n")
		}
	}
	walk(doc)
	return collapseBlankLines(b.String()), nil
}

var blockElements = map[string]bool{"p": true, "div": true, "section": true, "article": true, "header": true, "footer": true,
	"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "li": true, "tr": true, "pre": true, "blockquote": true,
	"br": true, "table": true, "ul": true, "ol": true, "dd": true, "dt": true, "main": true, "nav": true, "aside": true, "title": true}

func collapseBlankLines(s string) string {
	lines := strings.Split(s, "\n")
	var out []string
	blank := 0
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" {
			blank++
			if blank > 1 || len(out) == 0 {
				continue
			}
		} else {
			blank = 0
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// pdfText is the text layer of a PDF.
func pdfText(data []byte) (text string, err error) {
	defer func() { // the reader panics on some malformed files
		if p := recover(); p != nil {
			text, err = "", fmt.Errorf("not a readable PDF: %v", p)
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", fmt.Errorf("not a readable PDF: %v", err)
	}
	tr, err := r.GetPlainText()
	if err != nil {
		return "", fmt.Errorf("reading the PDF's text: %v", err)
	}
	b, err := io.ReadAll(tr)
	if err != nil {
		return "", fmt.Errorf("reading the PDF's text: %v", err)
	}
	return string(b), nil
}

// jsonText is field of the record, or of each record of a list, the texts apart by a blank line.
func jsonText(data []byte, field string) (string, error) {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return "", fmt.Errorf("not valid JSON: %v", err)
	}
	records, ok := v.([]any)
	if !ok {
		records = []any{v}
	}
	return fieldTexts(records, field, func(i int) string { return fmt.Sprintf("record %d", i) })
}

// jsonlText is field of each line's record.
func jsonlText(data []byte, field string) (string, error) {
	var records []any
	var lines []int
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var v any
		if err := json.Unmarshal(line, &v); err != nil {
			return "", fmt.Errorf("line %d is not valid JSON: %v", n, err)
		}
		records, lines = append(records, v), append(lines, n)
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return fieldTexts(records, field, func(i int) string { return fmt.Sprintf("line %d", lines[i]) })
}

func fieldTexts(records []any, field string, where func(int) string) (string, error) {
	var texts []string
	for i, r := range records {
		m, ok := r.(map[string]any)
		if !ok {
			return "", fmt.Errorf("%s is not an object: each record must be an object with a %q field", where(i), field)
		}
		switch t := m[field].(type) {
		case string:
			if strings.TrimSpace(t) != "" {
				texts = append(texts, t)
			}
		case nil:
		default:
			b, _ := json.Marshal(t)
			texts = append(texts, string(b))
		}
	}
	if len(texts) == 0 && len(records) > 0 {
		return "", errors.New("no record has a " + fmt.Sprintf("%q", field) + " field: name the field that holds the text with --json-field")
	}
	return strings.Join(texts, "\n\n"), nil
}
