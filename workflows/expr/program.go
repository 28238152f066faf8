package expr

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	exprlang "github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	exprchecker "github.com/expr-lang/expr/checker"
	"github.com/expr-lang/expr/compiler"
	"github.com/expr-lang/expr/optimizer"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"
)

// MaxNodes bounds the size of one expression's syntax tree.
const MaxNodes = 500

// Functions is the whitelist of functions an expression may call.
var Functions = []string{"abs", "ceil", "floor", "join", "len", "lower", "max", "min", "round", "split", "string", "trim", "upper", "float", "int"}

// Ref is a reference from an expression to a name in the environment: Root is the first name
// (inputs, defaults, a step id, item, ...), Path the literal field names or indexes after it.
type Ref struct {
	Root string
	Path []string
}

// String renders the reference as written (a.b.c).
func (r Ref) String() string {
	if len(r.Path) == 0 {
		return r.Root
	}
	return r.Root + "." + strings.Join(r.Path, ".")
}

// Program is one compiled expression.
type Program struct {
	src  string
	path []any // a simple path: string field names and int indexes after path[0] (the root)
	prog *vm.Program
	refs []Ref
}

// Error is a compile error at a byte offset within the expression source.
type Error struct {
	Offset int
	Msg    string
	Hint   string
}

func (e *Error) Error() string {
	if e.Hint != "" {
		return fmt.Sprintf("%s (%s)", e.Msg, e.Hint)
	}
	return e.Msg
}

// Source returns the expression as written.
func (p *Program) Source() string { return p.src }

// Refs returns the environment names the expression reads, sorted.
func (p *Program) Refs() []Ref { return p.refs }

// IsPath reports whether the expression is a simple path (inputs.query, a.output.results[0]):
// its value is the value found there, unchanged.
func (p *Program) IsPath() bool { return p.path != nil }

// Compile compiles an expression (without the surrounding {{ }}). Results are memoised.
func Compile(src string) (*Program, error) {
	return programs.get(strings.TrimSpace(src), compile)
}

func compile(trimmed string) (*Program, error) {
	if trimmed == "" {
		return nil, &Error{Msg: "empty expression", Hint: "write a path such as inputs.query or a condition such as item.score > 0.8"}
	}
	if path, ok := parsePath(trimmed); ok {
		root := path[0].(string)
		ref := Ref{Root: root}
		for _, s := range path[1:] {
			ref.Path = append(ref.Path, fmt.Sprint(s))
		}
		return &Program{src: trimmed, path: path, refs: []Ref{ref}}, nil
	}
	code := normalizeOperators(trimmed)
	cfg := config()
	tree, err := parser.ParseWithConfig(code, cfg)
	if err != nil {
		e := parseError(err)
		if fixed, ok := IndexSegments(trimmed, false); ok && e.Hint == "" {
			e.Hint = fmt.Sprintf("write an index in brackets: %s (results.0 is vai's spelling, read in vai's dialect only)", fixed)
		}
		return nil, e
	}
	c := &checker{}
	c.walk(tree.Node)
	if c.err != nil {
		return nil, c.err
	}
	// The steps of expr.Compile, on the one shared configuration (expr.Compile rebuilds it per call).
	if _, err := new(exprchecker.Checker).PatchAndCheck(tree, cfg); err != nil {
		return nil, parseError(err)
	}
	if err := optimizer.Optimize(&tree.Node, cfg); err != nil {
		return nil, parseError(err)
	}
	prog, err := compiler.Compile(tree, cfg)
	if err != nil {
		return nil, parseError(err)
	}
	return &Program{src: trimmed, prog: prog, refs: sortRefs(c.refs)}, nil
}

// Eval evaluates the program against env.
func (p *Program) Eval(env map[string]any) (any, error) {
	if p.path != nil {
		return walkPath(env[p.path[0].(string)], p.path[1:]), nil
	}
	out, err := exprlang.Run(p.prog, env)
	if err != nil {
		return nil, fmt.Errorf("expression %q: %w", p.src, err)
	}
	return out, nil
}

// EvalBool evaluates the program and returns its truthiness.
func (p *Program) EvalBool(env map[string]any) (bool, error) {
	v, err := p.Eval(env)
	if err != nil {
		return false, err
	}
	return Truthy(v), nil
}

func parseError(err error) *Error {
	msg := err.Error()
	off := 0
	// expr-lang's errors read "message (line:col)\n | source\n | ^"; keep the first line.
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if i := strings.LastIndex(msg, " ("); i >= 0 && strings.HasSuffix(msg, ")") {
		pos := msg[i+2 : len(msg)-1]
		if j := strings.IndexByte(pos, ':'); j >= 0 {
			if col, err := strconv.Atoi(pos[j+1:]); err == nil {
				off = col
			}
		}
		msg = msg[:i]
	}
	return &Error{Offset: off, Msg: "expression does not compile: " + msg}
}

// parsePath recognises root(.name | [digits] | ['key'])* and returns its segments.
func parsePath(s string) ([]any, bool) {
	var out []any
	i := 0
	ident := func() (string, bool) {
		j := i
		for j < len(s) && (s[j] == '_' || s[j] == '$' || isLetter(s[j]) || (j > i && isDigit(s[j]))) {
			j++
		}
		if j == i {
			return "", false
		}
		id := s[i:j]
		i = j
		return id, true
	}
	root, ok := ident()
	if !ok {
		return nil, false
	}
	switch root {
	case "true", "false", "null", "nil", "undefined", "not", "in", "let":
		return nil, false
	}
	out = append(out, root)
	for i < len(s) {
		switch s[i] {
		case '.':
			i++
			id, ok := ident()
			if !ok {
				return nil, false
			}
			out = append(out, id)
		case '[':
			j := strings.IndexByte(s[i:], ']')
			if j < 0 {
				return nil, false
			}
			inner := s[i+1 : i+j]
			if n, err := strconv.Atoi(inner); err == nil && n >= 0 && inner == strconv.Itoa(n) {
				out = append(out, n)
			} else if len(inner) >= 2 && (inner[0] == '\'' || inner[0] == '"') && inner[len(inner)-1] == inner[0] &&
				!strings.ContainsAny(inner[1:len(inner)-1], `'"\`) {
				out = append(out, inner[1:len(inner)-1])
			} else {
				return nil, false
			}
			i += j + 1
		default:
			return nil, false
		}
	}
	return out, true
}

func isLetter(b byte) bool { return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') }
func isDigit(b byte) bool  { return b >= '0' && b <= '9' }

// normalizeOperators rewrites JavaScript's === and !== to == and != outside string literals.
func normalizeOperators(s string) string {
	if !strings.Contains(s, "==") {
		return s
	}
	var b strings.Builder
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if quote != 0 {
			b.WriteByte(c)
			if c == '\\' && i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			} else if c == quote {
				quote = 0
			}
			continue
		}
		switch {
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case (c == '=' || c == '!') && strings.HasPrefix(s[i+1:], "=="):
			b.WriteByte(c)
			b.WriteByte('=')
			i += 2
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// sortRefs returns refs sorted by their written form, without duplicates.
func sortRefs(refs []Ref) []Ref {
	if len(refs) <= 1 {
		return refs
	}
	type keyed struct {
		key string
		ref Ref
	}
	ks := make([]keyed, len(refs))
	for i, r := range refs {
		ks[i] = keyed{r.String(), r}
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].key < ks[j].key })
	out := make([]Ref, 0, len(ks))
	for i, k := range ks {
		if i == 0 || k.key != ks[i-1].key {
			out = append(out, k.ref)
		}
	}
	return out
}

// checker rejects calls outside the whitelist and collects references.
type checker struct {
	refs   []Ref
	err    *Error
	locals map[string]bool
}

func (c *checker) fail(n ast.Node, msg, hint string) {
	if c.err == nil {
		c.err = &Error{Offset: n.Location().From, Msg: msg, Hint: hint}
	}
}

func allowed(name string) bool {
	for _, f := range Functions {
		if f == name {
			return true
		}
	}
	return false
}

// chain returns the reference a pure member chain (a.b[0].c) spells.
func chain(n ast.Node) (Ref, bool) {
	switch x := n.(type) {
	case *ast.IdentifierNode:
		return Ref{Root: x.Value}, true
	case *ast.MemberNode:
		base, ok := chain(x.Node)
		if !ok {
			return Ref{}, false
		}
		switch p := x.Property.(type) {
		case *ast.StringNode:
			base.Path = append(append([]string(nil), base.Path...), p.Value)
		case *ast.IntegerNode:
			base.Path = append(append([]string(nil), base.Path...), strconv.Itoa(p.Value))
		default:
			return base, false
		}
		return base, true
	case *ast.ChainNode:
		return chain(x.Node)
	}
	return Ref{}, false
}

func (c *checker) walk(n ast.Node) {
	if n == nil || c.err != nil {
		return
	}
	switch x := n.(type) {
	case *ast.IdentifierNode:
		switch x.Value {
		case "null", "undefined":
			return
		}
		if !c.locals[x.Value] {
			c.refs = append(c.refs, Ref{Root: x.Value})
		}
	case *ast.MemberNode:
		if x.Method {
			c.fail(n, "method calls are not allowed", "use one of the functions: "+strings.Join(Functions, ", "))
			return
		}
		if r, ok := chain(x); ok {
			if !c.locals[r.Root] {
				c.refs = append(c.refs, r)
			}
			return
		}
		c.walk(x.Node)
		c.walk(x.Property)
	case *ast.ChainNode:
		c.walk(x.Node)
	case *ast.CallNode:
		id, ok := x.Callee.(*ast.IdentifierNode)
		if !ok || !allowed(id.Value) {
			c.fail(n, fmt.Sprintf("function call %s(...) is not allowed", calleeName(x.Callee)),
				"allowed functions: "+strings.Join(Functions, ", "))
			return
		}
		for _, a := range x.Arguments {
			c.walk(a)
		}
	case *ast.BuiltinNode:
		if !allowed(x.Name) {
			c.fail(n, fmt.Sprintf("function call %s(...) is not allowed", x.Name), "allowed functions: "+strings.Join(Functions, ", "))
			return
		}
		for _, a := range x.Arguments {
			c.walk(a)
		}
	case *ast.UnaryNode:
		c.walk(x.Node)
	case *ast.BinaryNode:
		c.walk(x.Left)
		c.walk(x.Right)
	case *ast.ConditionalNode:
		c.walk(x.Cond)
		c.walk(x.Exp1)
		c.walk(x.Exp2)
	case *ast.SliceNode:
		c.walk(x.Node)
		c.walk(x.From)
		c.walk(x.To)
	case *ast.ArrayNode:
		for _, e := range x.Nodes {
			c.walk(e)
		}
	case *ast.MapNode:
		for _, p := range x.Pairs {
			c.walk(p)
		}
	case *ast.PairNode:
		c.walk(x.Key)
		c.walk(x.Value)
	case *ast.VariableDeclaratorNode:
		c.walk(x.Value)
		if c.locals == nil {
			c.locals = map[string]bool{}
		}
		c.locals[x.Name] = true
		c.walk(x.Expr)
	case *ast.SequenceNode:
		for _, e := range x.Nodes {
			c.walk(e)
		}
	case *ast.NilNode, *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.StringNode, *ast.ConstantNode:
	default:
		c.fail(n, fmt.Sprintf("%s is not supported in weft expressions", strings.TrimPrefix(fmt.Sprintf("%T", n), "*ast.")),
			"use paths, literals, comparisons, &&, ||, !, ?: and the whitelisted functions")
	}
}

func calleeName(n ast.Node) string {
	if r, ok := chain(n); ok {
		return r.String()
	}
	return n.String()
}
