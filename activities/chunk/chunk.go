package chunk

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Strategies lists the supported strategy names.
var Strategies = []string{"fixed", "sentence", "paragraph", "recursive", "markdown"}

// Split splits text with the named strategy into chunks of about size characters, consecutive
// chunks sharing up to overlap characters (fixed, recursive and markdown). Empty chunks are dropped.
func Split(text, strategy string, size, overlap int) ([]string, error) {
	if size <= 0 {
		return nil, fmt.Errorf("chunk size %d must be positive", size)
	}
	if overlap < 0 || overlap >= size {
		return nil, fmt.Errorf("overlap %d must be at least 0 and smaller than the chunk size %d", overlap, size)
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	var out []string
	switch strategy {
	case "fixed":
		out = fixed(text, size, overlap)
	case "sentence":
		out = pack(sentences(text), size, " ")
	case "paragraph":
		out = pack(paragraphs(text), size, "\n\n")
	case "", "recursive":
		out = recursive(text, size, overlap, []string{"\n\n", "\n", ". ", " "})
	case "markdown":
		out = markdown(text, size, overlap)
	default:
		return nil, fmt.Errorf("unknown chunk strategy %q (use one of %s)", strategy, strings.Join(Strategies, ", "))
	}
	var clean []string
	for _, c := range out {
		if c = strings.TrimSpace(c); c != "" {
			clean = append(clean, c)
		}
	}
	return clean, nil
}

// fixed cuts every size runes, stepping size-overlap.
func fixed(text string, size, overlap int) []string {
	r := []rune(text)
	var out []string
	for start := 0; start < len(r); start += size - overlap {
		end := min(start+size, len(r))
		out = append(out, string(r[start:end]))
		if end == len(r) {
			break
		}
	}
	return out
}

var sentenceEnd = regexp.MustCompile(`([.!?])\s+`)

func sentences(text string) []string {
	marked := sentenceEnd.ReplaceAllString(text, "$1\x00")
	return strings.Split(marked, "\x00")
}

func paragraphs(text string) []string {
	return regexp.MustCompile(`\n\s*\n`).Split(text, -1)
}

// pack joins pieces greedily up to size; a piece longer than size is cut with fixed.
func pack(pieces []string, size int, sep string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for _, p := range pieces {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if utf8.RuneCountInString(p) > size {
			flush()
			out = append(out, fixed(p, size, 0)...)
			continue
		}
		if cur.Len() > 0 && utf8.RuneCountInString(cur.String())+len(sep)+utf8.RuneCountInString(p) > size {
			flush()
		}
		if cur.Len() > 0 {
			cur.WriteString(sep)
		}
		cur.WriteString(p)
	}
	flush()
	return out
}

// recursive splits on the first separator that makes pieces fit, recursing into pieces that
// are still too long, then packs pieces back together with overlap.
func recursive(text string, size, overlap int, seps []string) []string {
	if utf8.RuneCountInString(text) <= size {
		return []string{text}
	}
	if len(seps) == 0 {
		return fixed(text, size, overlap)
	}
	sep := seps[0]
	parts := strings.Split(text, sep)
	if len(parts) == 1 {
		return recursive(text, size, overlap, seps[1:])
	}
	var pieces []string
	for i, p := range parts {
		if i < len(parts)-1 {
			p += sep
		}
		if utf8.RuneCountInString(p) > size {
			// Split again without overlap: the packing below adds it once, between chunks.
			pieces = append(pieces, recursive(p, size, 0, seps[1:])...)
		} else {
			pieces = append(pieces, p)
		}
	}
	var out []string
	var cur string
	for _, p := range pieces {
		if cur != "" && utf8.RuneCountInString(cur)+utf8.RuneCountInString(p) > size {
			out = append(out, cur)
			cur = tail(cur, overlap)
			if utf8.RuneCountInString(cur)+utf8.RuneCountInString(p) > size {
				cur = "" // no room for the overlap before this piece
			}
		}
		cur += p
	}
	if strings.TrimSpace(cur) != "" {
		out = append(out, cur)
	}
	return out
}

// tail returns the last n runes of s, starting at a word boundary when there is one.
func tail(s string, n int) string {
	if n == 0 {
		return ""
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	t := string(r[len(r)-n:])
	if i := strings.IndexAny(t, " \n"); i >= 0 && i < len(t)-1 {
		t = t[i+1:]
	}
	return t
}

var heading = regexp.MustCompile(`(?m)^#{1,6}\s`)

// markdown keeps sections (a heading and what follows) together, splitting long sections
// recursively.
func markdown(text string, size, overlap int) []string {
	idx := heading.FindAllStringIndex(text, -1)
	var sections []string
	prev := 0
	for _, m := range idx {
		if m[0] > prev {
			sections = append(sections, text[prev:m[0]])
		}
		prev = m[0]
	}
	sections = append(sections, text[prev:])
	var out []string
	for _, s := range sections {
		out = append(out, recursive(s, size, overlap, []string{"\n\n", "\n", ". ", " "})...)
	}
	return out
}
