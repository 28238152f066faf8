package activities_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/embedder"
	"github.com/weftworks/weft/activities/toolspec"
)

// run executes a tool through the same adapter the worker registers, in Temporal's activity
// test environment.
func run(t *testing.T, cfg activities.Config, tool string, inputs map[string]any) (toolspec.Result, error) {
	t.Helper()
	return runOn(t, activities.NewTools(cfg), tool, inputs)
}

// runOn is run with tools a test made once, as a worker makes them once for all its activities:
// a test of many calls to the store then opens one connection, not one a call (0.2 s each
// under -race).
func runOn(t *testing.T, tools *activities.Tools, tool string, inputs map[string]any) (toolspec.Result, error) {
	t.Helper()
	spec, ok := toolspec.Lookup(tool)
	require.True(t, ok)
	handlers, err := activities.Handlers(tools.Handlers())
	require.NoError(t, err)
	h := handlers[tool]
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(activities.Activity(spec, h), activityName(tool))
	v, err := env.ExecuteActivity(tool, inputs)
	if err != nil {
		return toolspec.Result{}, err
	}
	var res toolspec.Result
	require.NoError(t, v.Get(&res))
	return res, nil
}

func TestLocalEmbeddingTools(t *testing.T) {
	res, err := run(t, activities.Config{}, "embed", map[string]any{"text": "durable workflows"})
	require.NoError(t, err)
	out := res.Output.(map[string]any)
	require.Equal(t, embedder.Model, out["model"])
	require.Equal(t, float64(100), out["dimensions"])
	require.Equal(t, int64(2), res.Usage.EmbeddingTokens)

	near, err := run(t, activities.Config{}, "similarity", map[string]any{"text1": "reset my password", "text2": "recover a forgotten login"})
	require.NoError(t, err)
	far, err := run(t, activities.Config{}, "similarity", map[string]any{"text1": "reset my password", "text2": "the football match ended"})
	require.NoError(t, err)
	require.Greater(t, near.Output.(map[string]any)["similarity"], far.Output.(map[string]any)["similarity"])
}

func TestMissingProviderSettingsAreClearAndNotRetried(t *testing.T) {
	cases := []struct {
		tool   string
		inputs map[string]any
		msg    string
	}{
		{"embed", map[string]any{"text": "x", "model": "voyage-4-large"}, "set VOYAGE_API_KEY"},
		{"embed", map[string]any{"text": "x", "model": "text-embedding-3-small"}, "set OPENAI_BASE_URL"},
		{"generate", map[string]any{"prompt": "hi"}, "no LLM configured on this worker: set OPENAI_BASE_URL"},
		{"embed", map[string]any{"text": "x", "dimensions": 512}, "has 100 dimensions"},
		{"explain", map[string]any{"topic": "astrology"}, `no explainer for "astrology"`},
		{"embed", map[string]any{"text": ""}, "invalid inputs"},
	}
	for _, c := range cases {
		t.Run(c.msg, func(t *testing.T) {
			_, err := run(t, activities.Config{}, c.tool, c.inputs)
			var ae *temporal.ApplicationError
			require.True(t, errors.As(err, &ae), "%v", err)
			require.True(t, ae.NonRetryable())
			require.Contains(t, ae.Error(), c.msg)
		})
	}
}

func TestGenerateWithContextAndUsage(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Errorf("fake OpenAI: request body: %v", err) // not require: this is the server's goroutine
			w.WriteHeader(400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"1","object":"chat.completion","model":"llama3","choices":[{"index":0,"message":{"role":"assistant","content":"Paris [1]"},"finish_reason":"stop"}],"usage":{"prompt_tokens":40,"completion_tokens":3,"total_tokens":43}}`)
	}))
	defer srv.Close()
	cfg := activities.Config{OpenAIBaseURL: srv.URL + "/v1", ChatModel: "llama3"}
	res, err := run(t, cfg, "generate", map[string]any{"prompt": "Capital of France?", "systemPrompt": "Cite passages.",
		"context": map[string]any{"results": []any{map[string]any{"source": "fr.md", "content": "Paris is the capital."}}}})
	require.NoError(t, err)
	require.Equal(t, "Paris [1]", res.Output.(map[string]any)["text"])
	require.Equal(t, int64(43), res.Usage.TotalTokens)
	msgs := got["messages"].([]any)
	require.Equal(t, "Cite passages.", msgs[0].(map[string]any)["content"])
	require.Equal(t, "Capital of France?\n\nContext:\n[1] fr.md: Paris is the capital.\n", msgs[1].(map[string]any)["content"])
	require.Empty(t, res.Warnings, "a context with passages says nothing")

	// A context that came out empty (a search that found nothing) is said on the step: the model
	// answered from the prompt alone (llm says it through the same emptyContext).
	res, err = run(t, cfg, "generate", map[string]any{"prompt": "Capital of France?", "context": map[string]any{"results": []any{}}})
	require.NoError(t, err)
	require.Equal(t, []string{"the context came out empty (no results): the model answered from the prompt alone"}, res.Warnings)
}

func TestRateLimitIsRetriedAfterTheProvidersDelay(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "9")
		w.WriteHeader(429)
		fmt.Fprint(w, `{"detail":"Rate limit exceeded."}`)
	}))
	defer srv.Close()
	_, err := run(t, activities.Config{VoyageAPIKey: "k", VoyageBaseURL: srv.URL}, "embed", map[string]any{"text": "x", "model": "voyage-4-lite"})
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae), "%v", err)
	require.False(t, ae.NonRetryable())
	require.Equal(t, activities.ErrProviderUnavailable, ae.Type())
	require.Equal(t, "9s", ae.NextRetryDelay().String())
}

func TestUtilityTools(t *testing.T) {
	res, err := run(t, activities.Config{}, "chunk", map[string]any{"text": "One. Two. Three.", "strategy": "sentence", "chunkSize": 100})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"chunks": []any{"One. Two. Three."}, "count": float64(1)}, res.Output)

	res, err = run(t, activities.Config{}, "estimate", map[string]any{"docs": 1000, "queries": 10000, "months": 12})
	require.NoError(t, err)
	var large map[string]any
	for _, e := range res.Output.(map[string]any)["estimates"].([]any) {
		if e.(map[string]any)["model"] == "voyage-4-large" {
			large = e.(map[string]any)
		}
	}
	// 1000 docs × 500 tokens × $0.12/M = $0.06; 10,000 × 12 × 30 tokens × $0.12/M = $0.43
	require.Equal(t, 0.06, large["documentCost"])
	require.Equal(t, 0.43, large["queryCost"])
	require.Equal(t, 0.13, large["asymmetricTotal"], "documents $0.06 + queries with voyage-4-lite: 3.6M tokens × $0.02/M = $0.072")

	res, err = run(t, activities.Config{}, "models", map[string]any{"category": "rerank"})
	require.NoError(t, err)
	require.Len(t, res.Output.(map[string]any)["models"], 3)

	res, err = run(t, activities.Config{}, "explain", map[string]any{"topic": "Durability"})
	require.NoError(t, err)
	require.Contains(t, res.Output.(map[string]any)["content"], "resumes from the last finished step")
}

func TestEstimateOneModel(t *testing.T) {
	res, err := run(t, activities.Config{}, "estimate", map[string]any{"docs": 1000, "model": "voyage-4-lite"})
	require.NoError(t, err)
	est := res.Output.(map[string]any)["estimates"].([]any)
	require.Len(t, est, 1)
	require.Equal(t, "voyage-4-lite", est[0].(map[string]any)["model"])
	_, err = run(t, activities.Config{}, "estimate", map[string]any{"docs": 1000, "model": "nope"})
	require.ErrorContains(t, err, `model "nope" is not an embedding model weft knows`)
	// vai's name for the chunk size.
	res, err = run(t, activities.Config{}, "chunk", map[string]any{"text": strings.Repeat("word ", 300), "size": 200, "strategy": "fixed"})
	require.NoError(t, err)
	require.Greater(t, res.Output.(map[string]any)["count"], float64(1))
}

// TestEveryActivityToolHasAHandler: the registry and the handlers agree, and a tool declared
// without a handler, or a handler for an undeclared tool, is refused when the worker is built.
func TestEveryActivityToolHasAHandler(t *testing.T) {
	impl := activities.NewTools(activities.Config{}).Handlers()
	handlers, err := activities.Handlers(impl)
	require.NoError(t, err, "every activity tool the registry declares has a handler")
	for _, s := range toolspec.All() {
		if s.Kind == toolspec.KindActivity {
			require.Contains(t, handlers, s.Name)
		}
	}

	without := map[string]activities.Handler{}
	for name, h := range impl {
		if name != "rerank" {
			without[name] = h
		}
	}
	without["rerankk"] = impl["rerank"]
	_, err = activities.Handlers(without)
	require.ErrorContains(t, err, "activity tools without a handler: rerank: bind each to its declaration")
	require.ErrorContains(t, err, "handlers for tools the registry does not declare as activities: rerankk")
}
