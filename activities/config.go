package activities

import (
	"github.com/weftworks/weft/activities/embedder"
	"github.com/weftworks/weft/activities/openaicompat"
	"github.com/weftworks/weft/activities/provider"
	"github.com/weftworks/weft/activities/voyage"
)

// Config holds provider settings. The worker fills it from the environment (ConfigFromEnv); it is
// the only place credentials are read.
type Config struct {
	VoyageAPIKey  string // VOYAGE_API_KEY
	VoyageBaseURL string // VOYAGE_BASE_URL (tests, proxies)
	OpenAIAPIKey  string // OPENAI_API_KEY
	OpenAIBaseURL string // OPENAI_BASE_URL: any OpenAI-compatible endpoint (Ollama, vLLM, OpenRouter)
	// EmbeddingModel is used when a step names none: voyage-4-large with a Voyage key,
	// otherwise the local embedder.
	EmbeddingModel string // WEFT_EMBEDDING_MODEL
	// ChatModel is the model generate uses when a step names none.
	ChatModel string // WEFT_CHAT_MODEL
}

// ConfigFromEnv reads the settings with getenv (os.Getenv in the worker).
func ConfigFromEnv(getenv func(string) string) Config {
	return Config{
		VoyageAPIKey: getenv("VOYAGE_API_KEY"), VoyageBaseURL: getenv("VOYAGE_BASE_URL"),
		OpenAIAPIKey: getenv("OPENAI_API_KEY"), OpenAIBaseURL: getenv("OPENAI_BASE_URL"),
		EmbeddingModel: getenv("WEFT_EMBEDDING_MODEL"), ChatModel: getenv("WEFT_CHAT_MODEL"),
	}
}

// Tools implements the tool handlers over the configured providers.
type Tools struct {
	cfg    Config
	voyage *voyage.Client
	openai *openaicompat.Client
}

// NewTools builds the handlers for cfg.
func NewTools(cfg Config) *Tools {
	t := &Tools{cfg: cfg}
	if cfg.VoyageAPIKey != "" {
		t.voyage = voyage.New(cfg.VoyageAPIKey, cfg.VoyageBaseURL)
	}
	if cfg.OpenAIAPIKey != "" || cfg.OpenAIBaseURL != "" {
		t.openai = openaicompat.New(cfg.OpenAIAPIKey, cfg.OpenAIBaseURL)
	}
	return t
}

// Handlers returns the implemented tools by name.
func (t *Tools) Handlers() map[string]Handler {
	return map[string]Handler{
		"embed":      t.embed,
		"similarity": t.similarity,
		"generate":   t.generate,
		"chunk":      t.chunk,
		"models":     t.models,
		"estimate":   t.estimate,
		"explain":    t.explain,
	}
}

// defaultEmbeddingModel is the model a step without "model" uses.
func (t *Tools) defaultEmbeddingModel() string {
	switch {
	case t.cfg.EmbeddingModel != "":
		return t.cfg.EmbeddingModel
	case t.voyage != nil:
		return "voyage-4-large"
	}
	return embedder.Model
}

// embedderFor picks the provider of an embedding model.
func (t *Tools) embedderFor(model string) (provider.Embedder, error) {
	switch {
	case model == embedder.Model:
		return localEmbedder{}, nil
	case len(model) > 7 && model[:7] == "voyage-":
		if t.voyage == nil {
			return nil, &ConfigError{Msg: "model " + model + " needs a Voyage AI key: set VOYAGE_API_KEY, or use model " + embedder.Model + " (offline)"}
		}
		return t.voyage, nil
	case t.openai != nil:
		return t.openai, nil
	}
	return nil, &ConfigError{Msg: "model " + model + " needs an OpenAI-compatible endpoint: set OPENAI_BASE_URL (and OPENAI_API_KEY), or use " + embedder.Model + " (offline)"}
}
