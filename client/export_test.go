package client

import (
	"testing"

	"github.com/stretchr/testify/require"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
)

func TestExportWorkflow(t *testing.T) {
	s := &runwire.ChatSession{DB: "kb", Collection: "docs", Turns: []runwire.ChatTurn{{
		N: 1, Question: "how do retries work?",
		ToolCalls: []any{
			map[string]any{"tool": "search", "status": "completed", "arguments": map[string]any{"query": "how do retries work?"},
				"result": `{"results":[{"source":"retries.md","content":"Backoff doubles."}]}`},
			map[string]any{"tool": "ingest", "status": "rejected", "arguments": map[string]any{"text": "x"}},
			map[string]any{"tool": "workflow:summarize", "status": "completed", "arguments": map[string]any{"text": "Backoff doubles.", "note": "{{ not a template }}"}},
		},
	}}}
	def, err := ExportWorkflow(s, false, "retries")
	require.NoError(t, err)
	require.Equal(t, "how do retries work?", def.Inputs["question"].Default)
	require.Equal(t, map[string]any{"db": "kb", "collection": "docs"}, def.Defaults)
	require.Len(t, def.Steps, 2, "the refused call is left out")
	require.Contains(t, def.Description, "left out: ingest (rejected)")
	require.Equal(t, "{{ inputs.question }}", def.Steps[0].Inputs["query"])
	require.Equal(t, "workflow", def.Steps[1].Tool)
	inner := def.Steps[1].Inputs["inputs"].(map[string]any)
	require.Equal(t, "{{ search_1.output.results[0].content }}", inner["text"])
	require.Equal(t, "{{ '{{' }} not a template {{ '}}' }}", inner["note"], "braces in data stay literal")

	_, err = ExportWorkflow(&runwire.ChatSession{}, false, "")
	require.ErrorContains(t, err, "nothing to export yet")
}

func TestPickGate(t *testing.T) {
	pending := []*weftv1.ReviewRequest{{Id: "a[0]", Step: "a"}, {Id: "a[1]", Step: "a"}, {Id: "agent/c1", Step: "agent"}}
	g, err := pick("r", pending, Decision{ID: "a[1]"})
	require.NoError(t, err)
	require.Equal(t, "a[1]", g.Id)
	g, err = pick("r", pending, Decision{Step: "agent"})
	require.NoError(t, err)
	require.Equal(t, "agent/c1", g.Id)
	_, err = pick("r", pending, Decision{Step: "a"})
	require.ErrorContains(t, err, `step "a" has 2 pending reviews (a[0], a[1]): name one with --id, or decide them all with --all`)
	_, err = pick("r", pending, Decision{})
	require.ErrorContains(t, err, "has 3 pending reviews")
	_, err = pick("r", nil, Decision{})
	require.ErrorContains(t, err, "has no pending review")
}

// TestExportWorkflowGatesAndLiterals: an ingest a person approved in the chat keeps its gate in
// the file (a review step whose data the call gets), and a db literal an earlier search's result
// happens to repeat stays a literal instead of a dependency on that search.
func TestExportWorkflowGatesAndLiterals(t *testing.T) {
	q := "what changed in retries?"
	for _, tc := range []struct {
		name    string
		approve []string
		call    map[string]any
	}{
		{name: "decision recorded", call: map[string]any{"decision": "approve", "reviewer": "ana"}},
		{name: "session approves the tool", approve: []string{"ingest"}, call: map[string]any{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ingest := map[string]any{"tool": "ingest", "status": "completed",
				"arguments": map[string]any{"text": "Retries now back off to 30s.", "source": "notes.md", "db": "kb"}}
			for k, v := range tc.call {
				ingest[k] = v
			}
			s := &runwire.ChatSession{DB: "kb", Approve: tc.approve, Turns: []runwire.ChatTurn{{N: 1, Question: q, ToolCalls: []any{
				map[string]any{"tool": "search", "status": "completed", "arguments": map[string]any{"query": q, "db": "kb"},
					"result": `{"db":"kb","results":[{"source":"retries.md","content":"Backoff doubles."}]}`},
				ingest,
			}}}}
			def, err := ExportWorkflow(s, false, "")
			require.NoError(t, err)
			require.Len(t, def.Steps, 3)
			require.Equal(t, "kb", def.Steps[0].Inputs["db"], "the search's own db stays literal")
			gate, call := def.Steps[1], def.Steps[2]
			require.Equal(t, "review", gate.Tool)
			require.Equal(t, map[string]any{"text": "Retries now back off to 30s.", "source": "notes.md", "db": "kb"}, gate.Inputs["data"],
				"the db literal is not rewritten as a reference to the search")
			require.Equal(t, "ingest", call.Tool)
			require.Equal(t, "{{ approve_ingest_1.output.data.db }}", call.Inputs["db"])
			require.NotContains(t, def.Output, gate.ID)
			wf, err := dsl.FromDefinition(def)
			require.NoError(t, err)
			cs, ok := wf.Step(call.ID)
			require.True(t, ok)
			require.Equal(t, []string{gate.ID}, cs.Deps, "the ingest waits for its gate, not for the search")
			cs, _ = wf.Step(gate.ID)
			require.Empty(t, cs.Deps)
		})
	}
}
