package activities_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/internal/testkit/fakellm"
)

// TestLLMStructuredOutput: a schema goes to the provider as a strict json_schema response format;
// "json" stays json_object; a provider that answers 400 to json_schema is asked once more with
// json_object, the output says so in a warning, and the repair loop still checks the schema.
func TestLLMStructuredOutput(t *testing.T) {
	schema := map[string]any{"title": "Answer", "type": "object", "required": []any{"answer"}, "additionalProperties": false,
		"properties": map[string]any{"answer": map[string]any{"type": "string"}}}
	tests := []struct {
		name     string
		script   []fakellm.Reply
		format   any
		tools    []any
		formats  []string // response_format.type of each request
		warning  string
		wantJSON any
	}{
		{name: "schema is sent strict", script: []fakellm.Reply{fakellm.Text(`{"answer":"yes"}`)}, format: schema,
			formats: []string{"json_schema"}, wantJSON: map[string]any{"answer": "yes"}},
		{name: "schema is sent alongside tools", script: []fakellm.Reply{fakellm.Text(`{"answer":"yes"}`)}, format: schema,
			tools:   []any{map[string]any{"name": "lookup", "description": "look up", "parameters": map[string]any{"type": "object", "properties": map[string]any{}}}},
			formats: []string{"json_schema"}, wantJSON: map[string]any{"answer": "yes"}},
		{name: "json stays json_object", script: []fakellm.Reply{fakellm.Text(`{"x":1}`)}, format: "json",
			formats: []string{"json_object"}, wantJSON: map[string]any{"x": float64(1)}},
		{name: "400 falls back to json_object once, repairs kept",
			script: []fakellm.Reply{fakellm.Error(400, ""), fakellm.Text(`{"answer":7}`), fakellm.Text(`{"answer":"seven"}`)}, format: schema,
			formats: []string{"json_schema", "json_object", "json_object"}, warning: "refused response_format json_schema",
			wantJSON: map[string]any{"answer": "seven"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakellm.New(tt.script...)
			defer f.Close()
			in := map[string]any{"prompt": "answer", "responseFormat": tt.format}
			if tt.tools != nil {
				in["tools"] = tt.tools
			}
			res, err := run(t, llmConfig(f), "llm", in)
			require.NoError(t, err)
			out := res.Output.(map[string]any)
			require.Equal(t, tt.wantJSON, out["json"])
			reqs := f.Requests()
			require.Len(t, reqs, len(tt.formats))
			for i, want := range tt.formats {
				require.Equal(t, want, reqs[i].ResponseFormat["type"], "request %d", i)
			}
			if tt.formats[0] == "json_schema" {
				js := reqs[0].ResponseFormat["json_schema"].(map[string]any)
				require.Equal(t, "Answer", js["name"])
				require.Equal(t, true, js["strict"])
				require.Equal(t, schema, js["schema"])
			}
			if tt.warning == "" {
				require.Nil(t, out["warnings"])
			} else {
				require.Len(t, out["warnings"], 1)
				require.Contains(t, out["warnings"].([]any)[0], tt.warning)
			}
		})
	}
}
