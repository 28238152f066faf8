package workflows_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/toolspec"
)

// TestAutoContextIsText: "context": "auto" hands the next model the text of an llm answer and a
// tool's output without usage/model/finishReason, not whole JSON outputs.
func TestAutoContextIsText(t *testing.T) {
	const def = `{"name":"chain","steps":[
	  {"id":"draft","tool":"llm","inputs":{"prompt":"Draft it"}},
	  {"id":"facts","tool":"search","inputs":{"query":"facts","collection":"docs"}},
	  {"id":"final","tool":"llm","dependsOn":["draft","facts"],"inputs":{"prompt":"Polish it","context":"auto"}}
	],"output":"{{ final.output.text }}"}`
	h := newHarness(t)
	var mu sync.Mutex
	var contexts []any
	h.tools.scripts["llm"] = func(in map[string]any) (any, *toolspec.Usage, error) {
		mu.Lock()
		defer mu.Unlock()
		contexts = append(contexts, in["context"])
		return map[string]any{"text": "THE DRAFT", "json": nil, "toolCalls": []any{}, "finishReason": "stop", "model": "gpt-x",
			"usage": map[string]any{"promptTokens": 5, "completionTokens": 2, "totalTokens": 7, "costUsd": 0.0001}}, &toolspec.Usage{TotalTokens: 7}, nil
	}
	h.tools.scripts["search"] = func(map[string]any) (any, *toolspec.Usage, error) {
		return map[string]any{"results": []any{map[string]any{"text": "fact one", "score": 0.9}}, "model": "embed-x",
			"usage": map[string]any{"totalTokens": 3}}, nil, nil
	}
	_, err := h.run(t, def, nil)
	require.NoError(t, err)
	require.Len(t, contexts, 2)
	got, _ := contexts[1].(string)
	require.Contains(t, got, "THE DRAFT")
	require.Contains(t, got, `{"results":[{"score":0.9,"text":"fact one"}]}`)
	for _, noise := range []string{"finishReason", "usage", "costUsd", "gpt-x", "embed-x", "promptTokens"} {
		require.NotContains(t, got, noise)
	}
}

// TestAutoContextIsFreshEachRun: two runs of one file in one worker (the compile cache shares
// its definition) each hand their model their own earlier answers. Before, a step's inputs
// without templates were the cached definition's map, and the first run's rendered context
// replaced its "auto" for every later run.
func TestAutoContextIsFreshEachRun(t *testing.T) {
	const def = `{"name":"fresh","steps":[
	  {"id":"draft","tool":"llm","inputs":{"prompt":"draft"}},
	  {"id":"final","tool":"llm","dependsOn":["draft"],"inputs":{"prompt":"final","context":"auto"}}
	],"output":"{{ final.output.text }}"}`
	for _, answer := range []string{"FIRST RUN", "SECOND RUN"} {
		h := newHarness(t)
		var got any
		h.tools.scripts["llm"] = func(in map[string]any) (any, *toolspec.Usage, error) {
			if in["prompt"] == "final" {
				got = in["context"]
			}
			return map[string]any{"text": answer, "toolCalls": []any{}}, nil, nil
		}
		_, err := h.run(t, def, nil)
		require.NoError(t, err)
		require.Equal(t, "## draft\n"+answer, got)
	}
}
