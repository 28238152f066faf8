package starter_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

// flowFile is a Flow file (nodes and edges) of two nodes, the second depending on the first,
// with an edge condition and an instruction as given.
func flowFile(condition, instruction string) string {
	f := map[string]any{
		"id": "triage", "name": "triage", "version": 1,
		"nodes": []any{
			map[string]any{"id": "classify", "type": "prompt-template", "data": map[string]any{"label": "Classify", "instruction": "Classify the ticket", "outputName": "verdict"}},
			map[string]any{"id": "answer", "type": "prompt-template", "data": map[string]any{"label": "Answer", "instruction": instruction}},
		},
		"edges": []any{map[string]any{"id": "e1", "source": "classify", "target": "answer", "data": map[string]any{"condition": condition}}},
	}
	b, _ := json.Marshal(f)
	return string(b)
}

// TestConvertAcceptsWhatRunAccepts: a Flow file whose condition or instruction has a numeric path
// segment (x.0, as vai writes it) is valid for weft validate and run, which read it as vai's;
// weft convert accepts it too and writes the segment as an index (x[0]), which the file it prints
// reads as weft's own, and says so on stderr. The reads of the node's JSON (items, urgent), which
// generate's output does not have, are warnings for the Flow file (null when run), printed by
// convert, and errors in the printed file (typed references).
func TestConvertAcceptsWhatRunAccepts(t *testing.T) {
	cases := []struct {
		name, condition, instruction string
		want                         func(t *testing.T, def dsl.Definition)
	}{
		{"condition", "verdict.items.0.score > 0.5", "Answer the ticket",
			func(t *testing.T, def dsl.Definition) {
				require.Equal(t, "(classify.output.items[0].score > 0.5)", def.Steps[1].Condition)
			}},
		{"instruction", "verdict.urgent == true", "Answer using {{ classify.output.items.0 }} and {{verdict}}",
			func(t *testing.T, def dsl.Definition) {
				require.Equal(t, "Answer using {{ classify.output.items[0] }} and {{ classify.output.text }}", def.Steps[1].Inputs["prompt"])
			}},
		{"an output name's numeric segment", "verdict.0 == 'refund'", "Answer from {{verdict.items.0.text}} and {{ verdict.1 }}",
			func(t *testing.T, def dsl.Definition) {
				require.Equal(t, "(classify.output[0] == 'refund')", def.Steps[1].Condition)
				require.Equal(t, "Answer from {{ classify.output.items[0].text }} and {{ classify.output[1] }}", def.Steps[1].Inputs["prompt"])
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "triage.json")
			require.NoError(t, os.WriteFile(file, []byte(flowFile(c.condition, c.instruction)), 0o644))

			code, out, errOut := weft(t, "", "validate", file)
			require.Equal(t, 0, code, "run's reading accepts it: %s %s", out, errOut)

			code, out, errOut = weft(t, "", "convert", file)
			require.Equal(t, 0, code, "convert accepts what run accepts: %s", errOut)
			require.Contains(t, errOut, "[0]", "convert says it rewrote the segment")
			var def dsl.Definition
			require.NoError(t, json.Unmarshal([]byte(out), &def))
			require.Len(t, def.Steps, 2)
			c.want(t, def)

			// the steps read fields of the node's JSON that generate's output (text, model,
			// usage) does not have: null when the Flow file runs, which convert says, and an error
			// in the printed file, weft's own, for that and not for the spelling of the index
			require.Contains(t, errOut, `warning: `)
			require.Contains(t, errOut, `classify's output (generate) has no field`)
			converted := filepath.Join(dir, "triage.steps.json")
			require.NoError(t, os.WriteFile(converted, []byte(out), 0o644))
			code, vout, verr := weft(t, "", "validate", converted)
			require.NotEqual(t, 0, code, "the converted file is weft's own: %s %s", vout, verr)
			require.Contains(t, vout+verr, `classify's output (generate) has no field`)
			require.NotContains(t, vout+verr, "write an index in brackets", "the index is written as weft's")
			require.NotContains(t, vout+verr, "vai's dialect", "and read as weft's own")
		})
	}
}
