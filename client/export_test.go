package client

import (
	"testing"

	"github.com/stretchr/testify/require"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/workflows"
)

func TestExportWorkflow(t *testing.T) {
	s := &workflows.ChatSession{DB: "kb", Collection: "docs", Turns: []workflows.ChatTurn{{
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

	_, err = ExportWorkflow(&workflows.ChatSession{}, false, "")
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
