package fakellm_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/internal/testkit/fakellm"
)

// TestUnansweredToolCallIsRefused: as OpenAI does, a conversation with an assistant tool call no
// tool message answers right after is a 400 naming the call, and takes no reply of the script.
func TestUnansweredToolCallIsRefused(t *testing.T) {
	asked := map[string]any{"role": "assistant", "content": "", "tool_calls": []any{
		map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "search", "arguments": "{}"}},
		map[string]any{"id": "c2", "type": "function", "function": map[string]any{"name": "search", "arguments": "{}"}},
	}}
	user := map[string]any{"role": "user", "content": "q"}
	answer := func(id string) map[string]any {
		return map[string]any{"role": "tool", "tool_call_id": id, "content": "r"}
	}
	for _, tc := range []struct {
		name     string
		messages []any
		missing  string // "": taken
	}{
		{"no calls", []any{user}, ""},
		{"each answered", []any{user, asked, answer("c2"), answer("c1")}, ""},
		{"none answered", []any{user, asked}, "c1, c2"},
		{"one answered", []any{user, asked, answer("c1")}, "c2"},
		{"answered after another message", []any{user, asked, answer("c1"), user, answer("c2")}, "c2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fakellm.New(fakellm.Text("ok"))
			defer s.Close()
			body, err := json.Marshal(map[string]any{"model": "m", "messages": tc.messages})
			require.NoError(t, err)
			resp, err := http.Post(s.BaseURL+"/chat/completions", "application/json", bytes.NewReader(body))
			require.NoError(t, err)
			defer resp.Body.Close()
			text, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			if tc.missing == "" {
				require.Equal(t, http.StatusOK, resp.StatusCode, string(text))
				return
			}
			require.Equal(t, http.StatusBadRequest, resp.StatusCode)
			require.Contains(t, string(text), "did not have response messages: "+tc.missing)
		})
	}
}
