package dsl_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

// TestVaiToolFields: each input field vai's workflow tools read (src/lib/workflow.js and, for the
// code tools, src/mcp/tools/code-search.js in mrlynn/voyageai-cli) that weft's tool of the same
// name does not take is, in a file with no other vai trait, enough to read it in vai's dialect;
// the field is a warning that says what vai does with it and what to write instead, and it never
// reaches the tool. In a file marked as weft's it stays an error.
func TestVaiToolFields(t *testing.T) {
	tests := []struct {
		tool, inputs, field, value string
		hint                       string
	}{
		{"http", `"url":"https://example.com"`, "followRedirects", `true`,
			"remove it: weft's http follows up to 5 redirects whatever it says (vai follows none unless it is true)"},
		{"rerank", `"query":"q","documents":["d"]`, "topK", `3`,
			"vai's rerank does not read it either and returns every document: remove it, or write limit to keep only the best"},
		{"chunk", `"text":"t"`, "source", `"doc.md"`,
			"weft's chunks are strings and carry no source (vai's are objects with it): give the source where the chunks are stored, as ingest's source"},
		{"aggregate", `"collection":"c","pipeline":[]`, "allowWrites", `true`,
			"remove it: weft's aggregate is read-only and refuses $out and $merge whatever it says"},
		{"code_index", `"path":"/src","collection":"c"`, "refresh", `true`,
			"remove it: weft re-embeds only the files changed since the last index, always"},
		{"code_index", `"path":"/src","collection":"c"`, "chunkOverlap", `50`,
			"remove it: weft splits code at function and class boundaries, without overlap (chunkSize bounds a chunk)"},
		{"code_index", `"path":"/src","collection":"c"`, "batchSize", `20`, "remove it: weft sizes the embedding batches itself"},
		{"code_search", `"query":"q","collection":"c"`, "category", `"code"`,
			`to keep chunks of one kind, write filter: {"kind": ...} (function, class, ...)`},
		{"code_query", `"query":"q","collection":"c"`, "category", `"code"`,
			`to keep chunks of one kind, write filter: {"kind": ...} (function, class, ...)`},
		{"code_query", `"query":"q","collection":"c"`, "rerank", `false`, "remove it: code_query always reranks, in vai too"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+"."+tt.field, func(t *testing.T) {
			file := `{"name":"w","steps":[{"id":"s","tool":"` + tt.tool + `","inputs":{` + tt.inputs + `,"` + tt.field + `":` + tt.value + `}}]}`
			w, err := dsl.Load("w.json", []byte(file))
			require.NoError(t, err)
			require.Equal(t, dsl.DialectVai, w.Dialect)
			require.Equal(t, "steps[0].inputs."+tt.field+" is a field of vai's "+tt.tool+" tool", w.DialectReason)
			want := "steps[0].inputs." + tt.field + `: unknown field "` + tt.field + `": ` + tt.tool + " does not take it, so it is ignored (" + tt.hint + ")"
			require.Contains(t, w.Warnings.Error(), want)
			s, _ := w.Step("s")
			require.NotContains(t, s.Inputs, tt.field, "an ignored field never reaches the tool")

			// marked as weft's, the same field is an error
			_, err = dsl.Load("w.weft.json", []byte(file))
			require.ErrorContains(t, err, `steps[0].inputs.`+tt.field+`: unknown field "`+tt.field+`"`)
		})
	}
}

// TestVaiToolFieldBesideTypo: a file read as vai's only for a field of vai's tool still refuses a
// field neither tool takes, and the vai field's warning does not claim vai ignores it; in a file
// with a vai $schema the typo is a warning that does.
func TestVaiToolFieldBesideTypo(t *testing.T) {
	file := `{"name":"w","steps":[{"id":"c","tool":"chunk","inputs":{"text":"t","source":"a.md","overlab":10}}]}`
	_, err := dsl.Load("w.json", []byte(file))
	require.ErrorContains(t, err, `steps[0].inputs.overlab: unknown field "overlab" (did you mean "overlap"?)`)

	w, err := dsl.Load("w.json", []byte(strings.Replace(file, `{"name"`, `{"$schema":"https://vai.example/workflow.json","name"`, 1)))
	require.NoError(t, err)
	all := w.Warnings.Error()
	require.Contains(t, all, `unknown field "overlab": chunk does not take it, so it is ignored (as vai ignores it) (did you mean "overlap"?)`)
	require.Contains(t, all, `unknown field "source": chunk does not take it, so it is ignored (weft's chunks are strings`)
}
