package expr

import (
	"fmt"
	"math"
	"strconv"
	"sync"

	exprlang "github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/conf"
)

var (
	configOnce sync.Once
	sharedConf *conf.Config
)

// config returns the expr-lang configuration every weft expression compiles with. It is built
// once and only read afterwards.
func config() *conf.Config {
	configOnce.Do(func() {
		c := conf.CreateNew()
		for _, op := range options() {
			op(c)
		}
		for name := range c.Disabled {
			delete(c.Builtins, name)
		}
		c.Check()
		sharedConf = c
	})
	return sharedConf
}

func options() []exprlang.Option {
	opts := []exprlang.Option{
		exprlang.DisableAllBuiltins(),
		exprlang.MaxNodes(MaxNodes),
		exprlang.Patch(jsPatcher{}),
		exprlang.Function("__path", func(p ...any) (any, error) { return walkPath(p[0], p[1:]), nil }),
		exprlang.Function("__truthy", func(p ...any) (any, error) { return Truthy(p[0]), nil }, new(func(any) bool)),
		exprlang.Function("__add", func(p ...any) (any, error) { return add(p[0], p[1]) }, new(func(any, any) any)),
		compare("__lt", func(c int) bool { return c < 0 }),
		compare("__le", func(c int) bool { return c <= 0 }),
		compare("__gt", func(c int) bool { return c > 0 }),
		compare("__ge", func(c int) bool { return c >= 0 }),
	}
	for _, f := range Functions {
		opts = append(opts, exprlang.EnableBuiltin(f))
	}
	return opts
}

// walkPath applies Get along keys; a nil on the way ends the walk with nil.
func walkPath(v any, keys []any) any {
	for _, k := range keys {
		if v == nil {
			return nil
		}
		v = Get(v, k)
	}
	return v
}

func compare(name string, ok func(int) bool) exprlang.Option {
	return exprlang.Function(name, func(p ...any) (any, error) {
		c, comparable := cmp(p[0], p[1])
		return comparable && ok(c), nil
	}, new(func(any, any) bool))
}

// cmp orders two numbers or two strings; anything else (null included) is not comparable.
func cmp(a, b any) (int, bool) {
	if fa, ok := toFloat(a); ok {
		fb, ok := toFloat(b)
		if !ok || math.IsNaN(fa) || math.IsNaN(fb) {
			return 0, false
		}
		switch {
		case fa < fb:
			return -1, true
		case fa > fb:
			return 1, true
		}
		return 0, true
	}
	sa, ok1 := a.(string)
	sb, ok2 := b.(string)
	if !ok1 || !ok2 {
		return 0, false
	}
	switch {
	case sa < sb:
		return -1, true
	case sa > sb:
		return 1, true
	}
	return 0, true
}

func add(a, b any) (any, error) {
	_, sa := a.(string)
	_, sb := b.(string)
	if sa || sb {
		return Text(a) + Text(b), nil
	}
	fa, ok1 := toFloat(a)
	fb, ok2 := toFloat(b)
	if ok1 && ok2 {
		if ia, ok := a.(int); ok {
			if ib, ok := b.(int); ok {
				return ia + ib, nil
			}
		}
		return fa + fb, nil
	}
	if aa, ok := a.([]any); ok {
		if bb, ok := b.([]any); ok {
			return append(append([]any{}, aa...), bb...), nil
		}
	}
	return nil, fmt.Errorf("cannot add %s and %s", TypeName(a), TypeName(b))
}

// TypeName names a value's JSON type with an article for messages: "a string", "an array", "null".
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	if _, ok := toFloat(v); ok {
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// isBool reports whether a patched node always yields a boolean, so truthiness is itself.
func isBool(n ast.Node) bool {
	switch x := n.(type) {
	case *ast.BoolNode:
		return true
	case *ast.UnaryNode:
		return x.Operator == "!" || x.Operator == "not"
	case *ast.BinaryNode:
		switch x.Operator {
		case "==", "!=", "in", "matches", "contains", "startsWith", "endsWith", "||", "or", "&&", "and":
			return true
		}
	case *ast.CallNode:
		if id, ok := x.Callee.(*ast.IdentifierNode); ok {
			switch id.Value {
			case "__truthy", "__lt", "__le", "__gt", "__ge":
				return true
			}
		}
	case *ast.ConditionalNode:
		return isBool(x.Exp1) && isBool(x.Exp2)
	}
	return false
}

// truthy wraps n in __truthy unless it is already a boolean.
func truthy(n ast.Node) ast.Node {
	if isBool(n) {
		return n
	}
	return call("__truthy", n, n)
}

// logical gives && and || JavaScript semantics: a || b is a when a is truthy, else b; a && b
// is b when a is truthy, else a. Booleans on both sides keep expr's native operator; otherwise the
// left side is bound once with let and tested for truthiness.
func logical(n *ast.BinaryNode) ast.Node {
	or := n.Operator == "||" || n.Operator == "or"
	if isBool(n.Left) && isBool(n.Right) {
		if or {
			n.Operator = "||"
		} else {
			n.Operator = "&&"
		}
		return n
	}
	var out ast.Node
	if isBool(n.Left) {
		lit := &ast.BoolNode{Value: or}
		lit.SetLocation(n.Location())
		if or {
			out = &ast.ConditionalNode{Ternary: true, Cond: n.Left, Exp1: lit, Exp2: n.Right}
		} else {
			out = &ast.ConditionalNode{Ternary: true, Cond: n.Left, Exp1: n.Right, Exp2: lit}
		}
	} else {
		// expr forbids shadowing, so each binding is named after its operator's offset.
		name := "__v" + strconv.Itoa(n.Location().From)
		v := &ast.IdentifierNode{Value: name}
		v.SetLocation(n.Location())
		cond := &ast.ConditionalNode{Ternary: true, Cond: call("__truthy", n, v), Exp1: v, Exp2: n.Right}
		if !or {
			cond.Exp1, cond.Exp2 = n.Right, v
		}
		cond.SetLocation(n.Location())
		out = &ast.VariableDeclaratorNode{Name: name, Value: n.Left, Expr: cond}
	}
	out.SetLocation(n.Location())
	return out
}

// jsPatcher rewrites the parsed tree to the JavaScript-like semantics documented in doc.go.
// ast.Walk visits children first, so nodes built here are not visited again.
type jsPatcher struct{}

func call(fn string, loc ast.Node, args ...ast.Node) ast.Node {
	n := &ast.CallNode{Callee: &ast.IdentifierNode{Value: fn}, Arguments: args}
	n.SetLocation(loc.Location())
	return n
}

func (jsPatcher) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.IdentifierNode:
		if n.Value == "null" || n.Value == "undefined" {
			nn := &ast.NilNode{}
			nn.SetLocation(n.Location())
			*node = nn
		}
	case *ast.MemberNode:
		if n.Method {
			return
		}
		// a.b[0].c becomes one __path(a, "b", 0, "c") call rather than a call per step.
		if inner, ok := n.Node.(*ast.CallNode); ok {
			if id, ok := inner.Callee.(*ast.IdentifierNode); ok && id.Value == "__path" {
				*node = call("__path", n, append(append([]ast.Node{}, inner.Arguments...), n.Property)...)
				return
			}
		}
		*node = call("__path", n, n.Node, n.Property)
	case *ast.ChainNode:
		*node = n.Node
	case *ast.UnaryNode:
		if n.Operator == "!" || n.Operator == "not" {
			n.Node = truthy(n.Node)
		}
	case *ast.ConditionalNode:
		n.Cond = truthy(n.Cond)
	case *ast.BinaryNode:
		switch n.Operator {
		case "||", "or", "&&", "and":
			*node = logical(n)
		case "<":
			*node = call("__lt", n, n.Left, n.Right)
		case "<=":
			*node = call("__le", n, n.Left, n.Right)
		case ">":
			*node = call("__gt", n, n.Left, n.Right)
		case ">=":
			*node = call("__ge", n, n.Left, n.Right)
		case "+":
			*node = call("__add", n, n.Left, n.Right)
		}
	}
}
