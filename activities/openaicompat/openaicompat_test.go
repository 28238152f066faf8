package openaicompat_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/openaicompat"
	"github.com/weftworks/weft/activities/provider"
)

// fakeOpenAI behaves like the OpenAI API for /embeddings and /chat/completions, with its error
// body shape.
func fakeOpenAI(t *testing.T, mode string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fail := func(status int, msg string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error","code":null}}`, msg)
		}
		if r.Header.Get("Authorization") != "Bearer key" {
			fail(401, "Incorrect API key provided")
			return
		}
		switch mode {
		case "400":
			fail(400, "The model `nope` does not exist")
			return
		case "429":
			w.Header().Set("Retry-After", "3")
			fail(429, "Rate limit reached")
			return
		case "500":
			fail(500, "The server had an error")
			return
		case "malformed":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"choices": [`)
			return
		}
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("fake OpenAI: request body: %v", err) // not require: this is the server's goroutine
			fail(400, "request body: "+err.Error())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/embeddings":
			inputs := body["input"].([]any)
			var data []map[string]any
			for i := range inputs {
				data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": []float64{float64(i), 0.5}})
			}
			json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": body["model"], "usage": map[string]any{"prompt_tokens": 4, "total_tokens": 4}})
		case "/v1/chat/completions":
			msgs := body["messages"].([]any)
			last := msgs[len(msgs)-1].(map[string]any)["content"]
			json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": body["model"],
				"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": fmt.Sprintf("echo %v (%d messages)", last, len(msgs))}, "finish_reason": "stop"}},
				"usage":   map[string]any{"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}})
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestEmbedAndGenerate(t *testing.T) {
	srv := fakeOpenAI(t, "")
	c := openaicompat.New("key", srv.URL+"/v1")
	emb, err := c.Embed(context.Background(), []string{"a", "b"}, "query", "text-embedding-3-small", 0)
	require.NoError(t, err)
	require.Equal(t, [][]float32{{0, 0.5}, {1, 0.5}}, emb.Vectors)
	require.Equal(t, int64(4), emb.Tokens)
	g, err := c.Generate(context.Background(), provider.GenerateRequest{Model: "llama3", SystemPrompt: "be brief", Prompt: "hi"})
	require.NoError(t, err)
	require.Equal(t, "echo hi (2 messages)", g.Text)
	require.Equal(t, int64(12), g.PromptTokens)
	require.Equal(t, int64(5), g.CompletionTokens)
}

func TestFailures(t *testing.T) {
	cases := []struct {
		mode, key string
		retryable bool
		after     time.Duration
		msg       string
	}{
		{"", "wrong", false, 0, "HTTP 401: Incorrect API key provided (check OPENAI_API_KEY)"},
		{"400", "key", false, 0, "HTTP 400: The model `nope` does not exist"},
		{"429", "key", true, 3 * time.Second, "HTTP 429: Rate limit reached"},
		{"500", "key", true, 0, "HTTP 500: The server had an error"},
		{"malformed", "key", true, 0, "malformed response"},
	}
	for _, c := range cases {
		t.Run(c.mode+c.key, func(t *testing.T) {
			srv := fakeOpenAI(t, c.mode)
			_, err := openaicompat.New(c.key, srv.URL+"/v1").Generate(context.Background(), provider.GenerateRequest{Model: "m", Prompt: "p"})
			var pe *provider.Error
			require.True(t, errors.As(err, &pe), "%T %v", err, err)
			require.Equal(t, c.retryable, pe.Retryable)
			require.Equal(t, c.after, pe.RetryAfter)
			require.Contains(t, pe.Error(), c.msg)
		})
	}
	// Nothing listening: a network error, retryable.
	_, err := openaicompat.New("key", "http://127.0.0.1:1/v1").Embed(context.Background(), []string{"x"}, "", "m", 0)
	var pe *provider.Error
	require.True(t, errors.As(err, &pe))
	require.True(t, pe.Retryable)
}
