package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.temporal.io/sdk/activity"

	"github.com/weftworks/weft/activities/provider"
	"github.com/weftworks/weft/activities/toolspec"
)

// MaxAnswerBytes is the largest model answer weft keeps: answers go into workflow history, whose
// payloads Temporal limits to 2 MB.
const MaxAnswerBytes = 512 << 10

// deltaEvery is how often the streamed text is published at most.
const deltaEvery = 250 * time.Millisecond

// keepaliveEvery is how often a running llm call heartbeats when no text arrives.
const keepaliveEvery = 5 * time.Second

// chatModel resolves the model of an llm call: the step's model or alias, else WEFT_CHAT_MODEL.
func (t *Tools) chatModel(in map[string]any) (string, error) {
	model := str(in, "model")
	if model == "" {
		model = t.cfg.ChatModel
	}
	if alias, ok := t.cfg.ModelAliases[model]; ok {
		model = alias
	}
	if model == "" {
		return "", &ConfigError{Msg: "no chat model: set WEFT_CHAT_MODEL, or the step's \"model\" input (a model name or an alias from WEFT_MODEL_ALIASES)"}
	}
	return model, nil
}

// chatMessages builds the conversation: the step's messages, or system + prompt (+ context).
func chatMessages(in map[string]any) ([]provider.Message, error) {
	var out []provider.Message
	if s := str(in, "system"); s != "" {
		out = append(out, provider.Message{Role: "system", Content: s})
	}
	raw, _ := in["messages"].([]any)
	for i, m := range raw {
		mm, _ := m.(map[string]any)
		msg := provider.Message{Role: str(mm, "role"), Content: str(mm, "content"), ToolCallID: str(mm, "toolCallId"), Name: str(mm, "name")}
		calls, _ := mm["toolCalls"].([]any)
		for _, c := range calls {
			cm, _ := c.(map[string]any)
			msg.ToolCalls = append(msg.ToolCalls, provider.ToolCall{ID: str(cm, "id"), Name: str(cm, "name"), Arguments: str(cm, "arguments")})
		}
		if msg.Role == "tool" && msg.ToolCallID == "" {
			return nil, &InputError{Msg: fmt.Sprintf("messages[%d]: a tool message needs toolCallId", i)}
		}
		out = append(out, msg)
	}
	if p := str(in, "prompt"); p != "" {
		if c := renderContext(in["context"]); c != "" {
			p += "\n\nContext:\n" + c
		}
		out = append(out, provider.Message{Role: "user", Content: p})
	}
	if len(out) == 0 || (len(out) == 1 && out[0].Role == "system") {
		return nil, &InputError{Msg: "give prompt or messages: the model needs something to answer"}
	}
	return out, nil
}

func chatFunctions(in map[string]any) ([]provider.Function, error) {
	raw, _ := in["tools"].([]any)
	var out []provider.Function
	for i, t := range raw {
		m, ok := t.(map[string]any)
		if !ok {
			return nil, &InputError{Msg: fmt.Sprintf("tools[%d]: %v is a tool name; names are turned into definitions by the workflow, so pass {name, description, parameters} here", i, t)}
		}
		params := m["parameters"]
		if params == nil {
			params = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		out = append(out, provider.Function{Name: str(m, "name"), Description: str(m, "description"), Parameters: params})
	}
	return out, nil
}

// responseSchema returns whether a JSON answer is wanted and the schema it must satisfy.
func responseSchema(in map[string]any) (bool, *jsonschema.Schema, error) {
	switch rf := in["responseFormat"].(type) {
	case nil:
		return false, nil, nil
	case string:
		return rf == "json", nil, nil
	case map[string]any:
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		if err := c.AddResource("weft://response.json", rf); err != nil {
			return true, nil, &InputError{Msg: "responseFormat: " + err.Error()}
		}
		sch, err := c.Compile("weft://response.json")
		if err != nil {
			return true, nil, &InputError{Msg: "responseFormat is not a valid JSON Schema: " + err.Error()}
		}
		return true, sch, nil
	}
	return false, nil, nil
}

// parseAnswer parses a JSON answer (tolerating a ```json fence) and validates it.
func parseAnswer(text string, sch *jsonschema.Schema) (any, error) {
	s := strings.TrimSpace(text)
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(s, "```json")
		s = strings.TrimPrefix(s, "```")
		s = strings.TrimSuffix(strings.TrimSpace(s), "```")
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
	if err != nil {
		return nil, fmt.Errorf("the answer is not valid JSON: %v", err)
	}
	if sch != nil {
		if err := sch.Validate(v); err != nil {
			return nil, fmt.Errorf("the answer does not satisfy the schema: %v", err)
		}
	}
	// Plain JSON values (json.Number becomes float64) for history and templates.
	var out any
	_ = json.Unmarshal([]byte(s), &out)
	return out, nil
}

// llm runs one chat completion (plus up to maxRepairs retries of an answer that is not the JSON
// asked for, each telling the model what was wrong). It streams: the text so far is published
// as the activity's heartbeat details, which clients read while the call runs.
func (t *Tools) llm(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
	if t.openai == nil {
		return nil, nil, &ConfigError{Msg: "no LLM configured on this worker: set OPENAI_BASE_URL (OpenAI, Ollama, vLLM, LM Studio, llama.cpp, OpenRouter) and OPENAI_API_KEY if it needs one where the worker runs (weft dev or weft worker's environment), then restart it"}
	}
	model, err := t.chatModel(in)
	if err != nil {
		return nil, nil, err
	}
	msgs, err := chatMessages(in)
	if err != nil {
		return nil, nil, err
	}
	fns, err := chatFunctions(in)
	if err != nil {
		return nil, nil, err
	}
	wantJSON, sch, err := responseSchema(in)
	if err != nil {
		return nil, nil, err
	}
	req := provider.ChatRequest{Model: model, Messages: msgs, Tools: fns, ToolChoice: str(in, "toolChoice"), MaxTokens: num(in, "maxTokens", 0), JSON: wantJSON && len(fns) == 0}
	if schema, ok := in["responseFormat"].(map[string]any); ok && req.JSON {
		req.Schema, req.SchemaName = schema, schemaName(schema)
	}
	if f, ok := in["temperature"].(float64); ok {
		t32 := float32(f)
		req.Temperature = &t32
	}
	if b, ok := in["parallelToolCalls"].(bool); ok {
		req.ParallelToolCalls = &b
	}
	if activity.IsActivity(ctx) {
		// The text so far is the heartbeat's details: the SDK sends the newest at most once per
		// throttle interval (the worker sets it to a second), and clients read it while the call
		// runs. A keepalive heartbeats while the model has not started answering, so the
		// heartbeat timeout notices a dead worker in seconds, not after the call's 5 minutes.
		var mu sync.Mutex
		text := ""
		var sent time.Time
		req.OnDelta = func(t string) {
			mu.Lock()
			text = t
			due := time.Since(sent) >= deltaEvery
			if due {
				sent = time.Now()
			}
			mu.Unlock()
			// Encoding the details costs the text's length: publish a few times a second, not
			// per token (a long answer streamed token by token would cost its length squared).
			if due {
				activity.RecordHeartbeat(ctx, t)
			}
		}
		done := make(chan struct{})
		defer close(done)
		go func() {
			tick := time.NewTicker(keepaliveEvery)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
					mu.Lock()
					t := text
					mu.Unlock()
					activity.RecordHeartbeat(ctx, t)
				}
			}
		}()
	}
	usage := &toolspec.Usage{}
	// billed is what the calls made so far cost: a failure after billed calls (a repair that
	// never gave valid JSON, an answer too long, a provider error on a repair) returns it with
	// the error, so the step, the run and the chat still count every call the provider billed.
	billed := func() *toolspec.Usage {
		usage.TotalTokens = usage.PromptTokens + usage.CompletionTokens
		usage.CostUSD = t.prices.Cost(usage.Model, model, usage.PromptTokens, usage.CompletionTokens)
		if usage.TotalTokens == 0 && usage.CostUSD == 0 {
			return nil
		}
		return usage
	}
	repairs := num(in, "maxRepairs", 2)
	var resp *provider.ChatResponse
	var parsed any
	var warnings []string
	for attempt := 0; ; attempt++ {
		resp, err = t.openai.Chat(ctx, req)
		var perr *provider.Error
		if err != nil && req.Schema != nil && errors.As(err, &perr) && perr.Status == http.StatusBadRequest {
			// a provider that does not take response_format json_schema (or not this schema in
			// strict mode): ask for json_object once, and check the answer against the schema here
			warnings = append(warnings, fmt.Sprintf("the provider refused response_format json_schema (%v); asked for json_object instead, the answer is checked against the schema by weft", err))
			req.Schema = nil
			resp, err = t.openai.Chat(ctx, req)
		}
		if err != nil {
			return nil, billed(), err
		}
		usage.PromptTokens += resp.PromptTokens
		usage.CompletionTokens += resp.CompletionTokens
		usage.Model = resp.Model
		if len(resp.Text) > MaxAnswerBytes {
			return nil, billed(), &InputError{Msg: fmt.Sprintf("the model's answer is %d KiB, over the %d KiB weft keeps in history: lower maxTokens or ask for a shorter answer", len(resp.Text)>>10, MaxAnswerBytes>>10)}
		}
		if !wantJSON || len(resp.ToolCalls) > 0 {
			break
		}
		parsed, err = parseAnswer(resp.Text, sch)
		if err == nil {
			break
		}
		if attempt >= repairs {
			return nil, billed(), &InputError{Msg: fmt.Sprintf("no valid answer after %d repairs: %v", repairs, err)}
		}
		req.Messages = append(req.Messages, provider.Message{Role: "assistant", Content: resp.Text},
			provider.Message{Role: "user", Content: fmt.Sprintf("Your answer was not usable: %v. Answer again with only the JSON.", err)})
	}
	billed()
	calls := make([]any, 0, len(resp.ToolCalls))
	for _, tc := range resp.ToolCalls {
		calls = append(calls, map[string]any{"id": tc.ID, "name": tc.Name, "arguments": tc.Arguments})
	}
	answerModel := resp.Model
	if answerModel == "" {
		answerModel = model
	}
	out := map[string]any{"text": resp.Text, "json": parsed, "toolCalls": calls, "finishReason": resp.FinishReason, "model": answerModel,
		"usage": map[string]any{"promptTokens": usage.PromptTokens, "completionTokens": usage.CompletionTokens, "totalTokens": usage.TotalTokens, "costUsd": usage.CostUSD}}
	if len(warnings) > 0 {
		out["warnings"] = warnings
	}
	return out, usage, nil
}

// schemaName is the name sent with a json_schema response format: the schema's title when it
// fits the providers' rule (letters, digits, _ and -, up to 64), else "response".
func schemaName(schema map[string]any) string {
	title, _ := schema["title"].(string)
	if title == "" || len(title) > 64 {
		return "response"
	}
	for _, r := range title {
		if !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "response"
		}
	}
	return title
}
