package fakellm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Reply is one scripted answer.
type Reply struct {
	// Text is the assistant's content.
	Text string
	// Calls are tool calls: name and the arguments JSON text, sent as the model sends them (even
	// when malformed).
	Calls []Call
	// Status, when not 0 or 200, answers with that HTTP status and an OpenAI error body.
	Status int
	// RetryAfter is the Retry-After header of a 429 or 5xx.
	RetryAfter string
	// Malformed answers 200 with a body that is not JSON.
	Malformed bool
	// PromptTokens and CompletionTokens are reported as usage (defaults 10 and 5).
	PromptTokens, CompletionTokens int
	// ChunkDelay is slept before each streamed text chunk (a model that takes its time).
	ChunkDelay time.Duration
}

// Call is a tool call in a reply.
type Call struct {
	ID        string
	Name      string
	Arguments string
}

// Text is a final answer.
func Text(s string) Reply { return Reply{Text: s} }

// ToolCall asks for one tool call.
func ToolCall(id, name, arguments string) Reply {
	return Reply{Calls: []Call{{ID: id, Name: name, Arguments: arguments}}}
}

// Error answers with an HTTP error.
func Error(status int, retryAfter string) Reply { return Reply{Status: status, RetryAfter: retryAfter} }

// Request is what the fake received.
type Request struct {
	Model    string
	Stream   bool
	Messages []map[string]any
	Tools    []map[string]any
	// ResponseFormat is the response_format sent (nil when none): {"type": "json_object"}, or
	// {"type": "json_schema", "json_schema": {"name", "schema", "strict"}}.
	ResponseFormat map[string]any
	Body           map[string]any
}

// Server is the fake endpoint. BaseURL is what OPENAI_BASE_URL should be.
type Server struct {
	*httptest.Server
	BaseURL string

	mu       sync.Mutex
	script   []Reply
	next     int
	requests []Request
	// Respond, when set, answers instead of the script (a model that never stops, for example).
	Respond func(req Request) Reply
	// Sent, when set, is told the streamed text so far right after each text chunk is flushed
	// (latency measurements).
	Sent func(textSoFar string)
}

// New starts a fake that answers with the script, in order. When the script is exhausted it
// answers 500 "script exhausted", so a test that makes more calls than it planned fails loudly.
func New(script ...Reply) *Server {
	s := &Server{script: script}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	s.BaseURL = s.URL + "/v1"
	return s
}

// Requests returns the chat requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Count is the number of chat requests received.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func fail(w http.ResponseWriter, status int, retryAfter, msg string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%q,"type":"server_error","code":null}}`, msg)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		fail(w, 404, "", "unknown endpoint "+r.URL.Path)
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		fail(w, 400, "", "body is not JSON: "+err.Error())
		return
	}
	req := Request{Body: body}
	req.Model, _ = body["model"].(string)
	req.Stream, _ = body["stream"].(bool)
	req.Messages = append(req.Messages, asList(body["messages"])...)
	req.Tools = append(req.Tools, asList(body["tools"])...)
	req.ResponseFormat, _ = body["response_format"].(map[string]any)
	s.mu.Lock()
	s.requests = append(s.requests, req)
	if msg := unanswered(req.Messages); msg != "" {
		s.mu.Unlock()
		fail(w, 400, "", msg)
		return
	}
	var reply Reply
	switch {
	case s.Respond != nil:
		s.mu.Unlock()
		reply = s.Respond(req)
		s.mu.Lock()
	case s.next < len(s.script):
		reply = s.script[s.next]
		s.next++
	default:
		s.mu.Unlock()
		fail(w, 500, "", fmt.Sprintf("fakellm: script exhausted after %d replies", len(s.script)))
		return
	}
	s.mu.Unlock()
	if reply.Status != 0 && reply.Status != 200 {
		fail(w, reply.Status, reply.RetryAfter, fmt.Sprintf("scripted HTTP %d", reply.Status))
		return
	}
	if reply.Malformed && req.Stream {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"id\": \"chatcmpl-x\", \"choices\": [ {\"delta\": \n\n")
		return
	}
	if reply.Malformed {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id": "chatcmpl-x", "choices": [ {"message": `)
		return
	}
	if reply.PromptTokens == 0 {
		reply.PromptTokens = 10
	}
	if reply.CompletionTokens == 0 {
		reply.CompletionTokens = 5
	}
	if req.Stream {
		s.stream(w, req, reply)
		return
	}
	msg := map[string]any{"role": "assistant", "content": reply.Text}
	finish := "stop"
	if len(reply.Calls) > 0 {
		msg["tool_calls"] = toolCalls(reply.Calls, false)
		finish = "tool_calls"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": reply.PromptTokens, "completion_tokens": reply.CompletionTokens, "total_tokens": reply.PromptTokens + reply.CompletionTokens},
	})
}

func toolCalls(calls []Call, indexed bool) []any {
	var out []any
	for i, c := range calls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		tc := map[string]any{"id": id, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Arguments}}
		if indexed {
			tc["index"] = i
		}
		out = append(out, tc)
	}
	return out
}

// stream sends the reply as OpenAI's server-sent events: the text in small pieces, tool calls,
// the finish reason, a usage chunk, then [DONE].
func (s *Server) stream(w http.ResponseWriter, req Request, reply Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	words := strings.SplitAfter(reply.Text, " ")
	var soFar strings.Builder // not a string +=: a long answer's pieces would cost its length squared
	for _, piece := range words {
		if piece != "" {
			time.Sleep(reply.ChunkDelay)
			send(chunk(map[string]any{"content": piece}, nil))
			soFar.WriteString(piece)
			if s.Sent != nil {
				s.Sent(soFar.String())
			}
		}
	}
	finish := "stop"
	if len(reply.Calls) > 0 {
		finish = "tool_calls"
		for i, tc := range toolCalls(reply.Calls, true) {
			m := tc.(map[string]any)
			fn := m["function"].(map[string]any)
			args := fn["arguments"].(string)
			half := len(args) / 2
			// Arguments arrive in two pieces, as real endpoints split them.
			send(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": m["id"], "type": "function", "function": map[string]any{"name": fn["name"], "arguments": args[:half]}}}}, nil))
			send(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": args[half:]}}}}, nil))
		}
	}
	send(chunk(map[string]any{}, finish))
	send(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": req.Model, "choices": []any{},
		"usage": map[string]any{"prompt_tokens": reply.PromptTokens, "completion_tokens": reply.CompletionTokens, "total_tokens": reply.PromptTokens + reply.CompletionTokens}})
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

func asList(v any) []map[string]any {
	list, _ := v.([]any)
	var out []map[string]any
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// unanswered is OpenAI's 400 for a conversation with an assistant message whose tool calls are
// not each answered by a tool message right after it ("": the conversation is one it takes).
func unanswered(msgs []map[string]any) string {
	for i, m := range msgs {
		if m["role"] != "assistant" {
			continue
		}
		answered := map[string]bool{}
		for _, next := range msgs[i+1:] {
			if next["role"] != "tool" {
				break
			}
			id, _ := next["tool_call_id"].(string)
			answered[id] = true
		}
		var missing []string
		for _, c := range asList(m["tool_calls"]) {
			if id, _ := c["id"].(string); !answered[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return fmt.Sprintf("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s (messages[%d])", strings.Join(missing, ", "), i)
		}
	}
	return ""
}
