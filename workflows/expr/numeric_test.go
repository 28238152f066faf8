package expr

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIndexSegments(t *testing.T) {
	cases := []struct {
		in       string
		template bool
		want     string
	}{
		{"results.0.score", false, "results[0].score"},
		{"s.output.results.0.score > 0.5", false, "s.output.results[0].score > 0.5"},
		{"a.results.10", false, "a.results[10]"},
		{"a.0.1.b", false, "a[0][1].b"},
		{"x * 1.5 + y.2", false, "x * 1.5 + y[2]"},
		{"'a.0' == b.0", false, "'a.0' == b[0]"},
		{"f(x).0", false, "f(x)[0]"},
		{"a.0abc", false, "a.0abc"},
		{"version v1.2 of {{ s.output.results.0.content }}", true, "version v1.2 of {{ s.output.results[0].content }}"},
		{"{{ a['k.0'] }} and {{ b.1 }}", true, "{{ a['k.0'] }} and {{ b[1] }}"},
		{"no templates 1.0 a.0", true, "no templates 1.0 a.0"},
		{"results[0].score", false, "results[0].score"},
	}
	for _, tc := range cases {
		got, changed := IndexSegments(tc.in, tc.template)
		require.Equal(t, tc.want, got, tc.in)
		require.Equal(t, tc.want != tc.in, changed, tc.in)
	}
	// the rewritten expression compiles and reads the index
	got, _ := IndexSegments("r.results.0.score >= 0.5", false)
	p, err := Compile(got)
	require.NoError(t, err)
	ok, err := p.EvalBool(map[string]any{"r": map[string]any{"results": []any{map[string]any{"score": 0.7}}}})
	require.NoError(t, err)
	require.True(t, ok)
}
