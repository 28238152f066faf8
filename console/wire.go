package console

import (
	"encoding/json"
	"slices"
	"sort"
	"sync"

	"github.com/weftworks/weft/activities/toolspec"
)

// Candidate is one way an edge drawn from a step of one tool to a step of another can be written
// into the file: the reference {{ from.output.Output }} (the whole output when Output is empty)
// as the value of the target's input Input; or appended to it (Append: an input that is a list
// of lists, merge's arrays); or, with Each, the target runs once per item of that output (its
// forEach) and the input reads {{ item }} (chunk -> embed: text is each of the chunks). Rank
// orders the candidates, 1 the best:
//
//	1  a content output into a content input whose declared types take it
//	2  a content output into a content input where one of the two is typed any
//	3  each item of a content output into a content input whose types take an item (Each)
//	4  an output into the content input of the same name and type (search's query into rerank's)
//
// Content is what the declarations mark weft:"content" (toolspec.Spec.Content): the answer, the
// results, the text to store; not a finish reason, a status text or a comment, and never a
// setting (a model, a collection). Also marks a rank-4 candidate for a required input: the
// builder fills it as well as the one it chose, when it is still empty (search -> rerank writes
// documents and query).
type Candidate struct {
	Input  string `json:"input"`
	Output string `json:"output,omitempty"`
	Rank   int    `json:"rank"`
	Append bool   `json:"append,omitempty"`
	Each   bool   `json:"each,omitempty"`
	Also   bool   `json:"also,omitempty"`
}

// Wire lists how an edge from a step of tool from to a step of tool to can be written, best first
// (by rank, then the target's content inputs in declaration order, its required inputs, and the
// source's content outputs in order). The builder takes the best of those whose input is still
// empty, and asks when several of them rank the same. None: nothing of from's output fits to's
// inputs (the builder then makes to wait for from). Inputs the tool evaluates itself per item
// (Lazy), inputs with a fixed set of values (enum) and a branching tool's then and else are
// never wired.
func Wire(from, to string) []Candidate {
	a, ok := toolspec.Lookup(from)
	if !ok {
		return nil
	}
	b, ok := toolspec.Lookup(to)
	if !ok {
		return nil
	}
	return wire(a, b)
}

// field is one input or output field as wiring reads it.
type field struct {
	name     string
	types    []string // empty: any
	items    []string // an array's item types (empty: any or not an array)
	enum     bool
	content  int // position among the content fields, -1 none
	required bool
}

func fieldsOf(doc any, content []string, skip func(string) bool) []field {
	d, _ := doc.(map[string]any)
	props, _ := d["properties"].(map[string]any)
	var req []string
	if r, ok := d["required"].([]any); ok {
		for _, x := range r {
			if s, ok := x.(string); ok {
				req = append(req, s)
			}
		}
	}
	out := make([]field, 0, len(props))
	for name, p := range props {
		if skip != nil && skip(name) {
			continue
		}
		ps, _ := p.(map[string]any)
		f := field{name: name, types: typesOf(ps), content: slices.Index(content, name), required: slices.Contains(req, name)}
		if items, ok := ps["items"].(map[string]any); ok {
			f.items = typesOf(items)
		}
		_, f.enum = ps["enum"]
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// typesOf is the JSON types a schema allows, without null; nil for any.
func typesOf(s map[string]any) []string {
	var out []string
	add := func(v any) {
		switch t := v.(type) {
		case string:
			if t != "null" && !slices.Contains(out, t) {
				out = append(out, t)
			}
		case []any:
			for _, x := range t {
				if s, ok := x.(string); ok && s != "null" && !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
		}
	}
	add(s["type"])
	if anyOf, ok := s["anyOf"].([]any); ok {
		for _, br := range anyOf {
			bm, _ := br.(map[string]any)
			if bm["type"] == nil {
				return nil // a branch of any type (an enum of strings is typed by its values; keep it simple)
			}
			add(bm["type"])
		}
	}
	return out
}

// fit says how values of the types out fit an input of the types in: 2 every one is taken, 1
// either side is any or some are taken, 0 none is.
func fit(out, in []string) int {
	if len(out) == 0 || len(in) == 0 {
		return 1
	}
	taken := 0
	for _, t := range out {
		if slices.Contains(in, t) || (t == "integer" && slices.Contains(in, "number")) {
			taken++
		}
	}
	switch taken {
	case len(out):
		return 2
	case 0:
		return 0
	}
	return 1
}

func wire(a, b *toolspec.Spec) []Candidate {
	inContent, _ := b.Content()
	_, outContent := a.Content()
	skip := func(name string) bool {
		return b.IsLazy(name) || (b.Branches && (name == "then" || name == "else"))
	}
	var in map[string]any
	_ = json.Unmarshal([]byte(b.InputJSON()), &in)
	ins := fieldsOf(in, inContent, skip)
	outs := fieldsOf(a.OutputSchema(), outContent, nil)
	if len(outs) == 0 {
		outs = []field{{name: "", content: 0}} // the whole output, of any type (a child workflow's)
	}
	type ranked struct {
		Candidate
		in, out field
	}
	var cs []ranked
	for _, i := range ins {
		if i.enum {
			continue
		}
		want := i.types
		appendTo := slices.Contains(i.types, "array") && slices.Contains(i.items, "array")
		if appendTo {
			want = i.items
		}
		for _, o := range outs {
			if i.content < 0 || o.content < 0 {
				if o.name == i.name && i.content >= 0 && len(o.types) > 0 && fit(o.types, want) == 2 {
					cs = append(cs, ranked{Candidate{Input: i.name, Output: o.name, Rank: 4, Append: appendTo, Also: i.required}, i, o})
				}
				continue
			}
			switch fit(o.types, want) {
			case 2:
				cs = append(cs, ranked{Candidate{Input: i.name, Output: o.name, Rank: 1, Append: appendTo}, i, o})
			case 1:
				cs = append(cs, ranked{Candidate{Input: i.name, Output: o.name, Rank: 2, Append: appendTo}, i, o})
			default:
				if !appendTo && slices.Equal(o.types, []string{"array"}) && len(o.items) > 0 && fit(o.items, i.types) == 2 {
					cs = append(cs, ranked{Candidate{Input: i.name, Output: o.name, Rank: 3, Each: true}, i, o})
				}
			}
		}
	}
	pos := func(n int) int {
		if n < 0 {
			return 1 << 20
		}
		return n
	}
	sort.SliceStable(cs, func(x, y int) bool {
		p, q := cs[x], cs[y]
		if p.Rank != q.Rank {
			return p.Rank < q.Rank
		}
		if pos(p.in.content) != pos(q.in.content) {
			return pos(p.in.content) < pos(q.in.content)
		}
		if p.in.required != q.in.required {
			return p.in.required
		}
		if p.in.name != q.in.name {
			return p.in.name < q.in.name
		}
		return pos(p.out.content) < pos(q.out.content)
	})
	out := make([]Candidate, len(cs))
	for i, c := range cs {
		out[i] = c.Candidate
	}
	return out
}

// wiring is Wire for every pair of registry tools that has candidates, keyed "from>to": what the
// builder's page is given. It is computed once per registry generation.
var wiring = struct {
	sync.Mutex
	gen  uint64
	done bool
	m    map[string][]Candidate
}{}

// Wiring returns Wire for every pair of tools that has candidates, keyed "from>to".
func Wiring() map[string][]Candidate {
	wiring.Lock()
	defer wiring.Unlock()
	if g := toolspec.Generation(); wiring.done && wiring.gen == g {
		return wiring.m
	}
	all := toolspec.All()
	m := map[string][]Candidate{}
	for _, a := range all {
		for _, b := range all { // a == b too: two steps of one tool (template -> template)
			if c := wire(a, b); len(c) > 0 {
				m[a.Name+">"+b.Name] = c
			}
		}
	}
	wiring.m, wiring.gen, wiring.done = m, toolspec.Generation(), true
	return m
}
