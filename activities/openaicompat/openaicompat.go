package openaicompat

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/weftworks/weft/activities/provider"
)

const name = "openai-compatible"

// Client is an OpenAI-compatible client.
type Client struct {
	c *openai.Client
	// floats holds the models (of this base URL) whose server answered a request for base64
	// vectors with JSON numbers (it ignores encoding_format, as some OpenAI-compatible servers
	// do): later requests for them ask for numbers. The answer that taught it is kept.
	floats sync.Map // model -> true
}

// New returns a client for baseURL ("" means OpenAI's API) with an optional key.
func New(apiKey, baseURL string) *Client {
	cfg := openai.DefaultConfig(apiKey)
	if baseURL != "" {
		cfg.BaseURL = baseURL
	}
	cfg.HTTPClient = &headerDoer{c: &http.Client{Timeout: 5 * time.Minute}}
	return &Client{c: openai.NewClientWithConfig(cfg)}
}

// headerDoer keeps the headers of a failed response (Retry-After) where the caller can read
// them: go-openai's errors do not carry headers.
type headerDoer struct{ c *http.Client }

type headerKey struct{}

// base64Key marks a request for base64 vectors; its value is set when the answer held numbers.
type base64Key struct{}

func (d *headerDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.c.Do(req)
	if err == nil && resp.StatusCode >= 400 {
		if h, ok := req.Context().Value(headerKey{}).(*http.Header); ok {
			*h = resp.Header.Clone()
		}
	}
	if numbers, ok := req.Context().Value(base64Key{}).(*bool); ok && err == nil && resp.StatusCode < 300 {
		err = base64Vectors(resp, numbers)
	}
	return resp, err
}

// base64Vectors rewrites an embeddings answer to base64 vectors when the server answered a
// request for them with JSON numbers, setting *numbers: the answer is valid, and the client
// decodes it as it asked, so nothing is asked (and billed) again. An answer that already holds
// base64, or that is no embeddings answer, is left as it came.
// numbersVectorIn says whether body holds an embedding written as a list of numbers
// ("embedding", a colon, a bracket, spaces between): an answer without one is not parsed here, and
// go-openai parses it once. A scan for the key, not a regular expression: base64 answers are
// hundreds of kilobytes and this runs on every one.
func numbersVectorIn(body []byte) bool {
	key := []byte(`"embedding"`)
	for i := bytes.Index(body, key); i >= 0; {
		rest := bytes.TrimLeft(body[i+len(key):], " \t\r\n")
		if len(rest) > 0 && rest[0] == ':' {
			rest = bytes.TrimLeft(rest[1:], " \t\r\n")
			if len(rest) > 0 && rest[0] == '[' {
				return true
			}
		}
		next := bytes.Index(body[i+len(key):], key)
		if next < 0 {
			return false
		}
		i += len(key) + next
	}
	return false
}

func base64Vectors(resp *http.Response, numbers *bool) error {
	buf := bytes.NewBuffer(make([]byte, 0, max(resp.ContentLength, 0)+bytes.MinRead)) // one allocation when the length is known
	_, err := buf.ReadFrom(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	body := buf.Bytes()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if !numbersVectorIn(body) {
		return nil // base64 as asked (or no vectors): nothing to rewrite, and no second parse
	}
	var top map[string]json.RawMessage
	var data []map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil || json.Unmarshal(top["data"], &data) != nil {
		return nil
	}
	changed := false
	for _, d := range data {
		raw := bytes.TrimSpace(d["embedding"])
		if len(raw) == 0 || raw[0] != '[' {
			continue
		}
		var v []float32
		if json.Unmarshal(raw, &v) != nil {
			return nil // go-openai reports what is wrong with it
		}
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		d["embedding"], _ = json.Marshal(base64.StdEncoding.EncodeToString(b))
		changed = true
	}
	if !changed {
		return nil
	}
	top["data"], _ = json.Marshal(data)
	out, err := json.Marshal(top)
	if err != nil {
		return nil
	}
	*numbers = true
	resp.Body = io.NopCloser(bytes.NewReader(out))
	resp.ContentLength = int64(len(out))
	return nil
}

func classify(err error, h http.Header) error {
	var ae *openai.APIError
	if errors.As(err, &ae) {
		return provider.FromStatus(name, ae.HTTPStatusCode, h, ae.Message, "OPENAI_API_KEY")
	}
	var re *openai.RequestError
	if errors.As(err, &re) {
		msg := fmt.Sprint(re.Err)
		if len(re.Body) > 0 {
			msg = string(re.Body)
			if len(msg) > 300 {
				msg = msg[:300] + "…"
			}
		}
		if re.HTTPStatusCode == 0 {
			return &provider.Error{Provider: name, Retryable: true, Msg: "malformed response: " + msg, Err: err}
		}
		return provider.FromStatus(name, re.HTTPStatusCode, h, msg, "OPENAI_API_KEY")
	}
	var perr *provider.Error
	if errors.As(err, &perr) {
		return perr
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &se) || errors.As(err, &te) {
		return &provider.Error{Provider: name, Retryable: true, Msg: "malformed response: " + err.Error(), Err: err}
	}
	return provider.Network(name, err)
}

// Embed embeds texts (inputType is ignored: OpenAI-style models embed queries and documents alike).
//
// The vectors are asked for as base64 (encoding_format "base64", as OpenAI's own client does):
// 4 bytes a dimension instead of ~10 characters of JSON number, decoded without parsing floats.
// A server that ignores the setting and answers numbers has answered all the same: its numbers
// are kept (never asked again, so never billed twice, however many requests were in flight),
// and that model is asked for numbers from then on.
func (c *Client) Embed(ctx context.Context, texts []string, inputType, model string, dimensions int) (*provider.Embeddings, error) {
	var h http.Header
	req := openai.EmbeddingRequest{Input: texts, Model: openai.EmbeddingModel(model), Dimensions: dimensions}
	ctx = context.WithValue(ctx, headerKey{}, &h)
	if _, floats := c.floats.Load(model); !floats {
		req.EncodingFormat = openai.EmbeddingEncodingFormatBase64
		numbers := new(bool)
		ctx = context.WithValue(ctx, base64Key{}, numbers)
		defer func() {
			if *numbers {
				c.floats.Store(model, true)
			}
		}()
	}
	resp, err := c.c.CreateEmbeddings(ctx, req)
	if err != nil {
		return nil, classify(err, h)
	}
	if len(resp.Data) != len(texts) {
		return nil, &provider.Error{Provider: name, Retryable: true, Msg: fmt.Sprintf("asked for %d embeddings, got %d", len(texts), len(resp.Data))}
	}
	out := &provider.Embeddings{Model: string(resp.Model), Tokens: int64(resp.Usage.TotalTokens), Vectors: make([][]float32, len(texts))}
	if out.Model == "" {
		out.Model = model
	}
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(texts) {
			return nil, &provider.Error{Provider: name, Retryable: true, Msg: fmt.Sprintf("embedding index %d out of range", d.Index)}
		}
		out.Vectors[d.Index] = d.Embedding
	}
	return out, nil
}

// Generate runs one chat completion.
func (c *Client) Generate(ctx context.Context, req provider.GenerateRequest) (*provider.Generation, error) {
	var msgs []openai.ChatCompletionMessage
	if req.SystemPrompt != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: req.SystemPrompt})
	}
	msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: req.Prompt})
	//lint:ignore SA1019 max_tokens is what OpenAI-compatible servers (Ollama, vLLM, llama.cpp) read; max_completion_tokens is OpenAI's own
	creq := openai.ChatCompletionRequest{Model: req.Model, Messages: msgs, MaxTokens: req.MaxTokens}
	if req.Temperature != nil {
		creq.Temperature = *req.Temperature
	}
	var h http.Header
	resp, err := c.c.CreateChatCompletion(context.WithValue(ctx, headerKey{}, &h), creq)
	if err != nil {
		return nil, classify(err, h)
	}
	if len(resp.Choices) == 0 {
		return nil, &provider.Error{Provider: name, Retryable: true, Msg: "response has no choices"}
	}
	return &provider.Generation{Text: resp.Choices[0].Message.Content, Model: resp.Model,
		PromptTokens: int64(resp.Usage.PromptTokens), CompletionTokens: int64(resp.Usage.CompletionTokens)}, nil
}

func chatMessages(in []provider.Message) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, 0, len(in))
	for _, m := range in {
		cm := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name}
		for _, tc := range m.ToolCalls {
			cm.ToolCalls = append(cm.ToolCalls, openai.ToolCall{ID: tc.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
		}
		out = append(out, cm)
	}
	return out
}

// Chat runs one chat completion with tools; with OnDelta it streams.
func (c *Client) Chat(ctx context.Context, req provider.ChatRequest) (*provider.ChatResponse, error) {
	//lint:ignore SA1019 max_tokens is what OpenAI-compatible servers (Ollama, vLLM, llama.cpp) read; max_completion_tokens is OpenAI's own
	creq := openai.ChatCompletionRequest{Model: req.Model, Messages: chatMessages(req.Messages), MaxTokens: req.MaxTokens}
	if req.Temperature != nil {
		creq.Temperature = *req.Temperature
	}
	for _, f := range req.Tools {
		creq.Tools = append(creq.Tools, openai.Tool{Type: openai.ToolTypeFunction,
			Function: &openai.FunctionDefinition{Name: f.Name, Description: f.Description, Parameters: f.Parameters}})
	}
	if len(creq.Tools) > 0 {
		switch req.ToolChoice {
		case "":
		case "auto", "none", "required":
			creq.ToolChoice = req.ToolChoice
		default: // one function by name
			creq.ToolChoice = openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: req.ToolChoice}}
		}
		if req.ParallelToolCalls != nil {
			creq.ParallelToolCalls = *req.ParallelToolCalls
		}
	}
	if req.JSON {
		creq.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
		if req.Schema != nil {
			raw, err := json.Marshal(req.Schema)
			if err != nil {
				return nil, &provider.Error{Provider: name, Msg: "the response schema is not JSON: " + err.Error(), Err: err}
			}
			schemaName := req.SchemaName
			if schemaName == "" {
				schemaName = "response"
			}
			creq.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
				JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: schemaName, Schema: json.RawMessage(raw), Strict: true}}
		}
	}
	var h http.Header
	ctx = context.WithValue(ctx, headerKey{}, &h)
	if req.OnDelta == nil {
		resp, err := c.c.CreateChatCompletion(ctx, creq)
		if err != nil {
			return nil, classify(err, h)
		}
		if len(resp.Choices) == 0 {
			return nil, &provider.Error{Provider: name, Retryable: true, Msg: "response has no choices"}
		}
		ch := resp.Choices[0]
		out := &provider.ChatResponse{Text: ch.Message.Content, FinishReason: string(ch.FinishReason), Model: resp.Model,
			PromptTokens: int64(resp.Usage.PromptTokens), CompletionTokens: int64(resp.Usage.CompletionTokens)}
		for _, tc := range ch.Message.ToolCalls {
			out.ToolCalls = append(out.ToolCalls, provider.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		return out, nil
	}
	creq.Stream = true
	creq.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	stream, err := c.c.CreateChatCompletionStream(ctx, creq)
	if err != nil {
		return nil, classify(err, h)
	}
	defer func() { _ = stream.Close() }() // the answer is read by then
	out := &provider.ChatResponse{Model: req.Model}
	var text strings.Builder
	calls := map[int]*provider.ToolCall{}
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, classify(err, h)
		}
		if chunk.Model != "" {
			out.Model = chunk.Model
		}
		if chunk.Usage != nil {
			out.PromptTokens, out.CompletionTokens = int64(chunk.Usage.PromptTokens), int64(chunk.Usage.CompletionTokens)
		}
		for _, ch := range chunk.Choices {
			if ch.Delta.Content != "" {
				text.WriteString(ch.Delta.Content)
				req.OnDelta(text.String())
			}
			for _, tc := range ch.Delta.ToolCalls {
				i := len(calls)
				if tc.Index != nil {
					i = *tc.Index
				}
				cur := calls[i]
				if cur == nil {
					cur = &provider.ToolCall{}
					calls[i] = cur
				}
				if tc.ID != "" {
					cur.ID = tc.ID
				}
				if tc.Function.Name != "" {
					cur.Name += tc.Function.Name
				}
				cur.Arguments += tc.Function.Arguments
			}
			if ch.FinishReason != "" {
				out.FinishReason = string(ch.FinishReason)
			}
		}
	}
	out.Text = text.String()
	if out.FinishReason == "" && out.Text == "" && len(calls) == 0 {
		return nil, &provider.Error{Provider: name, Retryable: true, Msg: "malformed response: the stream ended before the model finished"}
	}
	for i := 0; i < len(calls)+8 && len(out.ToolCalls) < len(calls); i++ {
		if tc, ok := calls[i]; ok {
			out.ToolCalls = append(out.ToolCalls, *tc)
		}
	}
	return out, nil
}
