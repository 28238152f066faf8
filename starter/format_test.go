package starter

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
)

func TestRenderOutputWithFormatters(t *testing.T) {
	out, err := structpb.NewValue(map[string]any{"results": []any{
		map[string]any{"source": "a.md", "score": 0.91234},
		map[string]any{"source": "b.md", "score": 0.5},
	}, "text": "## Findings\nall good"})
	require.NoError(t, err)
	tests := []struct {
		name       string
		formatters map[string]any
		want       []string
	}{
		{"table of the array field", map[string]any{"default": "table", "arrayField": "results", "title": "Hits"}, []string{"Hits", "#  SCORE   SOURCE", "1  0.9123  a.md", "2  0.5     b.md"}},
		{"table with chosen columns", map[string]any{"default": "table", "fields": []any{"source"}}, []string{"#  SOURCE", "1  a.md"}},
		{"markdown prints the text", map[string]any{"default": "markdown"}, []string{"## Findings\nall good\n"}},
		{"json by default", nil, []string{`"source": "a.md"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, renderOutput(&b, tt.formatters, out))
			for _, w := range tt.want {
				require.Contains(t, b.String(), w)
			}
		})
	}
}

func TestJSONNumbers(t *testing.T) {
	var b bytes.Buffer
	st := &weftv1.StepState{Id: "s", DurationMs: 19, Usage: &weftv1.TokenUsage{TotalTokens: 1234, Calls: 2}, Summary: `"durationMs":"7"`}
	require.NoError(t, writeProto(&b, st))
	require.Contains(t, b.String(), `"durationMs": 19`)
	require.Contains(t, b.String(), `"totalTokens": 1234`)
	require.Contains(t, b.String(), `"summary": "\"durationMs\":\"7\""`, "text that looks like a field stays text")
}
