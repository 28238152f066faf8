package activities_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/internal/testkit/fakellm"
)

func llmConfig(f *fakellm.Server) activities.Config {
	return activities.Config{OpenAIBaseURL: f.BaseURL, OpenAIAPIKey: "key", ChatModel: "gpt-4o-mini",
		ModelAliases: map[string]string{"smart": "gpt-4.1"}}
}

func TestLLMTool(t *testing.T) {
	weather := map[string]any{"name": "search", "description": "search the docs", "parameters": map[string]any{"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}}}
	tests := []struct {
		name   string
		script []fakellm.Reply
		in     map[string]any
		check  func(t *testing.T, out map[string]any, f *fakellm.Server)
	}{
		{
			name:   "text, streamed, with usage and cost",
			script: []fakellm.Reply{{Text: "Durable means it survives crashes.", PromptTokens: 1000, CompletionTokens: 500}},
			in:     map[string]any{"prompt": "what is durable?", "system": "be brief", "context": []any{map[string]any{"source": "a.md", "content": "crash recovery"}}},
			check: func(t *testing.T, out map[string]any, f *fakellm.Server) {
				require.Equal(t, "Durable means it survives crashes.", out["text"])
				require.Equal(t, "gpt-4o-mini", out["model"])
				u := out["usage"].(map[string]any)
				require.EqualValues(t, 1500, u["totalTokens"])
				require.InDelta(t, (1000*0.15+500*0.60)/1e6, u["costUsd"], 1e-12)
				req := f.Requests()[0]
				require.True(t, req.Stream, "the activity streams")
				require.Equal(t, "system", req.Messages[0]["role"])
				require.Contains(t, req.Messages[1]["content"], "[1] a.md: crash recovery")
			},
		},
		{
			name:   "tool calls are proposed, not run",
			script: []fakellm.Reply{{Calls: []fakellm.Call{{ID: "c1", Name: "search", Arguments: `{"query":"retries"}`}, {ID: "c2", Name: "search", Arguments: `{"query":"limits"}`}}}},
			in:     map[string]any{"prompt": "look it up", "tools": []any{weather}, "model": "smart"},
			check: func(t *testing.T, out map[string]any, f *fakellm.Server) {
				calls := out["toolCalls"].([]any)
				require.Len(t, calls, 2)
				require.Equal(t, map[string]any{"id": "c2", "name": "search", "arguments": `{"query":"limits"}`}, calls[1])
				require.Equal(t, "tool_calls", out["finishReason"])
				req := f.Requests()[0]
				require.Equal(t, "gpt-4.1", req.Model, "the alias was resolved")
				require.Len(t, req.Tools, 1)
			},
		},
		{
			name:   "a JSON answer that fails the schema is repaired",
			script: []fakellm.Reply{fakellm.Text(`{"answer": 42}`), fakellm.Text("```json\n{\"answer\": \"forty-two\"}\n```")},
			in: map[string]any{"prompt": "answer", "responseFormat": map[string]any{"type": "object", "required": []any{"answer"},
				"properties": map[string]any{"answer": map[string]any{"type": "string"}}}},
			check: func(t *testing.T, out map[string]any, f *fakellm.Server) {
				require.Equal(t, map[string]any{"answer": "forty-two"}, out["json"])
				reqs := f.Requests()
				require.Len(t, reqs, 2)
				last := reqs[1].Messages[len(reqs[1].Messages)-1]
				require.Contains(t, last["content"], "does not satisfy the schema")
			},
		},
		{
			name:   "messages with a tool result",
			script: []fakellm.Reply{fakellm.Text("ok")},
			in: map[string]any{"messages": []any{
				map[string]any{"role": "user", "content": "hi"},
				map[string]any{"role": "assistant", "content": "", "toolCalls": []any{map[string]any{"id": "c1", "name": "search", "arguments": "{}"}}},
				map[string]any{"role": "tool", "toolCallId": "c1", "content": "[]"},
			}},
			check: func(t *testing.T, out map[string]any, f *fakellm.Server) {
				msgs := f.Requests()[0].Messages
				require.Len(t, msgs, 3)
				require.Equal(t, "c1", msgs[2]["tool_call_id"])
				require.Equal(t, "search", msgs[1]["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)["name"])
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakellm.New(tt.script...)
			defer f.Close()
			res, err := run(t, llmConfig(f), "llm", tt.in)
			require.NoError(t, err)
			tt.check(t, res.Output.(map[string]any), f)
			require.NotNil(t, res.Usage)
		})
	}
}

func TestLLMFailures(t *testing.T) {
	tests := []struct {
		name      string
		script    []fakellm.Reply
		cfg       func(*fakellm.Server) activities.Config
		in        map[string]any
		errType   string
		retryable bool
		delay     time.Duration
		msg       string
	}{
		{name: "429 waits for Retry-After", script: []fakellm.Reply{fakellm.Error(429, "7")}, errType: activities.ErrProviderUnavailable, retryable: true, delay: 7 * time.Second, msg: "HTTP 429"},
		{name: "500 is retried", script: []fakellm.Reply{fakellm.Error(500, "")}, errType: activities.ErrProviderUnavailable, retryable: true, msg: "HTTP 500"},
		{name: "malformed body is retried", script: []fakellm.Reply{{Malformed: true}}, errType: activities.ErrProviderUnavailable, retryable: true, msg: "malformed"},
		{name: "401 names the key", script: []fakellm.Reply{fakellm.Error(401, "")}, errType: "MissingConfiguration", msg: "OPENAI_API_KEY"},
		{name: "no endpoint", cfg: func(*fakellm.Server) activities.Config { return activities.Config{ChatModel: "m"} }, errType: "MissingConfiguration", msg: "OPENAI_BASE_URL"},
		{name: "no model", cfg: func(f *fakellm.Server) activities.Config { return activities.Config{OpenAIBaseURL: f.BaseURL} }, errType: "MissingConfiguration", msg: "WEFT_CHAT_MODEL"},
		// just over the bound, in 1 KiB words: the fake streams a chunk a word, and 210,000 words of 5 bytes took 70 s under -race
		{name: "answer over MaxAnswerBytes", script: []fakellm.Reply{fakellm.Text(strings.Repeat(strings.Repeat("x", 1023)+" ", activities.MaxAnswerBytes>>10+1))}, errType: "InvalidInput", msg: "lower maxTokens"},
		{name: "JSON never valid", script: []fakellm.Reply{fakellm.Text("no"), fakellm.Text("still no")}, in: map[string]any{"prompt": "json please", "responseFormat": "json", "maxRepairs": 1}, errType: "InvalidInput", msg: "no valid answer after 1 repairs"},
		{name: "neither prompt nor messages", in: map[string]any{"system": "hi"}, errType: "InvalidInput", msg: "give prompt or messages"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakellm.New(tt.script...)
			defer f.Close()
			cfg := llmConfig(f)
			if tt.cfg != nil {
				cfg = tt.cfg(f)
			}
			in := tt.in
			if in == nil {
				in = map[string]any{"prompt": "hello"}
			}
			_, err := run(t, cfg, "llm", in)
			require.Error(t, err)
			var ae *temporal.ApplicationError
			require.True(t, errors.As(err, &ae), "%v", err)
			require.Equal(t, tt.errType, ae.Type(), ae.Error())
			require.Equal(t, !tt.retryable, ae.NonRetryable(), ae.Error())
			require.Contains(t, ae.Error(), tt.msg)
			if tt.delay > 0 {
				require.Equal(t, tt.delay, ae.NextRetryDelay())
			}
		})
	}
}

func TestPrices(t *testing.T) {
	p := activities.DefaultPrices()
	require.InDelta(t, 2.5e-6*1000+10e-6*100, p.Cost("gpt-4o-2024-08-06", "gpt-4o", 1000, 100), 1e-12, "dated model names use their family's price")
	require.InDelta(t, 0.15e-6*1000, p.Cost("gpt-4o-mini", "", 1000, 0), 1e-12, "the longest prefix wins")
	require.Zero(t, p.Cost("llama3.1:8b", "llama3.1:8b", 1000, 1000), "local models are free")
}
