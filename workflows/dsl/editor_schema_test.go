package dsl_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

func editorSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(dsl.SchemaJSON()))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("weft.schema.json", doc))
	sch, err := c.Compile("weft.schema.json")
	require.NoError(t, err)
	return sch
}

func editorCheck(t *testing.T, sch *jsonschema.Schema, data []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	require.NoError(t, err)
	return sch.Validate(v)
}

// TestSchemaJSONChecksToolInputs: weft schema, what an editor checks a file with, carries each
// tool's input schema for the steps naming it, so it refuses what weft validate refuses of a
// step's inputs (an unknown field, a value of the wrong type, a misspelled step field) and takes
// what validate takes: a {{ }} template in place of any value, vai's name for an input, and every
// weft file of the examples and built-in templates.
func TestSchemaJSONChecksToolInputs(t *testing.T) {
	sch := editorSchema(t)
	search := func(inputs string) []byte {
		return []byte(`{"name":"w","inputs":{"n":{"type":"number"},"q":{"type":"string"}},"steps":[{"id":"s","tool":"search","inputs":` + inputs + `}]}`)
	}
	for _, tt := range []struct {
		name  string
		file  []byte
		valid bool
	}{
		{"an unknown input", search(`{"query":"q","collection":"c","limt":5}`), false},
		{"a value of the wrong type", search(`{"query":"q","collection":"c","limit":"five"}`), false},
		{"a value out of range", search(`{"query":"q","collection":"c","limit":0}`), false},
		{"a missing required input", search(`{"collection":"c"}`), false},
		{"a misspelled step field", []byte(`{"name":"w","steps":[{"id":"s","tool":"template","inputs":{"text":"x"},"conditon":"true"}]}`), false},
		{"declared inputs", search(`{"query":"q","collection":"c","limit":5}`), true},
		{"a template for a number", search(`{"query":"{{ inputs.q }}","collection":"c","limit":"{{ inputs.n }}"}`), true},
		{"vai's name for an input", []byte(`{"name":"w","steps":[{"id":"c","tool":"chunk","inputs":{"text":"abc","chunk_size":100}}]}`), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, loadErr := dsl.Load("w.weft.json", tt.file)
			err := editorCheck(t, sch, tt.file)
			if tt.valid {
				require.NoError(t, loadErr)
				require.NoError(t, err)
				return
			}
			require.Error(t, loadErr, "validate refuses it")
			require.Error(t, err, "and so does the editor's schema")
		})
	}

	files, err := filepath.Glob(filepath.Join(repo, "testdata/examples/*.json"))
	require.NoError(t, err)
	tmpl, err := filepath.Glob(filepath.Join(repo, "templates/workflows/*.json"))
	require.NoError(t, err)
	for _, f := range append(files, tmpl...) {
		if strings.HasSuffix(f, ".test.json") {
			continue
		}
		w, err := dsl.LoadFile(f)
		require.NoError(t, err)
		if w.Dialect != dsl.DialectWeft || dsl.IsFlow(w.Source.Root) || strings.Contains(w.Source.File, "converted") {
			continue // the editor's schema is weft's step format
		}
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, editorCheck(t, sch, data), f)
	}
}
