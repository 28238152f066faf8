package toolspec

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTextTokens: a text counts ~3 bytes a token; a stored value's reference counts by the size
// it stands for, so many large documents never share one call because their references are short.
func TestTextTokens(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   any
		want int
	}{
		{"text", strings.Repeat("x", 300), 101},
		{"empty", "", 1},
		{"reference, size from JSON", map[string]any{BlobKey: "abc", "size": float64(3_000_000), "preview": "..."}, 1_000_001},
		{"reference, size as int", map[string]any{BlobKey: "abc", "size": 600}, 201},
		{"reference without size", map[string]any{BlobKey: "abc"}, 1},
		{"another value", 42.0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) { require.Equal(t, tc.want, TextTokens(tc.in)) })
	}
}
