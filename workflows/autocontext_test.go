package workflows_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows"
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
	h.env.OnGetVersion(workflows.ChangeAutoContextTurns, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion) // the text of each output, as one block
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

// TestAutoContextCarriesTheChain: "context": "auto" on a step that depends on one step hands the
// model the whole chain before it (the steps that one depends on, and theirs), first step first;
// a run recorded before ChangeAutoContextChain still gets its direct dependencies only. Past
// autoContextTotal the steps furthest back are left out, and named. (Runs recorded before
// ChangeAutoContextTurns; TestAutoContextPassesTheChainAsTurns holds what runs get now.)
func TestAutoContextCarriesTheChain(t *testing.T) {
	const chain = `{"name":"chain","steps":[
	  {"id":"outline","tool":"llm","inputs":{"prompt":"outline"}},
	  {"id":"side","tool":"llm","inputs":{"prompt":"side"}},
	  {"id":"draft","tool":"llm","dependsOn":["outline"],"inputs":{"prompt":"draft","context":"auto"}},
	  {"id":"final","tool":"llm","dependsOn":["draft"],"inputs":{"prompt":"final","context":"auto"}}
	],"output":"{{ final.output.text }}"}`
	long := `{"name":"long","steps":[
	  {"id":"s1","tool":"llm","inputs":{"prompt":"s1"}},
	  {"id":"s2","tool":"llm","dependsOn":["s1"],"inputs":{"prompt":"s2"}},
	  {"id":"s3","tool":"llm","dependsOn":["s2"],"inputs":{"prompt":"s3"}},
	  {"id":"s4","tool":"llm","dependsOn":["s3"],"inputs":{"prompt":"s4"}},
	  {"id":"s5","tool":"llm","dependsOn":["s4"],"inputs":{"prompt":"s5"}},
	  {"id":"final","tool":"llm","dependsOn":["s5"],"inputs":{"prompt":"final","context":"auto"}}
	],"output":"{{ final.output.text }}"}`
	tests := []struct {
		name      string
		def       string
		old       bool   // a run recorded before ChangeAutoContextChain
		answer    string // repeated: each step answers its prompt in upper case, this long
		want      string // the context the final step's model got
		wantParts []string
	}{
		{name: "the whole chain", def: chain, want: "## outline\nOUTLINE\n\n## draft\nDRAFT"},
		{name: "recorded before the change", def: chain, old: true, want: "## draft\nDRAFT"},
		{name: "a long chain leaves the first steps out", def: long, answer: strings.Repeat("x", 20000),
			wantParts: []string{"[earlier steps left out, over 80000 characters: s1, s2]\n\n## s3\nS3", "## s4\nS4", "## s5\nS5"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			// runs recorded before ChangeAutoContextTurns: the chain as one block
			h.env.OnGetVersion(workflows.ChangeAutoContextTurns, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
			if tc.old {
				h.env.OnGetVersion(workflows.ChangeAutoContextChain, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
			}
			var mu sync.Mutex
			contexts := map[string]string{}
			h.tools.scripts["llm"] = func(in map[string]any) (any, *toolspec.Usage, error) {
				mu.Lock()
				defer mu.Unlock()
				p, _ := in["prompt"].(string)
				contexts[p], _ = in["context"].(string)
				text := strings.ToUpper(p)
				if tc.answer != "" {
					text += tc.answer[len(text):]
				}
				return map[string]any{"text": text, "toolCalls": []any{}}, nil, nil
			}
			_, err := h.run(t, tc.def, nil)
			require.NoError(t, err)
			got := contexts["final"]
			if tc.want != "" {
				require.Equal(t, tc.want, got)
			}
			for _, p := range tc.wantParts {
				require.Contains(t, got, p)
			}
			require.NotContains(t, got, "SIDE", "a step the chain does not depend on")
			if tc.def == chain && !tc.old {
				require.Equal(t, "## outline\nOUTLINE", contexts["draft"])
			}
		})
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
				got = in["messages"]
			}
			return map[string]any{"text": answer, "toolCalls": []any{}}, nil, nil
		}
		_, err := h.run(t, def, nil)
		require.NoError(t, err)
		require.Equal(t, []any{map[string]any{"role": "assistant", "content": answer}}, got)
	}
}

// TestAutoContextPassesTheChainAsTurns: "context": "auto" hands the model the run's inputs and
// the chain before the step as conversation turns, ahead of the step's own messages and prompt:
// the inputs as the first user turn, a model step's answer as an assistant turn, another step's
// output as a user turn headed by its title; the prompt carries no "Context:" block. A step
// with nothing before it and no inputs is told its context is empty, as before.
func TestAutoContextPassesTheChainAsTurns(t *testing.T) {
	const def = `{"name":"turns","inputs":{"topic":{"type":"string"}},"steps":[
	  {"id":"facts","tool":"search","inputs":{"query":"{{ inputs.topic }}","collection":"docs"}},
	  {"id":"side","tool":"llm","inputs":{"prompt":"side"}},
	  {"id":"draft","tool":"llm","dependsOn":["facts"],"inputs":{"prompt":"draft","context":"auto"}},
	  {"id":"final","tool":"llm","dependsOn":["draft"],"inputs":{"prompt":"final","context":"auto",
	    "messages":[{"role":"user","content":"keep it short"}]}}
	],"output":"{{ final.output.text }}"}`
	const long = `{"name":"long","steps":[
	  {"id":"s1","tool":"llm","inputs":{"prompt":"s1"}},
	  {"id":"s2","tool":"llm","dependsOn":["s1"],"inputs":{"prompt":"s2"}},
	  {"id":"s3","tool":"llm","dependsOn":["s2"],"inputs":{"prompt":"s3"}},
	  {"id":"s4","tool":"llm","dependsOn":["s3"],"inputs":{"prompt":"s4"}},
	  {"id":"s5","tool":"llm","dependsOn":["s4"],"inputs":{"prompt":"s5"}},
	  {"id":"final","tool":"llm","dependsOn":["s5"],"inputs":{"prompt":"final","context":"auto"}}
	],"output":"{{ final.output.text }}"}`
	const alone = `{"name":"alone","steps":[{"id":"only","tool":"llm","inputs":{"prompt":"only","context":"auto"}}]}`
	type call struct {
		messages []any
		context  any
		hasCtx   bool
	}
	run := func(t *testing.T, def string, inputs map[string]any, answer func(prompt string) string) map[string]call {
		h := newHarness(t)
		var mu sync.Mutex
		calls := map[string]call{}
		h.tools.scripts["llm"] = func(in map[string]any) (any, *toolspec.Usage, error) {
			mu.Lock()
			defer mu.Unlock()
			p, _ := in["prompt"].(string)
			msgs, _ := in["messages"].([]any)
			c, has := in["context"]
			calls[p] = call{messages: msgs, context: c, hasCtx: has}
			return map[string]any{"text": answer(p), "toolCalls": []any{}}, nil, nil
		}
		h.tools.scripts["search"] = func(in map[string]any) (any, *toolspec.Usage, error) {
			return map[string]any{"results": []any{map[string]any{"text": "fact about " + in["query"].(string), "score": 0.9}}, "model": "embed-x"}, nil, nil
		}
		_, err := h.run(t, def, inputs)
		require.NoError(t, err)
		return calls
	}
	turn := func(role, content string) any { return map[string]any{"role": role, "content": content} }
	upper := func(p string) string { return strings.ToUpper(p) }

	t.Run("the inputs and the chain, then the step's own messages", func(t *testing.T) {
		calls := run(t, def, map[string]any{"topic": "retries"}, upper)
		inputs := turn("user", "## The run's inputs\n{\"topic\":\"retries\"}")
		facts := turn("user", "## facts\n{\"results\":[{\"score\":0.9,\"text\":\"fact about retries\"}]}")
		require.Equal(t, []any{inputs, facts}, calls["draft"].messages)
		require.Equal(t, []any{inputs, facts, turn("assistant", "DRAFT"), turn("user", "keep it short")}, calls["final"].messages,
			"the whole chain first step first, a model's answer as its own turn, the step's messages after; not the side step")
		require.False(t, calls["final"].hasCtx, "no Context: block after the prompt")
	})
	t.Run("a long chain leaves the furthest steps out and says so", func(t *testing.T) {
		calls := run(t, long, nil, func(p string) string { return strings.ToUpper(p) + strings.Repeat("x", 20000-len(p)) })
		msgs := calls["final"].messages
		require.Len(t, msgs, 4)
		require.Equal(t, turn("user", "[earlier steps left out, over 80000 characters: s1, s2]"), msgs[0])
		for i, id := range []string{"S3", "S4", "S5"} {
			m := msgs[i+1].(map[string]any)
			require.Equal(t, "assistant", m["role"])
			require.True(t, strings.HasPrefix(m["content"].(string), id), m["content"])
		}
	})
	t.Run("nothing before it", func(t *testing.T) {
		calls := run(t, alone, nil, upper)
		require.Empty(t, calls["only"].messages)
		require.Equal(t, "", calls["only"].context, "an empty context, which the model call warns of")
	})
}
