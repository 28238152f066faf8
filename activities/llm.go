package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
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
const deltaEvery = 50 * time.Millisecond

// keepaliveEvery is how often a running llm call heartbeats when no text arrives.
const keepaliveEvery = 5 * time.Second

// chatModel resolves the model of an llm call: the step's model or alias, else WEFT_CHAT_MODEL.
func (t *Tools) chatModel(in toolspec.LLMIn) (string, error) {
	model := in.Model
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
func chatMessages(in toolspec.LLMIn) ([]provider.Message, error) {
	var out []provider.Message
	if in.System != "" {
		out = append(out, provider.Message{Role: "system", Content: in.System})
	}
	for i, m := range in.Messages {
		msg := provider.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, provider.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		if msg.Role == "tool" && msg.ToolCallID == "" {
			return nil, &InputError{Msg: fmt.Sprintf("messages[%d]: a tool message needs toolCallId", i)}
		}
		out = append(out, msg)
	}
	if p := in.Prompt; p != "" {
		if c := renderContext(in.Context); c != "" {
			p += "\n\nContext:\n" + c
		}
		out = append(out, provider.Message{Role: "user", Content: p})
	}
	if len(out) == 0 || (len(out) == 1 && out[0].Role == "system") {
		return nil, &InputError{Msg: "give prompt or messages: the model needs something to answer"}
	}
	return out, nil
}

func chatFunctions(in toolspec.LLMIn) ([]provider.Function, error) {
	var out []provider.Function
	for i, t := range in.Tools {
		m, ok := t.(map[string]any)
		if !ok {
			if name, ok := t.(string); ok {
				return nil, &InputError{Msg: fmt.Sprintf("tools[%d]: %q is a tool name; names are turned into definitions by the workflow, so pass {name, description, parameters} here", i, name)}
			}
			return nil, &InputError{Msg: fmt.Sprintf("tools[%d] is %s: pass a tool as {name, description, parameters}", i, filterValueKind(t))}
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
func responseSchema(in toolspec.LLMIn) (bool, *jsonschema.Schema, error) {
	switch rf := in.ResponseFormat.(type) {
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
func init() { bind(toolspec.Completion, (*Tools).llm) }

func (t *Tools) llm(ctx context.Context, in toolspec.LLMIn) (toolspec.LLMOut, *toolspec.Usage, error) {
	var none toolspec.LLMOut
	if t.openai == nil {
		return none, nil, &ConfigError{Msg: "no LLM configured on this worker: set OPENAI_BASE_URL (OpenAI, Ollama, vLLM, LM Studio, llama.cpp, OpenRouter) and OPENAI_API_KEY if it needs one where the worker runs (weft dev or weft worker's environment), then restart it"}
	}
	model, err := t.chatModel(in)
	if err != nil {
		return none, nil, err
	}
	msgs, err := chatMessages(in)
	if err != nil {
		return none, nil, err
	}
	fns, err := chatFunctions(in)
	if err != nil {
		return none, nil, err
	}
	wantJSON, sch, err := responseSchema(in)
	if err != nil {
		return none, nil, err
	}
	req := provider.ChatRequest{Model: model, Messages: msgs, Tools: fns, ToolChoice: in.ToolChoice, MaxTokens: in.MaxTokens, JSON: wantJSON}
	// OpenAI takes response_format together with tools: the schema binds the final answer, and
	// tool calls are answered as usual.
	if schema, ok := in.ResponseFormat.(map[string]any); ok && req.JSON {
		req.Schema, req.SchemaName = schema, schemaName(schema)
	}
	if in.Temperature != nil {
		t32 := float32(*in.Temperature)
		req.Temperature = &t32
	}
	req.ParallelToolCalls = in.ParallelToolCalls
	if activity.IsActivity(ctx) {
		// The text so far is the heartbeat's details: the SDK sends the newest at most once per
		// throttle interval (the worker sets it to deltaEvery), and clients read it while the call
		// runs; the keepalive lets the heartbeat timeout notice a dead worker in seconds, not
		// after the call's 5 minutes.
		pub := newTextPublisher(deltaEvery, keepaliveEvery, func(text string) { activity.RecordHeartbeat(ctx, text) })
		defer pub.stop()
		req.OnDelta = pub.delta
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
	repairs := in.MaxRepairs
	var resp *provider.ChatResponse
	var parsed any
	warnings := emptyContext(in.Context)
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
			return none, billed(), err
		}
		countRequests(ctx, 1) // billed: the provider answered
		usage.PromptTokens += resp.PromptTokens
		usage.CompletionTokens += resp.CompletionTokens
		usage.Model = resp.Model
		if len(resp.Text) > MaxAnswerBytes {
			return none, billed(), &InputError{Msg: fmt.Sprintf("the model's answer is %d KiB, over the %d KiB weft keeps in history: lower maxTokens or ask for a shorter answer", len(resp.Text)>>10, MaxAnswerBytes>>10)}
		}
		if !wantJSON || len(resp.ToolCalls) > 0 {
			break
		}
		parsed, err = parseAnswer(resp.Text, sch)
		if err == nil {
			break
		}
		if attempt >= repairs {
			return none, billed(), &InputError{Msg: fmt.Sprintf("no valid answer after %d repairs: %v", repairs, err)}
		}
		req.Messages = append(req.Messages, provider.Message{Role: "assistant", Content: resp.Text},
			provider.Message{Role: "user", Content: fmt.Sprintf("Your answer was not usable: %v. Answer again with only the JSON that satisfies the response schema.", err)})
	}
	billed()
	calls := make([]toolspec.ChatToolCall, 0, len(resp.ToolCalls))
	for _, tc := range resp.ToolCalls {
		calls = append(calls, toolspec.ChatToolCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
	}
	answerModel := resp.Model
	if answerModel == "" {
		answerModel = model
	}
	return toolspec.LLMOut{Text: resp.Text, JSON: parsed, ToolCalls: calls, FinishReason: resp.FinishReason, Model: answerModel,
		Usage:    toolspec.TokenUsage{PromptTokens: usage.PromptTokens, CompletionTokens: usage.CompletionTokens, TotalTokens: usage.TotalTokens, CostUSD: usage.CostUSD},
		Warnings: warnings}, usage, nil
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
