package codeindex

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Chunk is a piece of a source file: a definition (with the comments before it), or a window
// of lines where the file has no boundaries or a definition is too long.
type Chunk struct {
	Text string
	// StartLine and EndLine are 1-based and inclusive.
	StartLine, EndLine int
	// Symbol is the name defined (a function, a type, a class), "" for other code.
	Symbol string
	// Kind is function, class, type or code.
	Kind string
}

// boundary is a line that starts a top-level definition; the first submatch is its name.
type boundary struct {
	re   *regexp.Regexp
	kind string
}

func b(kind, re string) boundary { return boundary{regexp.MustCompile(re), kind} }

// boundaries per language. Definitions are recognised at the start of a line (Python, Ruby and
// Java methods with a little indentation, since they live inside classes).
var boundaries = map[string][]boundary{
	"go": {
		b("function", `^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)`),
		b("type", `^type\s+([A-Za-z_]\w*)`),
		b("code", `^(?:var|const)\s+(?:\(|([A-Za-z_]\w*))`),
	},
	"javascript": jsBoundaries, "typescript": jsBoundaries,
	"python": {
		b("class", `^\s{0,4}class\s+([A-Za-z_]\w*)`),
		b("function", `^\s{0,4}(?:async\s+)?def\s+([A-Za-z_]\w*)`),
	},
	"java": {
		b("class", `^\s{0,4}(?:(?:public|private|protected|static|final|abstract|sealed)\s+)*(?:class|interface|enum|record)\s+([A-Za-z_]\w*)`),
		b("function", `^\s{2,4}(?:(?:public|private|protected|static|final|abstract|synchronized|default)\s+)*[\w<>\[\],.? ]+\s+([a-zA-Z_]\w*)\s*\([^;]*$`),
	},
	"rust": {
		b("function", `^\s{0,4}(?:pub(?:\([^)]*\))?\s+)?(?:async\s+|const\s+|unsafe\s+)*fn\s+([A-Za-z_]\w*)`),
		b("type", `^(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|trait|type|union)\s+([A-Za-z_]\w*)`),
		b("class", `^(?:unsafe\s+)?impl(?:<[^>]*>)?\s+(?:[\w:<>, ]+\s+for\s+)?([A-Za-z_][\w:]*)`),
		b("code", `^(?:pub\s+)?mod\s+([A-Za-z_]\w*)`),
	},
	"ruby": {
		b("class", `^\s{0,2}(?:class|module)\s+([A-Z][\w:]*)`),
		b("function", `^\s{0,4}def\s+((?:self\.)?[\w?!=]+)`),
	},
	"c":   cBoundaries,
	"cpp": cBoundaries,
}

var jsBoundaries = []boundary{
	b("class", `^(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)`),
	b("function", `^(?:export\s+)?(?:default\s+)?(?:async\s+)?function\*?\s*([A-Za-z_$][\w$]*)`),
	b("type", `^(?:export\s+)?(?:declare\s+)?(?:interface|type|enum)\s+([A-Za-z_$][\w$]*)`),
	b("function", `^(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:\([^)]*\)|[A-Za-z_$][\w$]*)\s*(?::[^=]+)?=>`),
	b("code", `^(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)`),
	b("code", `^module\.exports\b()`),
}

var cBoundaries = []boundary{
	b("type", `^(?:typedef\s+)?(?:struct|union|enum|class)\s+([A-Za-z_]\w*)[^;]*$`),
	b("code", `^namespace\s+([A-Za-z_]\w*)`),
	b("function", `^(?:[A-Za-z_][\w:<>,\*& ]*[\s\*&])([A-Za-z_][\w:~]*)\s*\([^;]*$`),
}

// comment reports a line that belongs to the definition after it (a doc comment, a decorator).
func comment(lang, line string) bool {
	t := strings.TrimSpace(line)
	switch lang {
	case "python":
		return strings.HasPrefix(t, "#") || strings.HasPrefix(t, "@")
	case "ruby":
		return strings.HasPrefix(t, "#")
	case "rust":
		return strings.HasPrefix(t, "//") || strings.HasPrefix(t, "#[")
	case "java":
		return strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*") || strings.HasPrefix(t, "@")
	default:
		return strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*")
	}
}

// Split cuts a file into chunks of at most maxChars characters (<= 0: 1500): one per top-level
// definition, its leading comments included, with small neighbours merged; a definition over
// maxChars is cut into windows of whole lines (of characters for a longer line). Languages
// without boundaries are cut into windows only.
func Split(lang, text string, maxChars int) []Chunk {
	if maxChars <= 0 {
		maxChars = 1500
	}
	return split(lang, text, maxChars, maxChars/2)
}

// split is Split merging neighbours while together they have at most mergeUpTo characters.
func split(lang, text string, maxChars, mergeUpTo int) []Chunk {
	lines := strings.SplitAfter(text, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return nil
	}
	type seg struct {
		start, end   int // line indexes, end exclusive
		symbol, kind string
	}
	var segs []seg
	bs := boundaries[lang]
	cur := seg{start: 0, kind: "code"}
	for i, line := range lines {
		for _, bd := range bs {
			m := bd.re.FindStringSubmatch(strings.TrimRight(line, "\r\n"))
			if m == nil {
				continue
			}
			start := i
			for start > cur.start && comment(lang, lines[start-1]) {
				start--
			}
			if start > cur.start {
				cur.end = start
				segs = append(segs, cur)
			}
			name := ""
			if len(m) > 1 {
				name = m[1]
			}
			cur = seg{start: start, symbol: name, kind: bd.kind}
			break
		}
	}
	cur.end = len(lines)
	segs = append(segs, cur)

	size := func(s seg) int {
		n := 0
		for _, l := range lines[s.start:s.end] {
			n += len(l)
		}
		return n
	}
	// merge small neighbours: a segment joins the previous one while both fit in half a chunk
	var merged []seg
	for _, s := range segs {
		if n := len(merged); n > 0 {
			last := &merged[n-1]
			if size(*last)+size(s) <= mergeUpTo {
				last.end = s.end
				if last.symbol == "" {
					last.symbol, last.kind = s.symbol, s.kind
				}
				continue
			}
		}
		merged = append(merged, s)
	}
	var out []Chunk
	for _, s := range merged {
		out = append(out, window(lines, s.start, s.end, maxChars, s.symbol, s.kind)...)
	}
	return out
}

// window cuts lines[start:end] into chunks of whole lines of at most maxChars (a longer line
// alone, cut by characters).
func window(lines []string, start, end, maxChars int, symbol, kind string) []Chunk {
	var out []Chunk
	var b strings.Builder
	first := start
	flush := func(last int) {
		if strings.TrimSpace(b.String()) != "" {
			out = append(out, Chunk{Text: b.String(), StartLine: first + 1, EndLine: last + 1, Symbol: symbol, Kind: kind})
		}
		b.Reset()
	}
	for i := start; i < end; i++ {
		l := lines[i]
		if b.Len() > 0 && b.Len()+len(l) > maxChars {
			flush(i - 1)
			first = i
		}
		for len(l) > maxChars {
			cut := maxChars
			for cut > 1 && !utf8.RuneStart(l[cut]) {
				cut-- // never cut a character in two
			}
			b.WriteString(l[:cut])
			flush(i)
			first = i
			l = l[cut:]
		}
		b.WriteString(l)
	}
	flush(end - 1)
	return out
}
