package vaipkg

import (
	"strings"
	"unicode"
)

// A package's text (package.json's description, author, keywords, ...) is printed by weft list,
// info and install: its author must not be able to drive the user's terminal with it. Text is
// cleaned once, where package.json is read (ParseManifest), and again where the store's record is
// read (Get), for records written before.

// Line is s made safe to print on one line: terminal escape sequences (ESC or C1 CSI, OSC, DCS,
// ... with their parameters) are dropped, as are other C0 and C1 controls, DEL and Unicode's bidi
// controls (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069); a tab or a line break (\r\n, \r,
// \n, NEL, U+2028, U+2029) becomes a space, and the ends are trimmed. Other text is kept as written.
func Line(s string) string {
	return cleanText(s, false)
}

// Paragraphs is s cleaned like Line except that line breaks stay, as \n: a line's trailing spaces
// are trimmed and more than one empty line in a row collapse into one.
func Paragraphs(s string) string {
	return cleanText(s, true)
}

func cleanText(s string, multiline bool) string {
	if plain(s) {
		return strings.TrimSpace(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; {
		case r == '\r' || r == '\n' || r == 0x85 || r == '\u2028' || r == '\u2029':
			if r == '\r' && i+1 < len(rs) && rs[i+1] == '\n' {
				i++
			}
			if multiline {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		case r == '\t':
			b.WriteByte(' ')
		case r == 0x1b || r == 0x90 || r == 0x98 || r == 0x9b || r >= 0x9d && r <= 0x9f: // ESC, DCS, SOS, CSI, OSC, PM, APC
			i = skipEscape(rs, i)
		case Unsafe(r):
			// dropped
		default:
			b.WriteRune(r)
		}
	}
	out := strings.TrimSpace(b.String())
	if !multiline || out == "" {
		return out
	}
	var kept []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimRightFunc(l, unicode.IsSpace)
		if l == "" && kept[len(kept)-1] == "" {
			continue // one empty line is enough (the first line is not empty: out is trimmed)
		}
		kept = append(kept, l)
	}
	return strings.Join(kept, "\n")
}

// Unsafe reports whether a terminal may act on r or draw the text after it reversed: a C0 or C1
// control, DEL, or a bidi control. Line and Paragraphs drop these; weft's JSON output escapes them.
func Unsafe(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) }

// plain reports whether s holds nothing cleanText changes but its ends: the usual case.
func plain(s string) bool {
	for _, r := range s {
		if Unsafe(r) || r == '\u2028' || r == '\u2029' {
			return false
		}
	}
	return true
}

// skipEscape returns the index of the last rune of the escape sequence starting at rs[i]: ESC
// (or C1) CSI up to its final byte, OSC, DCS, SOS, PM and APC up to BEL or ST, any other ESC with
// the one character after it.
func skipEscape(rs []rune, i int) int {
	kind := rs[i]
	if kind == 0x1b {
		if i+1 >= len(rs) {
			return i
		}
		i++
		switch rs[i] {
		case '[':
			kind = 0x9b
		case ']':
			kind = 0x9d
		case 'P':
			kind = 0x90
		case 'X':
			kind = 0x98
		case '^':
			kind = 0x9e
		case '_':
			kind = 0x9f
		default:
			return i // a two-character escape (ESC c resets the terminal)
		}
	}
	for i++; i < len(rs); i++ {
		r := rs[i]
		if kind == 0x9b {
			if r >= 0x40 && r <= 0x7e {
				return i // CSI's final byte
			}
			if r < 0x20 || r > 0x3f {
				return i - 1 // not a parameter: the sequence is broken, what follows is text
			}
			continue
		}
		switch {
		case r == 0x07 || r == 0x9c:
			return i
		case r == 0x1b && i+1 < len(rs) && rs[i+1] == '\\':
			return i + 1
		}
	}
	return len(rs) - 1 // unterminated: the rest is the sequence's
}
