package expr

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func env(t testing.TB) map[string]any {
	var e map[string]any
	require.NoError(t, json.Unmarshal([]byte(`{
	  "inputs": {"query": "rate limits", "n": 3, "tags": ["a","b"], "empty": ""},
	  "defaults": {"db": "myapp"},
	  "search": {"output": {"results": [{"content": "first", "score": 0.91, "source": "a.md"}, {"content": "second", "score": 0.4}], "resultCount": 2}},
	  "sim": {"output": null},
	  "item": {"score": 0.9, "meta": {"type": "doc"}},
	  "index": 1
	}`), &e))
	return e
}

func TestEval(t *testing.T) {
	cases := []struct {
		src  string
		want any
	}{
		{"inputs.query", "rate limits"},
		{"search.output.results[0].content", "first"},
		{"search.output.results[5].content", nil},
		{"missing.deep.path", nil},
		{"search.output.results.length", 2},
		{"inputs.query.length", 11},
		{"search.output.results.length > 0", true},
		{"!sim.output || sim.output.similarity < 0.85", true},
		{"sim.output.similarity < 0.85", false},
		{"sim.output ? true : false", false},
		{"search.output ? 'yes' : 'no'", "yes"},
		{"inputs.empty || 'fallback'", "fallback"},
		{"inputs.query || 'fallback'", "rate limits"},
		{"inputs.n && inputs.query", "rate limits"},
		{"item.score > 0.8 && item.meta.type === 'doc'", true},
		{"item.meta.type !== 'doc'", false},
		{"(inputs.n + 1) * 2", float64(8)},
		{"'n=' + inputs.n", "n=3"},
		{"len(inputs.tags)", 2},
		{"upper(inputs.query)", "RATE LIMITS"},
		{"inputs.n >= 3 and not (inputs.n > 3)", true},
		{"null == sim.output", true},
		{"undefined", nil},
		{"search.output.results[index].content", "second"},
		{"search.output['resultCount']", float64(2)},
		{"inputs.empty || inputs.n || 'z'", float64(3)},
		{"(inputs.empty || (inputs.missing || 'in')) || 'out'", "in"},
		{"sim.output && sim.output.x", nil},
		{"inputs.query && inputs.n > 1", true},
		{"inputs.n > 5 || 'no'", "no"},
		{"inputs.n > 1 && 'yes'", "yes"},
		{"inputs.n > 5 && 'yes'", false},
		{"!inputs.empty && !!inputs.query", true},
		{"inputs.empty ? 'a' : inputs.n > 1 ? 'b' : 'c'", "b"},
	}
	e := env(t)
	for _, c := range cases {
		t.Run(c.src, func(t *testing.T) {
			p, err := Compile(c.src)
			require.NoError(t, err)
			got, err := p.Eval(e)
			require.NoError(t, err)
			require.EqualValues(t, c.want, got)
		})
	}
}

func TestCompileErrors(t *testing.T) {
	cases := []struct{ src, msg string }{
		{"", "empty expression"},
		{"   ", "empty expression"},
		{"a >", "does not compile"},
		{"exec('rm')", "function call exec(...) is not allowed"},
		{"a.b.toUpperCase()", "is not allowed"},
		{"filter(a, # > 1)", "is not allowed"},
		{"a ==== b", "does not compile"},
	}
	for _, c := range cases {
		t.Run(c.src, func(t *testing.T) {
			_, err := Compile(c.src)
			require.Error(t, err)
			require.Contains(t, err.Error(), c.msg)
		})
	}
}

func TestRefs(t *testing.T) {
	p, err := Compile("!sim.output || sim.output.similarity < inputs.threshold && x[0].y")
	require.NoError(t, err)
	var got []string
	for _, r := range p.Refs() {
		got = append(got, r.String())
	}
	require.Equal(t, []string{"inputs.threshold", "sim.output", "sim.output.similarity", "x.0.y"}, got)
}

func TestTemplates(t *testing.T) {
	e := env(t)
	cases := []struct {
		src  string
		want any
	}{
		{"plain text", "plain text"},
		{"{{ search.output.results }}", e["search"].(map[string]any)["output"].(map[string]any)["results"]},
		{"{{inputs.n}}", float64(3)},
		{"Found {{ search.output.resultCount }} for {{ inputs.query }}", "Found 2 for rate limits"},
		{"sim: {{ sim.output }}", "sim: null"},
		{"tags: {{ inputs.tags }}", `tags: ["a","b"]`},
		{"meta: {{ item.meta }}", `meta: {"type":"doc"}`},
		{"{{ '}}' }} and {{ '{{' }}", "}} and {{"},
		{"{{ {'a': 1} }}", map[string]any{"a": 1}},
	}
	for _, c := range cases {
		t.Run(c.src, func(t *testing.T) {
			tm, err := ParseTemplate(c.src)
			require.NoError(t, err)
			got, err := tm.Render(e)
			require.NoError(t, err)
			require.EqualValues(t, c.want, got)
		})
	}
}

func TestTemplateErrors(t *testing.T) {
	cases := []struct {
		src    string
		offset int
		msg    string
	}{
		{"about {{ inputs.q", 6, "never closed"},
		{"x }} y", 2, "without an opening"},
		{"a {{ }} b", 5, "empty expression"},
		{"a {{ f(1) }}", 5, "not allowed"},
	}
	for _, c := range cases {
		t.Run(c.src, func(t *testing.T) {
			_, err := ParseTemplate(c.src)
			require.Error(t, err)
			e := err.(*Error)
			require.Equal(t, c.offset, e.Offset)
			require.Contains(t, e.Msg, c.msg)
		})
	}
}

func TestValue(t *testing.T) {
	var in any
	require.NoError(t, json.Unmarshal([]byte(`{"q": "{{ inputs.query }}", "n": 5, "list": ["{{ inputs.n }}", "x"], "bad": "{{ inputs.q"}`), &in))
	v, errs := CompileValue(in)
	require.Len(t, errs, 1)
	require.Equal(t, "/bad", errs[0].Path)
	got, err := v.Resolve(env(t))
	require.NoError(t, err)
	require.Equal(t, map[string]any{"q": "rate limits", "n": float64(5), "list": []any{float64(3), "x"}, "bad": "{{ inputs.q"}, got)
	lit, holes := v.Literal()
	require.Equal(t, []string{"/list/0", "/q"}, holes)
	require.Equal(t, map[string]any{"q": nil, "n": float64(5), "list": []any{nil, "x"}, "bad": "{{ inputs.q"}, lit)
}

func TestTruthy(t *testing.T) {
	for v, want := range map[any]bool{nil: false, false: false, 0.0: false, "": false, 1: true, "x": true, true: true} {
		require.Equal(t, want, Truthy(v), "%#v", v)
	}
	require.True(t, Truthy([]any{}), "empty arrays are truthy, as in JavaScript")
	require.True(t, Truthy(map[string]any{}))
}
