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
