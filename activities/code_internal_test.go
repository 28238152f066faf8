package activities

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/embedder"
)

// TestDefaultCodeModel: code without a model (and a collection without one) is embedded with
// voyage-code-3 when the embedding provider in use is Voyage, whichever Voyage model is the
// default; with another provider, or offline, the default stays.
func TestDefaultCodeModel(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"offline", Config{}, embedder.Model},
		{"a Voyage key", Config{VoyageAPIKey: "k"}, "voyage-code-3"},
		{"another Voyage model configured", Config{VoyageAPIKey: "k", EmbeddingModel: "voyage-4-lite"}, "voyage-code-3"},
		{"an OpenAI-compatible model configured", Config{OpenAIBaseURL: "http://127.0.0.1:1/v1", EmbeddingModel: "text-embedding-3-small"}, "text-embedding-3-small"},
		{"a Voyage key, but OpenAI's model configured", Config{VoyageAPIKey: "k", OpenAIBaseURL: "http://127.0.0.1:1/v1", EmbeddingModel: "text-embedding-3-small"}, "text-embedding-3-small"},
		{"the local model configured despite a key", Config{VoyageAPIKey: "k", EmbeddingModel: embedder.Model}, embedder.Model},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, NewTools(c.cfg).defaultCodeModel())
		})
	}
}

// TestCodeHitsAsContext: a code tool's results given to generate or llm as context are cited as
// file:lines (symbol), so a review can point at them; documents keep their source.
func TestCodeHitsAsContext(t *testing.T) {
	got := renderContext(map[string]any{"results": []any{
		map[string]any{"path": "auth/token.go", "startLine": float64(3), "endLine": float64(6), "symbol": "IssueToken", "content": "func IssueToken() {}"},
		map[string]any{"path": "main.c", "startLine": 7, "endLine": 7, "symbol": "", "content": "int x;"},
		map[string]any{"path": "notes.txt", "content": "todo"},
		map[string]any{"source": "auth.md", "path": "ignored", "content": "Tokens expire."},
	}})
	require.Equal(t, "[1] auth/token.go:3-6 (IssueToken): func IssueToken() {}\n[2] main.c:7: int x;\n[3] notes.txt: todo\n[4] auth.md: Tokens expire.\n", got)
}
