package chunk_test

import (
	"strconv"
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

// TestOverlapOnce: a chunk carries the overlap of the one before it once. Every word of the text
// is unique and numbered, so a chunk holding a word twice repeated an overlap (the recursive and
// markdown strategies did, when a section or paragraph too long for one chunk was split again:
// the inner split's overlap, then the outer packing's), and every word is in some chunk.
func TestOverlapOnce(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Title\n\n")
	for i := range 400 {
		b.WriteString("w" + strings.Repeat("x", i%7) + "-" + strconv.Itoa(i))
		switch {
		case i%53 == 52:
			b.WriteString("\n\n")
		case i%9 == 8:
			b.WriteString("\n")
		case i%5 == 4:
			b.WriteString(". ")
		default:
			b.WriteString(" ")
		}
	}
	text := b.String()
	for _, s := range []string{"recursive", "markdown"} { // the strategies that split between words
		for _, size := range []int{60, 200, 512} {
			for _, overlap := range []int{0, 20, 50} {
				chunks, err := chunk.Split(text, s, size, overlap)
				require.NoError(t, err)
				seen := map[string]bool{}
				for i, c := range chunks {
					inChunk := map[string]bool{}
					for _, w := range strings.Fields(strings.NewReplacer(".", " ").Replace(c)) {
						if !strings.HasPrefix(w, "w") {
							continue
						}
						require.False(t, inChunk[w], "%s %d/%d: chunk %d holds %q twice: %q", s, size, overlap, i, w, c)
						inChunk[w] = true
						seen[w] = true
					}
				}
				require.Len(t, seen, 400, "%s %d/%d: every word is in a chunk", s, size, overlap)
			}
		}
	}
}
