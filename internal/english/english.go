package english

import (
	"strconv"
	"strings"
)

// Count is n and noun, the noun in the plural unless n is 1: Count(1, "step") is "1 step",
// Count(3, "entry") "3 entries".
func Count(n int, noun string) string {
	return strconv.Itoa(n) + " " + Plural(n, noun)
}

// Plural is noun, in the plural unless n is 1 (or -1). A noun in two words pluralises its last
// ("warning message" → "warning messages").
func Plural(n int, noun string) string {
	if n == 1 || n == -1 || noun == "" {
		return noun
	}
	if p, ok := irregular[noun]; ok {
		return p
	}
	last := noun[strings.LastIndexByte(noun, ' ')+1:]
	switch {
	case strings.HasSuffix(last, "s"), strings.HasSuffix(last, "x"), strings.HasSuffix(last, "ch"), strings.HasSuffix(last, "sh"):
		return noun + "es"
	case len(last) > 1 && last[len(last)-1] == 'y' && !strings.ContainsRune("aeiou", rune(last[len(last)-2])):
		return noun[:len(noun)-1] + "ies"
	}
	return noun + "s"
}

var irregular = map[string]string{"child": "children", "was": "were", "is": "are", "has": "have"}

// A is word after its indefinite article: A("review") is "a review", A("llm") "an llm" (said
// el-el-em), A("agent") "an agent", A("user") "a user".
func A(word string) string {
	return Article(word) + " " + word
}

// Article is "a" or "an", as word is said.
func Article(word string) string {
	w := strings.ToLower(word)
	first, _, _ := strings.Cut(w, "_") // a tool's name: code_index is said "code"
	first, _, _ = strings.Cut(first, " ")
	first, _, _ = strings.Cut(first, ":") // mcp:NAME
	if _, ok := spelled[first]; ok {
		return "an"
	}
	switch {
	case w == "":
		return "a"
	case strings.HasPrefix(w, "uni"), strings.HasPrefix(w, "use"), strings.HasPrefix(w, "usa"), strings.HasPrefix(w, "url"), strings.HasPrefix(w, "one"):
		return "a"
	case strings.ContainsRune("aeiou", rune(w[0])):
		return "an"
	}
	return "a"
}

// spelled are the words said letter by letter whose first letter's name starts with a vowel.
var spelled = map[string]struct{}{
	"llm": {}, "http": {}, "https": {}, "mcp": {}, "html": {}, "sql": {}, "rss": {}, "json": {}, "xml": {}, "api": {}, "ssh": {}, "s3": {}, "mcp-server": {},
}
