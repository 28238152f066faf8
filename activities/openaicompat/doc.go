// Package openaicompat talks to any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, OpenRouter,
// ...) through github.com/sashabaranov/go-openai: embeddings and chat completions, with tool calls
// and streaming.
//
// Entry points: New, then Client's Embed (provider.Embedder), Generate (provider.Generator) and
// Chat (provider.Chatter; with OnDelta set it streams).
//
// It does not retry (go-openai does not either): failures come back as provider.Error so Temporal
// decides, honouring Retry-After. It must not import Temporal (go.temporal.io), workflows/ or the
// activities package, and it reads no environment: the worker passes the key and base URL.
package openaicompat
