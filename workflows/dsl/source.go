package dsl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// MaxFileSize is the largest workflow file weft reads (1 MiB). Larger pipelines belong in several
// files or in data the steps read, not in the definition that every run carries in its history.
const MaxFileSize = 1 << 20

// MaxDepth is the deepest JSON nesting a workflow file may use.
const MaxDepth = 64

// Source is a workflow file's bytes with the position of every JSON value in it.
type Source struct {
	File  string
	Data  []byte
	Root  any
	pos   map[string]int // JSON pointer -> byte offset of the value
	keys  map[string]int // JSON pointer -> byte offset of the key naming it
	lines []int          // byte offset of each line start
	dups  []string       // pointers of duplicated object keys
}

// ParseSource decodes data, recording positions. The error, when not nil, is a Diagnostics list.
func ParseSource(file string, data []byte) (*Source, error) {
	s := &Source{File: file, Data: data}
	s.indexLines()
	if len(data) > MaxFileSize {
		return nil, Diagnostics{sizeDiag(file, int64(len(data)))}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, Diagnostics{s.diag(0, "", "file is empty", "a workflow is a JSON object with name and steps; run `weft init` to scaffold one")}
	}
	if err := checkDepth(data); err != nil {
		return nil, Diagnostics{s.diag(err.off, "", err.msg, fmt.Sprintf("nest at most %d levels", MaxDepth))}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, Diagnostics{s.syntaxDiag(err)}
	}
	if rest := bytes.TrimSpace(data[dec.InputOffset():]); len(rest) > 0 {
		off := len(data) - len(bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n"))
		return nil, Diagnostics{s.diag(off, "", "unexpected data after the top-level JSON value", "a workflow file holds exactly one JSON object")}
	}
	s.Root = root
	s.pos = map[string]int{}
	s.keys = map[string]int{}
	sc := &scanner{data: data, src: s}
	sc.value("")
	return s, nil
}

func sizeDiag(file string, size int64) Diagnostic {
	return Diagnostic{File: file, Line: 1, Col: 1, Severity: SeverityError,
		Message: fmt.Sprintf("file is %d bytes, larger than the %d byte limit", size, MaxFileSize),
		Hint:    "split the workflow, or keep large data in a collection the steps read"}
}

func (s *Source) syntaxDiag(err error) Diagnostic {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off := int(se.Offset) - 1
		if off < 0 {
			off = 0
		}
		msg := strings.TrimPrefix(se.Error(), "invalid character ")
		if msg != se.Error() {
			msg = "invalid JSON: unexpected character " + msg
		} else {
			msg = "invalid JSON: " + msg
		}
		return s.diag(off, "", msg, syntaxHint(s.Data, off))
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return s.diag(len(s.Data), "", "invalid JSON: the file ends before the JSON value is complete", "close every { [ and \" you opened")
	}
	return s.diag(0, "", "invalid JSON: "+err.Error(), "")
}

func syntaxHint(data []byte, off int) string {
	if off < len(data) {
		switch data[off] {
		case '}', ']':
			prev := bytes.TrimRight(data[:off], " \t\r\n")
			if len(prev) > 0 && prev[len(prev)-1] == ',' {
				return "remove the trailing comma"
			}
		case '\'':
			return "JSON strings use double quotes"
		case '/':
			return "JSON has no comments"
		case '"':
			return "a comma is probably missing before this"
		}
	}
	return "check the JSON syntax here"
}

func (s *Source) indexLines() {
	s.lines = []int{0}
	for i, b := range s.Data {
		if b == '\n' {
			s.lines = append(s.lines, i+1)
		}
	}
}

// LineCol converts a byte offset to 1-based line and column (columns count bytes).
func (s *Source) LineCol(off int) (int, int) {
	if off < 0 {
		off = 0
	}
	i := sort.Search(len(s.lines), func(i int) bool { return s.lines[i] > off }) - 1
	if i < 0 {
		i = 0
	}
	return i + 1, off - s.lines[i] + 1
}

// Offset returns the byte offset of the value at pointer, falling back to its nearest ancestor.
func (s *Source) Offset(pointer string) int {
	for {
		if off, ok := s.pos[pointer]; ok {
			return off
		}
		if pointer == "" {
			return 0
		}
		pointer = pointer[:strings.LastIndexByte(pointer, '/')]
	}
}

// KeyOffset returns the byte offset of the key naming pointer's value, or the value's offset.
func (s *Source) KeyOffset(pointer string) int {
	if off, ok := s.keys[pointer]; ok {
		return off
	}
	return s.Offset(pointer)
}

// StringOffset returns the offset of byte i of the string value at pointer (escapes before i
// are counted as written, so the column is approximate after them).
func (s *Source) StringOffset(pointer string, i int) int {
	off := s.Offset(pointer)
	if off < len(s.Data) && s.Data[off] == '"' {
		return off + 1 + i
	}
	return off
}

func (s *Source) diag(off int, pointer, msg, hint string) Diagnostic {
	line, col := s.LineCol(off)
	return Diagnostic{File: s.File, Line: line, Col: col, Where: Where(pointer), Message: msg, Hint: hint, Severity: SeverityError}
}

// At builds an error diagnostic at the value of pointer.
func (s *Source) At(pointer, msg, hint string) Diagnostic {
	return s.diag(s.Offset(pointer), pointer, msg, hint)
}

// AtKey builds an error diagnostic at the key of pointer.
func (s *Source) AtKey(pointer, msg, hint string) Diagnostic {
	return s.diag(s.KeyOffset(pointer), pointer, msg, hint)
}

// Where renders a JSON pointer the way messages name places: steps[2].inputs.query.
func Where(pointer string) string {
	if pointer == "" {
		return ""
	}
	var b strings.Builder
	for _, tok := range strings.Split(pointer[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if _, err := strconv.Atoi(tok); err == nil {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		if isPlainKey(tok) {
			b.WriteString(tok)
		} else {
			b.WriteString(strconv.Quote(tok))
		}
	}
	return b.String()
}

func isPlainKey(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '$' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

type depthErr struct {
	off int
	msg string
}

// checkDepth refuses deeply nested input before encoding/json recurses into it.
func checkDepth(data []byte) *depthErr {
	depth := 0
	inStr := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inStr {
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			depth++
			if depth > MaxDepth {
				return &depthErr{off: i, msg: fmt.Sprintf("JSON is nested more than %d levels deep", MaxDepth)}
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}

// scanner walks syntactically valid JSON (encoding/json checked it) recording value offsets.
type scanner struct {
	data []byte
	i    int
	src  *Source
}

func (sc *scanner) ws() {
	for sc.i < len(sc.data) {
		switch sc.data[sc.i] {
		case ' ', '\t', '\r', '\n':
			sc.i++
		default:
			return
		}
	}
}

func (sc *scanner) value(ptr string) {
	sc.ws()
	sc.src.pos[ptr] = sc.i
	if sc.i >= len(sc.data) {
		return
	}
	switch sc.data[sc.i] {
	case '{':
		sc.i++
		seen := map[string]bool{}
		for {
			sc.ws()
			if sc.i >= len(sc.data) || sc.data[sc.i] == '}' {
				sc.i++
				return
			}
			if sc.data[sc.i] == ',' {
				sc.i++
				continue
			}
			keyOff := sc.i
			key := sc.str()
			child := ptr + "/" + escapePointer(key)
			if seen[key] {
				sc.src.dups = append(sc.src.dups, child)
			}
			seen[key] = true
			sc.src.keys[child] = keyOff
			sc.ws()
			sc.i++ // ':'
			sc.value(child)
		}
	case '[':
		sc.i++
		n := 0
		for {
			sc.ws()
			if sc.i >= len(sc.data) || sc.data[sc.i] == ']' {
				sc.i++
				return
			}
			if sc.data[sc.i] == ',' {
				sc.i++
				continue
			}
			sc.value(ptr + "/" + strconv.Itoa(n))
			n++
		}
	case '"':
		sc.str()
	default:
		for sc.i < len(sc.data) && !strings.ContainsRune(",}] \t\r\n", rune(sc.data[sc.i])) {
			sc.i++
		}
	}
}

// str consumes a string literal and returns its decoded value.
func (sc *scanner) str() string {
	start := sc.i
	sc.i++
	for sc.i < len(sc.data) {
		switch sc.data[sc.i] {
		case '\\':
			sc.i += 2
			continue
		case '"':
			sc.i++
			var s string
			_ = json.Unmarshal(sc.data[start:sc.i], &s)
			return s
		}
		sc.i++
	}
	return ""
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
