package datatools_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/datatools"
	"github.com/weftworks/weft/workflows/dsl"
)

func decode(t *testing.T, s string) map[string]any {
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &m))
	return m
}

// run compiles a one-step workflow around the tool and runs it on env.
func run(t *testing.T, tool string, inputs dsl.In, env map[string]any) (any, error) {
	t.Helper()
	w, err := dsl.New("t").Input("x", "array").Step("other", "merge", dsl.In{"arrays": []any{"{{ inputs.x }}"}}).Step("s", tool, inputs).Step("then_step", "models", nil).Compile()
	require.NoError(t, err)
	cs, _ := w.Step("s")
	resolved, err := cs.InputValue.Resolve(env)
	require.NoError(t, err)
	return datatools.Run(cs, resolved.(map[string]any), env)
}

func TestDataTools(t *testing.T) {
	env := decode(t, `{"inputs": {"x": [{"source":"a","score":0.9,"content":"A","meta":{"t":"doc"}},{"source":"b","score":0.3,"content":"B"},{"source":"a","score":0.7,"content":"A2"}]},
	  "other": {"output": {"results": [{"source":"c","score":0.8}], "resultCount": 1}}}`)
	cases := []struct {
		name   string
		tool   string
		inputs dsl.In
		want   string
	}{
		{"merge dedup by field", "merge", dsl.In{"arrays": []any{"{{ inputs.x }}", "{{ other.output }}"}, "dedup": true, "dedup_field": "source"},
			`{"results":[{"source":"a","score":0.9,"content":"A","meta":{"t":"doc"}},{"source":"b","score":0.3,"content":"B"},{"source":"c","score":0.8}],"resultCount":3}`},
		{"merge without dedup keeps all", "merge", dsl.In{"arrays": []any{"{{ inputs.x }}", "{{ other.output.results[5] }}"}},
			`{"results":[{"source":"a","score":0.9,"content":"A","meta":{"t":"doc"}},{"source":"b","score":0.3,"content":"B"},{"source":"a","score":0.7,"content":"A2"}],"resultCount":3}`},
		{"filter by score", "filter", dsl.In{"array": "{{ inputs.x }}", "condition": "item.score > 0.5"},
			`{"results":[{"source":"a","score":0.9,"content":"A","meta":{"t":"doc"}},{"source":"a","score":0.7,"content":"A2"}],"resultCount":2}`},
		{"filter with index and missing field", "filter", dsl.In{"array": "{{ inputs.x }}", "condition": "{{ index > 0 && !item.meta }}"},
			`{"results":[{"source":"b","score":0.3,"content":"B"},{"source":"a","score":0.7,"content":"A2"}],"resultCount":2}`},
		{"transform fields", "transform", dsl.In{"array": "{{ inputs.x }}", "fields": []any{"source"}},
			`{"results":[{"source":"a"},{"source":"b"},{"source":"a"}],"resultCount":3}`},
		{"transform mapping", "transform", dsl.In{"array": "{{ other.output }}", "mapping": map[string]any{"where": "source", "relevance": "score"}},
			`{"results":[{"where":"c","relevance":0.8}],"resultCount":1}`},
		{"transform template", "transform", dsl.In{"array": "{{ inputs.x }}", "template": "{{ index }}: {{ item.content }} ({{ item.meta.t }})"},
			`{"results":["0: A (doc)","1: B (null)","2: A2 (null)"],"resultCount":3}`},
		{"template", "template", dsl.In{"text": "{{ other.output.resultCount }} result(s)"}, `{"text":"1 result(s)","charCount":11}`},
		{"conditional then", "conditional", dsl.In{"condition": "other.output.resultCount > 0", "then": []any{"then_step"}},
			`{"conditionResult":true,"branchTaken":"then","enabledSteps":["then_step"],"skippedSteps":[]}`},
		{"conditional else", "conditional", dsl.In{"condition": "{{ other.output.resultCount > 5 }}", "then": []any{"then_step"}},
			`{"conditionResult":false,"branchTaken":"else","enabledSteps":[],"skippedSteps":["then_step"]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := run(t, c.tool, c.inputs, env)
			require.NoError(t, err)
			b, err := json.Marshal(got)
			require.NoError(t, err)
			require.JSONEq(t, c.want, string(b))
		})
	}
}

func TestDataToolErrors(t *testing.T) {
	env := decode(t, `{"inputs": {"x": "not a list"}, "o": {"output": {"n": 1}}}`)
	w, err := dsl.New("t").Input("x", "string").Step("o", "models", nil).
		Step("m", "merge", dsl.In{"arrays": []any{"{{ inputs.x }}"}}).
		Step("f", "filter", dsl.In{"array": "{{ o.output }}", "condition": "item.a > 1"}).Compile()
	require.NoError(t, err)
	for id, want := range map[string]string{
		"m": `step "m": inputs.arrays[0] is a string, not an array or a step output with results`,
		"f": `step "f": inputs.array is an object without results, not an array or a step output with results`,
	} {
		cs, _ := w.Step(id)
		in, err := cs.InputValue.Resolve(env)
		require.NoError(t, err)
		_, err = datatools.Run(cs, in.(map[string]any), env)
		var ie *datatools.InputError
		require.ErrorAs(t, err, &ie)
		require.EqualError(t, err, want)
	}
}
