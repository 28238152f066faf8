package datatools_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/datatools"
	"github.com/weftworks/weft/workflows/dsl"
)

// runDialect compiles a one-step file holding tool with inputs (JSON) in the given dialect and
// runs that step on env.
func runDialect(t *testing.T, d dsl.Dialect, tool, inputs string, env map[string]any) any {
	t.Helper()
	file := fmt.Sprintf(`{"name": "t", "inputs": {"x": {"type": "array"}, "o": {"type": "object"}}, "steps": [{"id": "s", "tool": %q, "inputs": %s}]}`, tool, inputs)
	var w *dsl.Workflow
	var err error
	if d == dsl.DialectVai {
		w, err = dsl.LoadVai("t.json", []byte(file), "")
	} else {
		w, err = dsl.Load("t.weft.json", []byte(file))
	}
	require.NoError(t, err)
	require.Equal(t, d, w.Dialect)
	cs, _ := w.Step("s")
	resolved, err := cs.InputValue.Resolve(env)
	require.NoError(t, err)
	in := resolved.(map[string]any)
	for k, v := range cs.Lazy { // as the interpreter does (workflows/step.go resolveInputs)
		if _, set := in[k]; !set {
			in[k] = v
		}
	}
	out, err := datatools.Run(cs, in, env)
	require.NoError(t, err)
	return out
}

// TestVaiDataTools: a merge or transform step of a vai file gives what vai's executeMerge and
// executeTransform (vai's src/lib/workflow.js) give, and the same step of a weft file keeps
// weft's documented semantics.
func TestVaiDataTools(t *testing.T) {
	env := decode(t, `{"inputs": {"x": [{"source":"a","score":0.9},{"source":"b","score":0.3},{"source":"a","score":0.7},{"score":0.1},{"score":0.2},"a","a"], "o": {"results": [{"source":"z"}], "resultCount": 1}}}`)
	cases := []struct {
		name, tool, inputs string
		vai, weft          string
	}{
		{"merge dedup alone", "merge", `{"arrays": ["{{ inputs.x }}"], "dedup": true}`,
			`[{"source":"a","score":0.9},{"source":"b","score":0.3},{"source":"a","score":0.7},{"score":0.1},{"score":0.2},"a","a"]`,
			`[{"source":"a","score":0.9},{"source":"b","score":0.3},{"source":"a","score":0.7},{"score":0.1},{"score":0.2},"a"]`},
		{"merge dedup_field alone", "merge", `{"arrays": ["{{ inputs.x }}"], "dedup_field": "source"}`,
			`[{"source":"a","score":0.9},{"source":"b","score":0.3},{"source":"a","score":0.7},{"score":0.1},{"score":0.2},"a","a"]`,
			`[{"source":"a","score":0.9},{"source":"b","score":0.3},{"score":0.1},{"score":0.2},"a","a"]`},
		// vai: the items without source share one key (undefined), a string item is its own key ("a", as source "a" is)
		{"merge dedup and dedup_field", "merge", `{"arrays": ["{{ inputs.x }}"], "dedup": true, "dedup_field": "source"}`,
			`[{"source":"a","score":0.9},{"source":"b","score":0.3},{"score":0.1}]`,
			`[{"source":"a","score":0.9},{"source":"b","score":0.3},{"score":0.1},{"score":0.2},"a","a"]`},
		{"merge dedup false and dedup_field", "merge", `{"arrays": ["{{ inputs.x }}"], "dedup": false, "dedup_field": "source"}`,
			`[{"source":"a","score":0.9},{"source":"b","score":0.3},{"source":"a","score":0.7},{"score":0.1},{"score":0.2},"a","a"]`,
			`[{"source":"a","score":0.9},{"source":"b","score":0.3},{"score":0.1},{"score":0.2},"a","a"]`},
		// vai's merge skips an entry that is not an array, a step output holding results too
		{"merge a step output", "merge", `{"arrays": [["a"], "{{ inputs.o }}"]}`, `["a"]`, `["a",{"source":"z"}]`},
		{"transform fields and mapping", "transform", `{"array": "{{ inputs.x }}", "fields": ["source"], "mapping": {"relevance": "score"}}`,
			`[{"source":"a"},{"source":"b"},{"source":"a"},{},{},"a","a"]`,
			`[{"source":"a","relevance":0.9},{"source":"b","relevance":0.3},{"source":"a","relevance":0.7},{"source":null,"relevance":0.1},{"source":null,"relevance":0.2},{"source":null,"relevance":null},{"source":null,"relevance":null}]`},
		{"transform mapping to a value no item has", "transform", `{"array": "{{ inputs.x }}", "mapping": {"where": "source", "kind": "passage"}}`,
			`[{"where":"a","kind":"passage"},{"where":"b","kind":"passage"},{"where":"a","kind":"passage"},{"where":"source","kind":"passage"},{"where":"source","kind":"passage"},"a","a"]`,
			`[{"where":"a","kind":null},{"where":"b","kind":null},{"where":"a","kind":null},{"where":null,"kind":null},{"where":null,"kind":null},{"where":null,"kind":null},{"where":null,"kind":null}]`},
		// a weft template, which vai does not have, renders each item in both dialects
		{"transform template", "transform", `{"array": "{{ inputs.x }}", "template": "{{ item.score }}"}`,
			`[0.9,0.3,0.7,0.1,0.2,null,null]`, `[0.9,0.3,0.7,0.1,0.2,null,null]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for d, want := range map[dsl.Dialect]string{dsl.DialectVai: c.vai, dsl.DialectWeft: c.weft} {
				got := runDialect(t, d, c.tool, c.inputs, env)
				b, err := json.Marshal(got.(map[string]any)["results"])
				require.NoError(t, err)
				require.JSONEq(t, want, string(b), d)
			}
		})
	}
}
