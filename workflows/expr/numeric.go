package expr

import "strings"

// IndexSegments rewrites numeric path segments, as vai's files write them (results.0.score), to
// indexes (results[0].score). In a template (text with {{ }}) only what is inside the braces is
// rewritten; otherwise s is one expression. Number literals (0.5, x * 1.5) and string literals
// are left alone. changed reports whether anything was rewritten.
func IndexSegments(s string, template bool) (out string, changed bool) {
	if !strings.Contains(s, ".") {
		return s, false
	}
	var b strings.Builder
	inside := !template
	var quote byte
	// prev is the kind of the token before the current position: 'i' an identifier, ']' a closing
	// bracket or parenthesis (a path continues after them), 0 anything else.
	var prev byte
	for i := 0; i < len(s); {
		c := s[i]
		if !inside {
			if strings.HasPrefix(s[i:], "{{") {
				inside, prev, quote = true, 0, 0
				b.WriteString("{{")
				i += 2
				continue
			}
			b.WriteByte(c)
			i++
			continue
		}
		if quote != 0 {
			b.WriteByte(c)
			if c == '\\' && i+1 < len(s) {
				b.WriteByte(s[i+1])
				i += 2
				continue
			}
			if c == quote {
				quote, prev = 0, 0
			}
			i++
			continue
		}
		switch {
		case template && strings.HasPrefix(s[i:], "}}"):
			inside = false
			b.WriteString("}}")
			i += 2
		case c == '"' || c == '\'' || c == '`':
			quote = c
			b.WriteByte(c)
			i++
		case c == '_' || c == '$' || isLetter(c):
			j := i
			for j < len(s) && (s[j] == '_' || s[j] == '$' || isLetter(s[j]) || isDigit(s[j])) {
				j++
			}
			b.WriteString(s[i:j])
			i, prev = j, 'i'
		case isDigit(c):
			// a number literal, with its fraction and exponent
			j := i
			for j < len(s) && (isDigit(s[j]) || s[j] == '.' || s[j] == 'e' || s[j] == 'E' || s[j] == '_') {
				j++
			}
			b.WriteString(s[i:j])
			i, prev = j, 0
		case c == '.' && (prev == 'i' || prev == ']') && i+1 < len(s) && isDigit(s[i+1]):
			j := i + 1
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			if j < len(s) && (s[j] == '_' || s[j] == '$' || isLetter(s[j])) {
				// .0abc is no index: leave it for the parser to refuse
				b.WriteByte(c)
				i, prev = i+1, 0
				continue
			}
			b.WriteByte('[')
			b.WriteString(s[i+1 : j])
			b.WriteByte(']')
			i, prev, changed = j, ']', true
		case c == ']' || c == ')':
			b.WriteByte(c)
			i, prev = i+1, ']'
		case c == ' ' || c == '\t' || c == '\n':
			b.WriteByte(c)
			i, prev = i+1, 0
		default:
			b.WriteByte(c)
			i, prev = i+1, 0
		}
	}
	if !changed {
		return s, false
	}
	return b.String(), true
}
