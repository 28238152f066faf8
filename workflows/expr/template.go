package expr

import (
	"sort"
	"strconv"
	"strings"
)

// Template is a string with zero or more {{ expression }} parts.
type Template struct {
	src    string
	lits   []string   // len(lits) == len(progs)+1: lits[0] prog[0] lits[1] ...
	progs  []*Program // compiled expressions
	single bool       // the whole string is exactly one {{ }}
	refs   []Ref      // every reference, sorted, computed once
}

// HasTemplate reports whether s contains a {{ that would be treated as a template.
func HasTemplate(s string) bool { return strings.Contains(s, "{{") }

// ParseTemplate compiles every {{ }} in s. Errors carry the byte offset in s. Results are memoised.
func ParseTemplate(s string) (*Template, error) { return templates.get(s, parseTemplate) }

func parseTemplate(s string) (*Template, error) {
	t := &Template{src: s}
	rest, base := s, 0
	var lit strings.Builder
	for {
		open := strings.Index(rest, "{{")
		closeStray := strings.Index(rest, "}}")
		if closeStray >= 0 && (open < 0 || closeStray < open) {
			return nil, &Error{Offset: base + closeStray, Msg: "unbalanced braces: \"}}\" without an opening \"{{\"",
				Hint: "remove it, or write literal braces as {{ '}}' }}"}
		}
		if open < 0 {
			lit.WriteString(rest)
			break
		}
		lit.WriteString(rest[:open])
		end := closingBraces(rest, open+2)
		if end < 0 {
			return nil, &Error{Offset: base + open, Msg: "unbalanced braces: \"{{\" is never closed", Hint: "add the closing }}"}
		}
		inner := rest[open+2 : end]
		p, err := Compile(inner)
		if err != nil {
			e := err.(*Error)
			lead := len(inner) - len(strings.TrimLeft(inner, " \t\r\n"))
			return nil, &Error{Offset: base + open + 2 + lead + max(e.Offset, 0), Msg: e.Msg, Hint: e.Hint}
		}
		t.lits = append(t.lits, lit.String())
		lit.Reset()
		t.progs = append(t.progs, p)
		base += end + 2
		rest = rest[end+2:]
	}
	t.lits = append(t.lits, lit.String())
	t.single = len(t.progs) == 1 && t.lits[0] == "" && t.lits[1] == ""
	if len(t.progs) == 1 {
		t.refs = t.progs[0].refs
	} else {
		var all []Ref
		for _, p := range t.progs {
			all = append(all, p.refs...)
		}
		t.refs = sortRefs(all)
	}
	return t, nil
}

// closingBraces returns the index of the "}}" closing an expression that starts at from,
// skipping string literals, or -1.
func closingBraces(s string, from int) int {
	var quote byte
	for i := from; i < len(s); i++ {
		c := s[i]
		if quote != 0 {
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
			continue
		}
		switch {
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == '}' && i+1 < len(s) && s[i+1] == '}':
			// "}}}" closes at the last pair: the first brace belongs to a map literal.
			if i+2 < len(s) && s[i+2] == '}' {
				continue
			}
			return i
		}
	}
	return -1
}

// Source returns the template text.
func (t *Template) Source() string { return t.src }

// IsSingle reports whether the template is exactly one {{ }} (its value keeps its type).
func (t *Template) IsSingle() bool { return t.single }

// IsStatic reports whether the template has no {{ }} at all.
func (t *Template) IsStatic() bool { return len(t.progs) == 0 }

// Programs returns the compiled expressions, in order.
func (t *Template) Programs() []*Program { return t.progs }

// Refs returns every reference of every expression, sorted.
func (t *Template) Refs() []Ref { return t.refs }

// Render evaluates the template: the value itself for a single {{ }}, otherwise a string.
func (t *Template) Render(env map[string]any) (any, error) {
	if t.single {
		return t.progs[0].Eval(env)
	}
	if len(t.progs) == 0 {
		return t.lits[0], nil
	}
	var b strings.Builder
	for i, p := range t.progs {
		b.WriteString(t.lits[i])
		v, err := p.Eval(env)
		if err != nil {
			return nil, err
		}
		b.WriteString(Text(v))
	}
	b.WriteString(t.lits[len(t.lits)-1])
	return b.String(), nil
}

// Value is a JSON value (decoded with encoding/json) whose strings may hold templates.
type Value struct {
	kind  byte // 'l' literal, 't' template, 'm' map, 'a' array
	lit   any
	tmpl  *Template
	keys  []string
	elems []*Value
	refs  []Ref // Refs of the top-level value, computed by CompileValue
}

// PathError is a template error inside a JSON value; Path is a JSON pointer below the value.
type PathError struct {
	Path string
	*Error
}

// CompileValue compiles every template string inside v. All errors are returned, in path order.
func CompileValue(v any) (*Value, []PathError) {
	c := valueCompiler{}
	out := c.value(v)
	out.Refs() // computed now, so a shared Value is only read afterwards
	return out, c.errs
}

// valueCompiler walks a JSON value keeping the pointer segments of the current place; the
// pointer string is only built for an error.
type valueCompiler struct {
	path []string
	errs []PathError
}

func (c *valueCompiler) pointer() string {
	var b strings.Builder
	for _, seg := range c.path {
		b.WriteString("/")
		b.WriteString(seg)
	}
	return b.String()
}

// dynamic reports whether a template could be anywhere in v (a string holding braces).
func dynamic(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(x, "{{") || strings.Contains(x, "}}")
	case map[string]any:
		//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
		for _, e := range x {
			if dynamic(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if dynamic(e) {
				return true
			}
		}
	}
	return false
}

func (c *valueCompiler) value(v any) *Value {
	if !dynamic(v) {
		return &Value{kind: 'l', lit: v}
	}
	switch x := v.(type) {
	case string:
		t, err := ParseTemplate(x)
		if err != nil {
			c.errs = append(c.errs, PathError{Path: c.pointer(), Error: err.(*Error)})
			return &Value{kind: 'l', lit: x}
		}
		if t.IsStatic() {
			return &Value{kind: 'l', lit: x}
		}
		return &Value{kind: 't', tmpl: t}
	case map[string]any:
		keys := make([]string, 0, len(x))
		//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := &Value{kind: 'm', keys: keys, elems: make([]*Value, len(keys))}
		for i, k := range keys {
			c.path = append(c.path, escapePointer(k))
			out.elems[i] = c.value(x[k])
			c.path = c.path[:len(c.path)-1]
		}
		return out
	default: // []any: dynamic() is only true for strings, maps and arrays
		arr := v.([]any)
		out := &Value{kind: 'a', elems: make([]*Value, len(arr))}
		for i, e := range arr {
			c.path = append(c.path, strconv.Itoa(i))
			out.elems[i] = c.value(e)
			c.path = c.path[:len(c.path)-1]
		}
		return out
	}
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// IsStatic reports whether the value holds no template.
func (v *Value) IsStatic() bool { return v.kind == 'l' }

// Refs returns every reference in the value's templates, sorted.
func (v *Value) Refs() []Ref {
	if v.refs == nil {
		var all []Ref
		v.Each(func(_ string, t *Template) { all = append(all, t.Refs()...) })
		v.refs = append(sortRefs(all), []Ref{}...)
	}
	return v.refs
}

// Each calls fn for every template in the value with its JSON pointer below the value, in key order.
func (v *Value) Each(fn func(path string, t *Template)) { v.each("", fn) }

func (v *Value) each(path string, fn func(string, *Template)) {
	switch v.kind {
	case 't':
		fn(path, v.tmpl)
	case 'm':
		for i, e := range v.elems {
			e.each(path+"/"+escapePointer(v.keys[i]), fn)
		}
	case 'a':
		for i, e := range v.elems {
			e.each(path+"/"+strconv.Itoa(i), fn)
		}
	}
}

// Resolve returns the value with every template rendered. Literal parts are shared with the
// compiled value, not copied: treat the result as read-only.
func (v *Value) Resolve(env map[string]any) (any, error) {
	switch v.kind {
	case 'l':
		return v.lit, nil
	case 't':
		return v.tmpl.Render(env)
	case 'm':
		out := make(map[string]any, len(v.keys))
		for i, k := range v.keys {
			r, err := v.elems[i].Resolve(env)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	default:
		out := make([]any, len(v.elems))
		for i, e := range v.elems {
			r, err := e.Resolve(env)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
}

// ResolveWith returns the value with each template replaced by what fn gives for it (path is
// the template's JSON pointer, as Each names it): Resolve, with the rendering chosen per
// template. The first error stops it.
func (v *Value) ResolveWith(fn func(path string, t *Template) (any, error)) (any, error) {
	return v.resolveWith("", fn)
}

func (v *Value) resolveWith(path string, fn func(string, *Template) (any, error)) (any, error) {
	switch v.kind {
	case 'l':
		return v.lit, nil
	case 't':
		return fn(path, v.tmpl)
	case 'm':
		out := make(map[string]any, len(v.keys))
		for i, k := range v.keys {
			r, err := v.elems[i].resolveWith(path+"/"+escapePointer(k), fn)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	default:
		out := make([]any, len(v.elems))
		for i, e := range v.elems {
			r, err := e.resolveWith(path+"/"+strconv.Itoa(i), fn)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
}

// Literal returns the value with each templated part replaced by nil, and the JSON pointers of
// those parts (validators ignore what they find there).
func (v *Value) Literal() (any, []string) {
	var holes []string
	out := v.literal("", &holes)
	return out, holes
}

func (v *Value) literal(path string, holes *[]string) any {
	switch v.kind {
	case 'l':
		return v.lit
	case 't':
		*holes = append(*holes, path)
		return nil
	case 'm':
		out := make(map[string]any, len(v.keys))
		for i, k := range v.keys {
			out[k] = v.elems[i].literal(path+"/"+escapePointer(k), holes)
		}
		return out
	default:
		out := make([]any, len(v.elems))
		for i, e := range v.elems {
			out[i] = e.literal(path+"/"+strconv.Itoa(i), holes)
		}
		return out
	}
}

// AsExpression turns an expression written with templates inside it, as vai files do
// ("item.score >= {{ inputs.min_score }}"), into one expression: each {{ x }} becomes the value
// (x), so a number stays a number and a string stays one string value — a value can never inject
// expression syntax. A template alone inside quotes ('{{ x }}') becomes string(x). ok is false
// when the text has no template.
func (t *Template) AsExpression() (string, bool) {
	if len(t.progs) == 0 {
		return "", false
	}
	var b strings.Builder
	lits := append([]string(nil), t.lits...)
	for i, p := range t.progs {
		before, after := lits[i], lits[i+1]
		if n := len(before); n > 0 && (before[n-1] == '\'' || before[n-1] == '"') && strings.HasPrefix(after, before[n-1:]) {
			b.WriteString(before[:n-1])
			b.WriteString("string(" + p.src + ")")
			lits[i+1] = after[1:]
			continue
		}
		b.WriteString(before)
		b.WriteString("(" + p.src + ")")
	}
	b.WriteString(lits[len(lits)-1])
	return b.String(), true
}
