package english_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/internal/english"
)

func TestCount(t *testing.T) {
	for _, tt := range []struct {
		n    int
		noun string
		want string
	}{
		{0, "step", "0 steps"}, {1, "step", "1 step"}, {2, "step", "2 steps"},
		{1, "warning", "1 warning"}, {3, "warning", "3 warnings"},
		{2, "entry", "2 entries"}, {2, "day", "2 days"}, {2, "batch", "2 batches"}, {2, "alias", "2 aliases"},
		{2, "item", "2 items"}, {2, "character", "2 characters"}, {2, "child", "2 children"},
	} {
		require.Equal(t, tt.want, english.Count(tt.n, tt.noun))
	}
}

func TestA(t *testing.T) {
	for word, want := range map[string]string{
		"llm": "an llm", "http": "an http", "agent": "an agent", "embed": "an embed", "ingest": "an ingest",
		"review": "a review", "search": "a search", "code_index": "a code_index", "user": "a user",
		"inline": "an inline", "mcp:docs": "an mcp:docs", "object": "an object", "string": "a string",
		"activity": "an activity", "control": "a control", "child": "a child", "LLM": "an LLM",
	} {
		require.Equal(t, want, english.A(word), word)
	}
}
