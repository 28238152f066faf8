package datatools_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

func TestDedupe(t *testing.T) {
	env := decode(t, `{"inputs": {"x": [
	  {"source":"a.md","content":"Rate limits: 429 means slow down.","score":0.9},
	  {"source":"b.md","content":"rate limits — 429 means  slow down","score":0.8},
	  {"source":"c.md","content":"Retry with backoff.","score":0.7},
	  {"source":"d.md","score":0.6},
	  {"source":"a.md","content":"Retry with backoff!","score":0.5}]},
	  "other": {"output": {"results": ["One.", "one", "two"], "resultCount": 3}}}`)
	cases := []struct {
		name   string
		inputs dsl.In
		want   string
	}{
		{"by content, the best-ranked copy kept", dsl.In{"results": "{{ inputs.x }}"},
			`{"results":[{"source":"a.md","content":"Rate limits: 429 means slow down.","score":0.9},{"source":"c.md","content":"Retry with backoff.","score":0.7},{"source":"d.md","score":0.6}],"resultCount":3,"removed":2}`},
		{"by another field", dsl.In{"results": "{{ inputs.x }}", "by": "source"},
			`{"results":[{"source":"a.md","content":"Rate limits: 429 means slow down.","score":0.9},{"source":"b.md","content":"rate limits — 429 means  slow down","score":0.8},{"source":"c.md","content":"Retry with backoff.","score":0.7},{"source":"d.md","score":0.6}],"resultCount":4,"removed":1}`},
		{"a step output of strings", dsl.In{"results": "{{ other.output }}"},
			`{"results":["One.","two"],"resultCount":2,"removed":1}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := run(t, "dedupe", c.inputs, env)
			require.NoError(t, err)
			got, _ := json.Marshal(out)
			require.JSONEq(t, c.want, string(got))
		})
	}
}

func TestDedupeRefusesWhatIsNotAList(t *testing.T) {
	env := decode(t, `{"inputs": {"x": "just text"}, "other": {"output": {}}}`)
	_, err := run(t, "dedupe", dsl.In{"results": "{{ inputs.x }}"}, env)
	require.ErrorContains(t, err, `step "s": inputs.results is a string, not an array or a step output with results`)
}
