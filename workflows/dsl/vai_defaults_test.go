package dsl_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

// TestVaiDefaults: in vai's dialect a step gets vai's defaults where weft's tool has another
// (query limit 10, vai's executeQuery `inputs.limit || 10`; code_search rerank true, vai's
// handleCodeSearch `input.rerank !== false`), in a loop's nested step too, and a literal limit
// above weft's maximum is clamped to it with a warning naming the cap; weft's own files keep
// weft's defaults and errors.
func TestVaiDefaults(t *testing.T) {
	vai := func(step string) string {
		return `{"name":"w","steps":[` + step + `]}`
	}
	weft := func(step string) string {
		return `{"$schema":"https://weft.dev/schemas/workflow-v1.json","name":"w","steps":[` + step + `]}`
	}
	for _, tc := range []struct {
		name    string
		file    string
		vai     bool
		field   string
		want    any // nil: the field is not set
		warning string
		err     string
	}{
		{name: "query without limit gets vai's 10", vai: true, file: vai(`{"id":"s","tool":"query","inputs":{"query":"q","collection":"c"}}`), field: "limit", want: float64(10)},
		{name: "query's own limit stays", vai: true, file: vai(`{"id":"s","tool":"query","inputs":{"query":"q","collection":"c","limit":3}}`), field: "limit", want: float64(3)},
		{name: "query's templated limit stays", vai: true, file: `{"name":"w","inputs":{"k":{"type":"number"}},"steps":[{"id":"s","tool":"query","inputs":{"query":"q","collection":"c","limit":"{{ inputs.k }}"}}]}`, field: "limit", want: "{{ inputs.k }}"},
		{name: "query limit above the cap is clamped", vai: true, file: vai(`{"id":"s","tool":"query","inputs":{"query":"q","collection":"c","limit":80}}`), field: "limit", want: float64(50),
			warning: `steps[0].inputs.limit: limit 80 is above query's maximum in weft, 50: it is clamped to 50 (vai sets no maximum)`},
		{name: "http keeps vai's 5 MB", vai: true, file: vai(`{"id":"s","tool":"http","inputs":{"url":"https://example.com"}}`), field: "maxBytes", want: float64(5242880)},
		{name: "weft's http keeps 1 MiB", file: weft(`{"id":"s","tool":"http","inputs":{"url":"https://example.com"}}`), field: "maxBytes"},
		{name: "code_search without rerank reranks", vai: true, file: vai(`{"id":"s","tool":"code_search","inputs":{"query":"q"}}`), field: "rerank", want: true},
		{name: "code_search rerank false stays", vai: true, file: vai(`{"id":"s","tool":"code_search","inputs":{"query":"q","rerank":false}}`), field: "rerank", want: false},
		{name: "in a loop's nested step", vai: true, file: vai(`{"id":"s","tool":"loop","inputs":{"items":["a"],"as":"x","step":{"tool":"query","inputs":{"query":"{{ x }}","collection":"c"}}}}`), field: "step.limit", want: float64(10)},
		{name: "weft's query keeps weft's default", file: weft(`{"id":"s","tool":"query","inputs":{"query":"q","collection":"c"}}`), field: "limit"},
		{name: "weft's code_search keeps weft's default", file: weft(`{"id":"s","tool":"code_search","inputs":{"query":"q"}}`), field: "rerank"},
		{name: "weft's query limit above the cap is an error", file: weft(`{"id":"s","tool":"query","inputs":{"query":"q","collection":"c","limit":80}}`), err: "limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w *dsl.Workflow
			var err error
			if tc.vai {
				w, err = dsl.LoadVai("w.json", []byte(tc.file), "")
			} else {
				w, err = dsl.Load("w.json", []byte(tc.file))
			}
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			s, ok := w.Step("s")
			require.True(t, ok)
			inputs := s.Inputs
			field := tc.field
			if nested, ok := strings.CutPrefix(field, "step."); ok {
				inputs = inputs["step"].(map[string]any)["inputs"].(map[string]any)
				field = nested
			}
			got, set := inputs[field]
			if tc.want == nil {
				require.False(t, set, "%v", got)
			} else {
				require.Equal(t, tc.want, got)
			}
			var warnings []string
			for _, d := range w.Warnings {
				warnings = append(warnings, d.String())
			}
			if tc.warning != "" {
				require.Contains(t, strings.Join(warnings, "\n"), tc.warning)
			}
		})
	}
}

// TestCodeIndexVaiNames: vai's code_index names run: source (a directory or a repository, which
// the tool tells apart when it runs, so a template is fine), branch as ref, maxFileSize as
// maxFileBytes; in vai's dialect maxFileBytes defaults to vai's 100000 bytes.
func TestCodeIndexVaiNames(t *testing.T) {
	for _, tc := range []struct {
		name, inputs string
		vai          bool
		want         map[string]any
		err          string
	}{
		{name: "vai's code-review step", vai: true, inputs: `{"source":"{{ inputs.source }}","db":"d","collection":"c","refresh":true}`,
			want: map[string]any{"source": "{{ inputs.source }}", "db": "d", "collection": "c", "maxFileBytes": float64(100000)}},
		{name: "branch and maxFileSize", vai: true, inputs: `{"source":"https://github.com/o/r","branch":"dev","maxFileSize":5000,"collection":"c"}`,
			want: map[string]any{"source": "https://github.com/o/r", "ref": "dev", "maxFileBytes": float64(5000), "collection": "c"}},
		{name: "weft's file takes them too", inputs: `{"source":"/srv/x","maxFileSize":5000,"collection":"c"}`,
			want: map[string]any{"source": "/srv/x", "maxFileBytes": float64(5000), "collection": "c"}},
		{name: "source beside path", inputs: `{"source":"/srv/x","path":"/srv/x","collection":"c"}`, err: `code_index takes "path" or "repo", not both`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := `{"name":"w","inputs":{"source":{"type":"string"}},"steps":[{"id":"s","tool":"code_index","inputs":` + tc.inputs + `}]}`
			var w *dsl.Workflow
			var err error
			if tc.vai {
				w, err = dsl.LoadVai("w.json", []byte(file), "")
			} else {
				w, err = dsl.Load("w.json", []byte(`{"$schema":"https://weft.dev/schemas/workflow-v1.json",`+file[1:]))
			}
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			s, _ := w.Step("s")
			require.Equal(t, tc.want, s.Inputs)
		})
	}
}
