package chunk_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/chunk"
)

const doc = `# Durable runs

weft checkpoints every step. A crashed worker is replaced and the run resumes.

## Reviews

A review step pauses the run. Someone approves, edits or rejects. The decision is recorded.

## Plans

Plans show which steps run in parallel, and what external calls a run makes.`

func TestStrategies(t *testing.T) {
	for _, s := range chunk.Strategies {
		t.Run(s, func(t *testing.T) {
			chunks, err := chunk.Split(doc, s, 100, 20)
			require.NoError(t, err)
			require.NotEmpty(t, chunks)
			for _, c := range chunks {
				require.LessOrEqual(t, utf8.RuneCountInString(c), 100, "%q", c)
				require.Equal(t, strings.TrimSpace(c), c)
			}
			all := strings.Join(chunks, " ")
			for _, w := range []string{"checkpoints", "approves", "parallel"} {
				require.Contains(t, all, w, "no text is lost")
			}
		})
	}
}

func TestMarkdownKeepsSections(t *testing.T) {
	chunks, err := chunk.Split(doc, "markdown", 200, 0)
	require.NoError(t, err)
	require.Equal(t, []string{
		"# Durable runs\n\nweft checkpoints every step. A crashed worker is replaced and the run resumes.",
		"## Reviews\n\nA review step pauses the run. Someone approves, edits or rejects. The decision is recorded.",
		"## Plans\n\nPlans show which steps run in parallel, and what external calls a run makes.",
	}, chunks)
}

func TestFixedOverlap(t *testing.T) {
	chunks, err := chunk.Split("abcdefghij", "fixed", 4, 1)
	require.NoError(t, err)
	require.Equal(t, []string{"abcd", "defg", "ghij"}, chunks)
}

func TestBadArguments(t *testing.T) {
	_, err := chunk.Split("x", "semantic", 100, 0)
	require.ErrorContains(t, err, `unknown chunk strategy "semantic"`)
	_, err = chunk.Split("x", "fixed", 10, 10)
	require.ErrorContains(t, err, "smaller than the chunk size")
}
