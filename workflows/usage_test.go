package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/internal/testkit/fakellm"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// realLLM runs the real llm activity (its adapter included: retries carry billed usage, failures
// report it) against a scripted model.
func realLLM(h *harness, f *fakellm.Server) {
	cfg := activities.Config{OpenAIBaseURL: f.BaseURL, OpenAIAPIKey: "key", ChatModel: "gpt-4o-mini"}
	spec, _ := toolspec.Lookup("llm")
	act := activities.Activity(spec, activities.NewTools(cfg).Handlers()["llm"])
	h.env.OnActivity("llm", anyCtx, anyArg).Return(func(ctx context.Context, in map[string]any) (toolspec.Result, error) {
		return act(ctx, in)
	})
}

func stepUsage(res *weftv1.RunResult, id string) *weftv1.TokenUsage {
	for _, s := range res.Steps {
		if s.Id == id {
			return s.GetUsage()
		}
	}
	return nil
}

// TestUsageCountsEveryBilledCall: the calls a provider billed count at step and run level also
// when the step fails (issue 21, item 4: the 3 calls of an llm step that failed after 2 repairs
// were missing) and when an attempt failed and was retried; usage.calls counts those billed
// requests (issue 39, item 7: it said 1 for an activity's 3).
func TestUsageCountsEveryBilledCall(t *testing.T) {
	price := activities.DefaultPrices().Cost("gpt-4o-mini", "gpt-4o-mini", 100, 10)
	require.Positive(t, price)
	for _, tc := range []struct {
		name   string
		script []fakellm.Reply
		failed bool
		calls  int // billed model calls
	}{
		{name: "failed after 2 repairs", failed: true, calls: 3, script: []fakellm.Reply{
			{Text: "no", PromptTokens: 100, CompletionTokens: 10}, {Text: "still no", PromptTokens: 100, CompletionTokens: 10},
			{Text: "never", PromptTokens: 100, CompletionTokens: 10}}},
		{name: "a repair's provider error, then a retried attempt that succeeds", calls: 2, script: []fakellm.Reply{
			{Text: "no", PromptTokens: 100, CompletionTokens: 10}, fakellm.Error(500, ""),
			{Text: `{"ok": true}`, PromptTokens: 100, CompletionTokens: 10}}},
		{name: "billed on each of 3 attempts, the first two retried", calls: 3, script: []fakellm.Reply{
			{Text: "no", PromptTokens: 100, CompletionTokens: 10}, fakellm.Error(500, ""),
			{Text: "no", PromptTokens: 100, CompletionTokens: 10}, fakellm.Error(500, ""),
			{Text: `{"ok": true}`, PromptTokens: 100, CompletionTokens: 10}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := fakellm.New(tc.script...)
			defer f.Close()
			h := newHarness(t)
			realLLM(h, f)
			res, err := h.run(t, `{"name":"u","steps":[
			  {"id":"ask","tool":"llm","continueOnError":true,"inputs":{"prompt":"json please","responseFormat":"json","maxRepairs":2}}],
			  "output":"{{ ask.status }}"}`, nil)
			require.NoError(t, err)
			want := "completed"
			if tc.failed {
				want = "failed"
			}
			require.Equal(t, want, res.Output.GetStringValue())
			n := int64(tc.calls)
			for level, u := range map[string]*weftv1.TokenUsage{"run": res.Usage, "step": stepUsage(res, "ask")} {
				require.NotNil(t, u, level)
				require.Equal(t, 100*n, u.PromptTokens, level)
				require.Equal(t, 10*n, u.CompletionTokens, level)
				require.Equal(t, 110*n, u.TotalTokens, level)
				require.InDelta(t, price*float64(n), u.CostUsd, 1e-12, level)
				require.Equal(t, n, u.Calls, level+": the provider requests billed")
			}
		})
	}
}

// TestUsageCountsTheRequestsOfRetriedAttempts: an embed activity whose provider billed each of
// its 3 attempts (two failed after the request, and were retried) counts 3 calls, at step and
// run level (issue 39, item 7: usage.calls said 1).
func TestUsageCountsTheRequestsOfRetriedAttempts(t *testing.T) {
	spec, _ := toolspec.Lookup("embed")
	attempts := 0
	act := activities.Activity(spec, func(context.Context, map[string]any) (any, *toolspec.Usage, error) {
		attempts++
		if attempts < 3 {
			return nil, &toolspec.Usage{EmbeddingTokens: 7}, errors.New("the answer was lost after the provider billed it")
		}
		return map[string]any{"embedding": []float64{1, 0}, "dimensions": 2, "model": "m"}, &toolspec.Usage{EmbeddingTokens: 7}, nil
	})
	h := newHarness(t)
	h.env.OnActivity("embed", anyCtx, anyArg).Return(func(ctx context.Context, in map[string]any) (toolspec.Result, error) {
		return act(ctx, in)
	})
	res, err := h.run(t, `{"name":"u","steps":[{"id":"vec","tool":"embed","inputs":{"text":"hello"}}]}`, nil)
	require.NoError(t, err)
	require.Equal(t, 3, attempts)
	for level, u := range map[string]*weftv1.TokenUsage{"run": res.Usage, "step": stepUsage(res, "vec")} {
		require.EqualValues(t, 21, u.EmbeddingTokens, level)
		require.EqualValues(t, 3, u.Calls, level)
	}
}

// TestChatUsageCountsAFailedTurn: a turn that fails after billed calls leaves the conversation
// unchanged but counts the calls in the session's usage.
func TestChatUsageCountsAFailedTurn(t *testing.T) {
	f := fakellm.New(fakellm.Reply{Calls: []fakellm.Call{{ID: "c1", Name: "search", Arguments: `{"query":"retries"}`}}, PromptTokens: 100, CompletionTokens: 10},
		fakellm.Error(400, ""), fakellm.Reply{Text: "Retries back off.", PromptTokens: 100, CompletionTokens: 10})
	defer f.Close()
	h := newHarness(t)
	realLLM(h, f)
	var failed error
	var afterFailure runwire.ChatUsage
	send := func(text string, done func(error)) {
		h.env.UpdateWorkflow(runwire.UpdateChatMessage, text, &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(err error) { t.Errorf("%q refused: %v", text, err) },
			OnComplete: func(_ any, err error) { done(err) },
		}, runwire.ChatMessage{Text: text})
	}
	h.env.RegisterDelayedCallback(func() { send("how do retries work?", func(err error) { failed = err }) }, time.Second)
	h.env.RegisterDelayedCallback(func() {
		v, err := h.env.QueryWorkflow(runwire.QueryChat)
		require.NoError(t, err)
		var s runwire.ChatSession
		require.NoError(t, v.Get(&s))
		afterFailure = s.Usage
		send("again", func(err error) { require.NoError(t, err) })
	}, time.Minute)
	h.env.ExecuteWorkflow(runwire.ChatWorkflowType, &runwire.ChatSession{Tools: []string{"search"}, Collection: "docs", TurnsPerRun: 2})
	require.True(t, h.env.IsWorkflowCompleted())
	require.Error(t, failed, "the model refused the second call of the first turn")
	require.EqualValues(t, 110, afterFailure.TotalTokens, "the failed turn's billed call is in the session's usage")
	require.EqualValues(t, 100, afterFailure.PromptTokens)
	require.Positive(t, afterFailure.CostUSD)
}
