package workflows

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/expr"
)

func storedEnv(t *testing.T) map[string]any {
	var env map[string]any
	require.NoError(t, json.Unmarshal([]byte(`{
	  "inputs": {"q": "rate limits", "k": "title", "i": 1},
	  "get": {"output": {"status": 200, "text": {"$weftBlob": "b1", "size": 5002, "preview": "x"},
	    "results": [{"content": "first", "score": 0.9}, {"$weftBlob": "b2", "size": 900, "preview": "y"}, {"content": "third"}]}},
	  "all": {"output": {"$weftBlob": "b3", "size": 9000, "preview": "z"}},
	  "plain": {"output": {"title": "T", "n": [1, 2, 3], "deep": {"a": {"b": 1}, "c": "unused"}}}
	}`), &env))
	return env
}

func TestReadsStored(t *testing.T) {
	env := storedEnv(t)
	cases := []struct {
		src         string
		whole, want bool
	}{
		{"get.output.status", false, false},
		{"get.output.text", true, false},       // handed on whole
		{"get.output.text", false, true},       // used (rendered in text, compared)
		{"get.output.text.length", true, true}, // a path through the reference
		{"len(get.output.text)", false, true},  // a function of the value
		{"get.output.results[0].content", false, false},
		{"get.output.results[1].content", true, true},
		{"get.output.results", true, false},
		{"len(get.output.results)", false, true}, // the list holds a reference
		{"all.output.title", true, true},         // the whole output is stored
		{"all.output", true, false},
		{"plain.output.deep[inputs.k]", false, false},
		{"plain.output.n.length > 2", false, false},
		{"inputs.q + get.output.status", false, false},
		{"missing.output.x", false, false},
	}
	for _, c := range cases {
		p, err := expr.Compile(c.src)
		require.NoError(t, err, c.src)
		require.Equal(t, c.want, readsStored(p.Refs(), env, c.whole), "%s (whole %v)", c.src, c.whole)
	}
}

// TestPruneEnvKeepsWhatExpressionsRead: evaluating on the pruned environment gives what the
// whole environment gives, and the pruned environment leaves out what no reference names.
func TestPruneEnvKeepsWhatExpressionsRead(t *testing.T) {
	env := storedEnv(t)
	for _, src := range []string{
		"plain.output.deep.a.b + 1",
		"plain.output.n[1] * plain.output.n.length",
		"len(plain.output.n)",
		"plain.output.deep[inputs.k] || plain.output.title",
		"plain.output.n[5]",
		"get.output.results[2].content + ' ' + get.output.status",
		"plain.output.deep.a",
		"plain.output.deep.a.b == 1 ? plain.output : null",
		"inputs.q.length",
	} {
		p, err := expr.Compile(src)
		require.NoError(t, err, src)
		want, err := p.Eval(env)
		require.NoError(t, err, src)
		pruned := pruneEnv(env, p.Refs())
		got, err := p.Eval(pruned)
		require.NoError(t, err, src)
		require.Equal(t, want, got, src)
	}
	p, err := expr.Compile("plain.output.deep.a.b + get.output.results[2].content.length")
	require.NoError(t, err)
	pruned := pruneEnv(env, p.Refs())
	b, _ := json.Marshal(pruned)
	require.JSONEq(t, `{"plain":{"output":{"deep":{"a":{"b":1}}}},"get":{"output":{"results":[null,null,{"content":"third"}]}}}`, string(b))

	p, err = expr.Compile("all.output.title + get.output.text.length")
	require.NoError(t, err)
	b, _ = json.Marshal(pruneEnv(env, p.Refs()))
	require.JSONEq(t, `{"all":{"output":{"$weftBlob":"b3","size":9000,"preview":"z"}},
	  "get":{"output":{"text":{"$weftBlob":"b1","size":5002,"preview":"x"}}}}`, string(b), "a reference met on the way goes whole")
}

func TestValueSourceCompilesTheSameValue(t *testing.T) {
	var in any
	require.NoError(t, json.Unmarshal([]byte(`{"a": "{{ inputs.q }}", "b": ["x", "n={{ inputs.i }}", {"c/d": "{{ plain.output.title }}"}],
	  "lit": {"k": [1, 2]}, "t~": "{{ plain.output.n }}"}`), &in))
	v, errs := expr.CompileValue(in)
	require.Empty(t, errs)
	src := valueSource(v)
	require.Equal(t, in, src)
	env := storedEnv(t)
	want, err := v.Resolve(env)
	require.NoError(t, err)
	// Rendering each template where it stands (what resolveValue does) is what Resolve gives.
	out, err := v.ResolveWith(func(_ string, tm *expr.Template) (any, error) { return tm.Render(env) })
	require.NoError(t, err)
	require.Equal(t, want, out)
}
