package openaicompat_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/openaicompat"
	"github.com/weftworks/weft/activities/provider"
)

// TestToolChoiceSent: auto/none/required go as strings, a function's name as OpenAI's
// {"type":"function","function":{"name":...}}; no tool_choice without tools or a choice.
func TestToolChoiceSent(t *testing.T) {
	var got any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		got = body["tool_choice"]
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": "m",
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": "ok"}, "finish_reason": "stop"}}})
	}))
	t.Cleanup(srv.Close)
	c := openaicompat.New("key", srv.URL+"/v1")
	tools := []provider.Function{{Name: "search", Parameters: map[string]any{"type": "object"}}}
	for _, tc := range []struct {
		choice string
		tools  []provider.Function
		want   any
	}{
		{"", tools, nil},
		{"required", tools, "required"},
		{"none", tools, "none"},
		{"search", tools, map[string]any{"type": "function", "function": map[string]any{"name": "search"}}},
		{"search", nil, nil},
	} {
		got = nil
		_, err := c.Chat(context.Background(), provider.ChatRequest{Model: "m", Messages: []provider.Message{{Role: "user", Content: "hi"}}, Tools: tc.tools, ToolChoice: tc.choice})
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "choice %q", tc.choice)
	}
}
