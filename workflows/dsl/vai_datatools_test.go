package dsl_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

// TestVaiDataToolSemantics: a merge or transform step of a file in vai's dialect carries
// dsl.VaiSemantics (the data tool then computes what vai computes), with a warning where weft's
// own dialect would answer otherwise; the same step in a weft file carries nothing and warns of
// nothing.
func TestVaiDataToolSemantics(t *testing.T) {
	tests := []struct {
		name, tool, inputs string
		warning            string // at steps[0].inputs, in vai's dialect; "" for none
	}{
		{"merge dedup alone", "merge", `{"arrays": [[1]], "dedup": true}`,
			"steps[0].inputs.dedup: vai's merge drops duplicates only when dedup_field is set too: this merge keeps every item (in weft's dialect, dedup alone drops duplicate items)"},
		{"merge dedup_field alone", "merge", `{"arrays": [[1]], "dedup_field": "source"}`,
			"steps[0].inputs.dedup_field: vai's merge drops duplicates only when dedup is true too: this merge keeps every item (in weft's dialect, dedup_field alone drops duplicates)"},
		{"merge dedup false, dedup_field", "merge", `{"arrays": [[1]], "dedup": false, "dedup_field": "source"}`,
			"steps[0].inputs.dedup_field: vai's merge drops duplicates only when dedup is true too: this merge keeps every item (in weft's dialect, dedup_field alone drops duplicates)"},
		{"merge both", "merge", `{"arrays": [[1]], "dedup": true, "dedup_field": "source"}`, ""},
		{"merge dedup from an input", "merge", `{"arrays": [[1]], "dedup": "{{ inputs.d }}", "dedup_field": "source"}`, ""},
		{"transform fields and mapping", "transform", `{"array": [1], "fields": ["a"], "mapping": {"b": "c"}}`,
			"steps[0].inputs.mapping: vai's transform uses fields and ignores mapping when both are given: mapping is ignored (in weft's dialect, both apply)"},
		{"transform mapping", "transform", `{"array": [1], "mapping": {"b": "c"}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := fmt.Sprintf(`{"name": "t", "inputs": {"d": {"type": "boolean"}}, "steps": [{"id": "s", "tool": %q, "inputs": %s}]}`, tt.tool, tt.inputs)
			vai, err := dsl.LoadVai("t.json", []byte(file), "")
			require.NoError(t, err)
			cs, _ := vai.Step("s")
			require.Equal(t, true, cs.Lazy[dsl.VaiSemantics])
			var got []string
			for _, d := range vai.Warnings {
				got = append(got, d.Where+": "+d.Message)
			}
			if tt.warning == "" {
				require.Empty(t, got)
			} else {
				require.Equal(t, []string{tt.warning}, got)
			}

			weft, err := dsl.Load("t.weft.json", []byte(file))
			require.NoError(t, err)
			require.Equal(t, dsl.DialectWeft, weft.Dialect)
			cs, _ = weft.Step("s")
			require.NotContains(t, cs.Lazy, dsl.VaiSemantics)
			require.Empty(t, weft.Warnings)
		})
	}
}

// TestVaiChunkReads: in a file in vai's dialect, each read of a field vai's chunk output has and
// weft's does not (a chunk's content, charCount..., totalChunks), directly or per item of the
// chunks (filter, transform, loop, forEach), is a warning: it is null in weft. vai's own
// examples/workflows/dedup-and-ingest.json, abridged, reads three. Reading the chunks themselves
// warns of nothing; in a weft file a read of split.output.totalChunks is an error (typed
// references), the per-item reads are not warned.
func TestVaiChunkReads(t *testing.T) {
	const msg = " is null in weft: vai's chunk gives objects {index, content, charCount, source, metadata} and totalChunks, weft's gives the chunks as strings and count"
	tests := []struct {
		name, steps, output string
		want                []string
	}{
		{"vai's dedup-and-ingest",
			`{"id": "filter_short", "tool": "filter", "inputs": {"array": "{{ split.output.chunks }}", "condition": "item.charCount > 100"}},
			 {"id": "check_each", "tool": "loop", "inputs": {"items": "{{ filter_short.output.results }}", "as": "chunk", "step": {"tool": "search", "inputs": {"query": "{{ chunk.content }}", "limit": 1}}}}`,
			`{"totalChunks": "{{ split.output.totalChunks }}"}`,
			[]string{"steps[1].inputs.condition: item.charCount" + msg, "steps[2].inputs.step.inputs.query: chunk.content" + msg, "output.totalChunks: split.output.totalChunks" + msg}},
		{"a loop over the chunks",
			`{"id": "each", "tool": "loop", "inputs": {"items": "{{ split.output.chunks }}", "as": "chunk", "step": {"tool": "embed", "inputs": {"text": "{{ chunk.content }}"}}}}`,
			`{"first": "{{ split.output.chunks[0].content }}"}`,
			[]string{"steps[1].inputs.step.inputs.text: chunk.content" + msg, "output.first: split.output.chunks.0.content" + msg}},
		{"forEach and transform over the chunks",
			`{"id": "each", "tool": "embed", "forEach": "{{ split.output.chunks }}", "inputs": {"text": "{{ item.content }}"}},
			 {"id": "t", "tool": "transform", "inputs": {"array": "{{ split.output.chunks }}", "template": "{{ item.index }}"}}`,
			`{}`,
			[]string{"steps[1].inputs.text: item.content" + msg, "steps[2].inputs.template: item.index" + msg}},
		{"the chunks themselves",
			`{"id": "each", "tool": "embed", "forEach": "{{ split.output.chunks }}", "inputs": {"text": "{{ item }}"}}`,
			`{"first": "{{ split.output.chunks[0] }}", "n": "{{ split.output.count }}"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := fmt.Sprintf(`{"name": "t", "inputs": {"text": {"type": "string"}}, "steps": [{"id": "split", "tool": "chunk", "inputs": {"text": "{{ inputs.text }}"}}, %s], "output": %s}`, tt.steps, tt.output)
			vai, err := dsl.LoadVai("t.json", []byte(file), "")
			require.NoError(t, err)
			var got []string
			for _, d := range vai.Warnings {
				if strings.Contains(d.Message, " is null in weft") {
					got = append(got, d.Where+": "+d.Message)
				}
			}
			require.Equal(t, tt.want, got)

			// in weft's dialect a read of a field weft's chunk output does not have is an error
			// (typed references); the per-item reads are not typed
			weft, err := dsl.Load("t.weft.json", []byte(file))
			if strings.Contains(tt.output, "totalChunks") || strings.Contains(tt.output, "content") {
				require.ErrorContains(t, err, `has no field`)
				return
			}
			require.NoError(t, err)
			for _, d := range weft.Warnings {
				require.NotContains(t, d.Message, " is null in weft")
			}
		})
	}
}
