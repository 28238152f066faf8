package dsl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

// TestBudgetIsDeclaredAndChecked: a budget at the file's top level and on an agent or llm step is
// read into the Definition; a zero or negative limit, an empty budget, a budget on a step that
// calls no model and an unknown field are errors naming the field (issue 44, item 6).
func TestBudgetIsDeclaredAndChecked(t *testing.T) {
	file := func(top, step, tool string) string {
		s := `{"name": "b", `
		if top != "" {
			s += `"budget": ` + top + `, `
		}
		st := `{"id": "a", "tool": "` + tool + `", "inputs": {"prompt": "hi"}`
		if tool == "chunk" {
			st = `{"id": "a", "tool": "chunk", "inputs": {"text": "hi"}`
		}
		if step != "" {
			st += `, "budget": ` + step
		}
		return s + `"steps": [` + st + `}]}`
	}
	for _, tc := range []struct {
		name, top, step, tool, err string
	}{
		{name: "file and llm step", top: `{"maxTokens": 1000, "maxCostUsd": 0.5}`, step: `{"maxTokens": 200}`, tool: "llm"},
		{name: "agent step", step: `{"maxCostUsd": 0.01}`, tool: "agent"},
		{name: "zero tokens", top: `{"maxTokens": 0}`, tool: "llm", err: "budget.maxTokens: maxTokens must be more than 0 (it is 0)"},
		{name: "negative cost", step: `{"maxCostUsd": -1}`, tool: "agent", err: "steps[0].budget.maxCostUsd: maxCostUsd must be more than 0 (it is -1)"},
		{name: "no limit", top: `{}`, tool: "llm", err: "budget: budget sets no limit"},
		{name: "no model", step: `{"maxTokens": 5}`, tool: "chunk", err: "budget is for steps that call a model (agent, llm), not chunk"},
		{name: "unknown field", top: `{"maxTokenz": 5}`, tool: "llm", err: "maxTokenz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := dsl.Load("b.json", []byte(file(tc.top, tc.step, tc.tool)))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			if tc.top != "" {
				require.Equal(t, &dsl.Budget{MaxTokens: 1000, MaxCostUSD: 0.5}, w.Def.Budget)
				b, err := dsl.FromDefinition(w.Def)
				require.NoError(t, err)
				require.Equal(t, w.Def.Budget, b.Def.Budget, "the Go builder's definition keeps it")
			}
			if tc.step != "" {
				require.NotNil(t, w.Steps[0].Budget)
			}
		})
	}
}
