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
	"sync"
	"unicode/utf8"
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
	once  sync.Once
	pos   map[string]int // JSON pointer -> byte offset of the value (built on first lookup)
	keys  map[string]int // JSON pointer -> byte offset of the key naming it
	lines []int          // byte offset of each line start
	dups  []string       // pointers of duplicated object keys
}

// ParseSource decodes data, recording positions. The error, when not nil, is a Diagnostics list.
func ParseSource(file string, data []byte) (*Source, error) {
	if len(data) > MaxFileSize {
		return nil, Diagnostics{sizeDiag(file, int64(len(data)))}
	}
	return parseSource(file, data, "a workflow is a JSON object with name and steps; run `weft init` to scaffold one")
}

// ParseJSON decodes a JSON file weft reads that is not a workflow (a `weft test` fixture), as
// ParseSource does a workflow's: its problems are Diagnostics at their line and column. The
// caller bounds its size.
func ParseJSON(file string, data []byte) (*Source, error) {
	return parseSource(file, data, "write a JSON object")
}

func parseSource(file string, data []byte, emptyHint string) (*Source, error) {
	// Editors on Windows start UTF-8 files with a byte order mark; it carries no meaning.
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	s := &Source{File: file, Data: data}
	s.indexLines()
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, Diagnostics{s.diag(0, "", "file is empty", emptyHint)}
	}
	if err := checkDepth(data); err != nil {
		return nil, Diagnostics{s.diag(err.off, "", err.msg, fmt.Sprintf("nest at most %d levels", MaxDepth))}
	}
	if off := invalidUTF8(data); off >= 0 {
		// encoding/json would turn the byte into U+FFFD silently; the run would then fail on it later
		// (protobuf strings are UTF-8), so refuse the file here, where the byte can be pointed at.
		return nil, Diagnostics{s.diag(off, "", fmt.Sprintf("invalid UTF-8: byte 0x%02X does not start a UTF-8 character", data[off]), utf8Hint(data))}
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
	(&scanner{data: data, src: s}).value("") // duplicate keys only; positions are indexed on first use
	return s, nil
}

// invalidUTF8 returns the offset of the first byte of data that is not valid UTF-8, or -1.
func invalidUTF8(data []byte) int {
	if utf8.Valid(data) {
		return -1
	}
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

func utf8Hint(data []byte) string {
	if bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF}) {
		return "the file is UTF-16: save it as UTF-8"
	}
	return "save the file as UTF-8 (it was probably written as Latin-1 or Windows-1252), or write the character as a \\uXXXX escape"
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
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		// The only value a decode into any can refuse: a number out of float64's range.
		off := max(int(te.Offset)-len(strings.TrimPrefix(te.Value, "number ")), 0)
		return s.diag(off, "", fmt.Sprintf("%s is out of range: numbers must stay within ±1.8e308", te.Value), "write a smaller number, or a string")
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

// index records the position of every value and key. Only diagnostics need positions, so a
// valid file never pays for it.
func (s *Source) index() {
	s.once.Do(func() {
		s.pos = map[string]int{}
		s.keys = map[string]int{}
		(&scanner{data: s.Data, src: s, index: true}).value("")
	})
}

// Offset returns the byte offset of the value at pointer, falling back to its nearest ancestor.
func (s *Source) Offset(pointer string) int {
	s.index()
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
	s.index()
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

// scanner walks syntactically valid JSON (encoding/json checked it). With index set it records
// the offset of every value and key by JSON pointer; without, it only finds duplicate keys.
type scanner struct {
	data  []byte
	i     int
	src   *Source
	index bool
	path  []string // pointer segments of the current value, kept when not indexing
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

// pointer returns the JSON pointer of key inside the current value (non-indexing mode).
func (sc *scanner) pointer(key string) string {
	var b strings.Builder
	for _, seg := range append(sc.path, key) {
		b.WriteString("/" + escapePointer(seg))
	}
	return b.String()
}

func (sc *scanner) value(ptr string) {
	sc.ws()
	if sc.index {
		sc.src.pos[ptr] = sc.i
	}
	if sc.i >= len(sc.data) {
		return
	}
	switch sc.data[sc.i] {
	case '{':
		sc.i++
		var seen []string
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
			sc.ws()
			sc.i++ // ':'
			if sc.index {
				child := ptr + "/" + escapePointer(key)
				sc.src.keys[child] = keyOff
				sc.value(child)
				continue
			}
			if indexOf(seen, key) >= 0 {
				sc.src.dups = append(sc.src.dups, sc.pointer(key))
			}
			seen = append(seen, key)
			sc.path = append(sc.path, key)
			sc.value("")
			sc.path = sc.path[:len(sc.path)-1]
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
			if sc.index {
				sc.value(ptr + "/" + strconv.Itoa(n))
			} else {
				sc.path = append(sc.path, strconv.Itoa(n))
				sc.value("")
				sc.path = sc.path[:len(sc.path)-1]
			}
			n++
		}
	case '"':
		sc.skipString()
	default:
		for sc.i < len(sc.data) && !strings.ContainsRune(",}] \t\r\n", rune(sc.data[sc.i])) {
			sc.i++
		}
	}
}

// skipString consumes a string literal without decoding it.
func (sc *scanner) skipString() {
	sc.i++
	for sc.i < len(sc.data) {
		switch sc.data[sc.i] {
		case '\\':
			sc.i += 2
			continue
		case '"':
			sc.i++
			return
		}
		sc.i++
	}
}

// str consumes a string literal and returns its decoded value.
func (sc *scanner) str() string {
	start := sc.i
	sc.i++
	escaped := false
	for sc.i < len(sc.data) {
		switch sc.data[sc.i] {
		case '\\':
			escaped = true
			sc.i += 2
			continue
		case '"':
			sc.i++
			if !escaped {
				return string(sc.data[start+1 : sc.i-1])
			}
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
