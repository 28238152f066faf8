package console_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/console"
)

// TestWireChoosesTheFieldThatCarriesTheContent: for the pairs of tools people link most, the best
// way to write the edge is the output that carries the content into the input that takes it (not
// llm's finishReason, http's statusText or review's comment), and only one way ranks best.
func TestWireChoosesTheFieldThatCarriesTheContent(t *testing.T) {
	for _, c := range []struct {
		from, to      string
		input, output string // the best candidate
		append, each  bool
	}{
		{"llm", "template", "text", "text", false, false},
		{"llm", "review", "data", "text", false, false},
		{"llm", "ingest", "text", "text", false, false},
		{"http", "chunk", "text", "text", false, false},
		{"http", "ingest", "text", "text", false, false},
		{"review", "ingest", "text", "data", false, false},
		{"agent", "review", "data", "text", false, false},
		{"agent", "template", "text", "text", false, false},
		{"search", "generate", "context", "results", false, false},
		{"search", "rerank", "documents", "results", false, false},
		{"search", "filter", "array", "results", false, false},
		{"search", "merge", "arrays", "results", true, false},
		{"search", "loop", "items", "results", false, false},
		{"query", "generate", "context", "results", false, false},
		{"rerank", "generate", "context", "results", false, false},
		{"recall", "generate", "context", "results", false, false},
		{"filter", "rerank", "documents", "results", false, false},
		{"generate", "template", "text", "text", false, false},
		{"template", "llm", "prompt", "text", false, false},
		{"template", "generate", "prompt", "text", false, false},
		{"template", "ingest", "text", "text", false, false},
		{"template", "template", "text", "text", false, false},
		{"chunk", "embed", "text", "chunks", false, true},
		{"workflow", "template", "text", "", false, false},
	} {
		t.Run(c.from+">"+c.to, func(t *testing.T) {
			cs := console.Wire(c.from, c.to)
			require.NotEmpty(t, cs)
			best := cs[0]
			require.Equal(t, c.input, best.Input, "the input %s's output goes into: %+v", c.from, cs)
			require.Equal(t, c.output, best.Output, "the field of %s's output: %+v", c.from, cs)
			require.Equal(t, c.append, best.Append)
			require.Equal(t, c.each, best.Each)
			if len(cs) > 1 {
				require.Greater(t, cs[1].Rank, best.Rank, "one way ranks best, so the builder need not ask: %+v", cs)
			}
		})
	}
}

// TestWireSaysWhenSeveralFit: where two inputs take the output equally well the best rank is
// shared (the builder asks); a same-named required input is filled too (rerank's query from the
// search's); and where nothing fits there is no candidate (the builder makes the step wait).
func TestWireSaysWhenSeveralFit(t *testing.T) {
	best := func(cs []console.Candidate) []string {
		var out []string
		for _, c := range cs {
			if c.Rank == cs[0].Rank {
				out = append(out, c.Input+"<"+c.Output)
			}
		}
		return out
	}
	require.Equal(t, []string{"text1<text", "text2<text"}, best(console.Wire("llm", "similarity")))
	require.Equal(t, []string{"prompt<data", "context<data"}, best(console.Wire("review", "llm")))

	var also []string
	for _, c := range console.Wire("search", "rerank") {
		if c.Also {
			also = append(also, c.Input+"<"+c.Output)
		}
	}
	require.Equal(t, []string{"query<query"}, also)

	require.Empty(t, console.Wire("search", "template"), "an array into a text: nothing fits")
	require.Empty(t, console.Wire("llm", "conditional"), "then, else and the per-item condition are never wired")
	require.Empty(t, console.Wire("nosuchtool", "template"))
	require.Contains(t, console.Wiring(), "llm>template")
	require.Contains(t, console.Wiring(), "template>template", "two steps of one tool")
}
