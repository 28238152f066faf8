package provider

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Embedder turns texts into vectors. inputType is "query" or "document"; dimensions 0 means
// the model's default.
type Embedder interface {
	Embed(ctx context.Context, texts []string, inputType, model string, dimensions int) (*Embeddings, error)
}

// Embeddings is the result of one Embed call.
type Embeddings struct {
	Vectors [][]float32
	Model   string
	Tokens  int64
}

// Reranker orders documents by relevance to a query.
type Reranker interface {
	Rerank(ctx context.Context, query string, documents []string, model string, topK int) (*Ranking, error)
}

// Ranking is the result of one Rerank call, best first.
type Ranking struct {
	Results []Ranked
	Model   string
	Tokens  int64
}

// Ranked is one document's place in a Ranking.
type Ranked struct {
	Index int
	Score float64
}

// Generator answers a chat prompt.
type Generator interface {
	Generate(ctx context.Context, req GenerateRequest) (*Generation, error)
}

// GenerateRequest is one chat completion.
type GenerateRequest struct {
	Model        string
	SystemPrompt string
	Prompt       string
	Temperature  *float32
	MaxTokens    int
}

// Generation is the answer.
type Generation struct {
	Text             string
	Model            string
	PromptTokens     int64
	CompletionTokens int64
}

// Error is a provider failure. Retryable errors (429, 5xx, network) may carry the delay the
// provider asked for; the others name the setting to fix.
type Error struct {
	Provider   string
	Status     int // HTTP status, 0 for network errors
	Retryable  bool
	RetryAfter time.Duration
	Setting    string // the configuration to check, e.g. VOYAGE_API_KEY
	Msg        string
	Err        error
}

func (e *Error) Error() string {
	s := e.Provider + ": " + e.Msg
	if e.Status != 0 {
		s = fmt.Sprintf("%s: HTTP %d: %s", e.Provider, e.Status, e.Msg)
	}
	if e.Setting != "" {
		s += " (check " + e.Setting + ")"
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// FromStatus classifies an HTTP failure: 429 and 5xx are retryable (honouring Retry-After),
// 401/403 point at the key setting, other 4xx at the request.
func FromStatus(provider string, status int, header http.Header, msg, keySetting string) *Error {
	e := &Error{Provider: provider, Status: status, Msg: msg}
	switch {
	case status == http.StatusTooManyRequests || status >= 500:
		e.Retryable = true
		e.RetryAfter = RetryAfter(header)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Setting = keySetting
	}
	return e
}

// RetryAfter parses a Retry-After header (seconds or an HTTP date); 0 when absent.
func RetryAfter(h http.Header) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// Network wraps a transport failure (timeout, refused connection) as retryable.
func Network(provider string, err error) *Error {
	return &Error{Provider: provider, Retryable: true, Msg: err.Error(), Err: err}
}

// Chatter runs chat completions with tool calls and optional streaming.
type Chatter interface {
	Chat(ctx context.Context, req ChatRequest) (*ChatResponse, error)
}

// Message is one chat message. Role is system, user, assistant or tool.
type Message struct {
	Role       string
	Content    string
	ToolCalls  []ToolCall // assistant messages that asked for tools
	ToolCallID string     // tool messages: the call answered
	Name       string
}

// ToolCall is a call the model asked for; Arguments is the model's JSON text, unparsed.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Function is a tool offered to the model.
type Function struct {
	Name        string
	Description string
	Parameters  any // JSON Schema
}

// ChatRequest is one chat completion.
type ChatRequest struct {
	Model             string
	Messages          []Message
	Tools             []Function
	ToolChoice        string // auto | none | required | a function's name ("" = provider default)
	ParallelToolCalls *bool
	Temperature       *float32
	MaxTokens         int
	// JSON asks for a JSON object answer (response_format json_object).
	JSON bool
	// Schema, with JSON, is the JSON Schema the answer must satisfy: sent as response_format
	// json_schema (strict) named SchemaName, to providers that take it.
	Schema     any
	SchemaName string
	// OnDelta, when set, streams the answer: it is called with the text so far.
	OnDelta func(textSoFar string)
}

// ChatResponse is the answer.
type ChatResponse struct {
	Text             string
	ToolCalls        []ToolCall
	FinishReason     string
	Model            string
	PromptTokens     int64
	CompletionTokens int64
}
