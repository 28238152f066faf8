package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weftworks/weft/activities/provider"
	"github.com/weftworks/weft/activities/toolspec"
)

// renderContext turns generate's context input into prompt text: a string as is, result
// objects as numbered passages ("[1] source: content"), anything else as JSON.
func renderContext(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case map[string]any:
		if r, ok := x["results"].([]any); ok {
			return renderContext(r)
		}
	case []any:
		var b strings.Builder
		for i, item := range x {
			fmt.Fprintf(&b, "[%d] ", i+1)
			switch it := item.(type) {
			case string:
				b.WriteString(it)
			case map[string]any:
				if s, ok := it["source"].(string); ok && s != "" {
					b.WriteString(s + ": ")
				} else if p, ok := it["path"].(string); ok && p != "" {
					b.WriteString(codeCitation(p, it) + ": ") // a code tool's result: file:lines to cite
				}
				switch {
				case it["content"] != nil:
					fmt.Fprint(&b, it["content"])
				case it["text"] != nil:
					fmt.Fprint(&b, it["text"])
				default:
					j, _ := json.Marshal(it)
					b.Write(j)
				}
			default:
				j, _ := json.Marshal(it)
				b.Write(j)
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	j, _ := json.Marshal(v)
	return string(j)
}

func init() { bind(toolspec.Generate, (*Tools).generate) }

// emptyContext is the warning of a model call whose context was given but came out empty (a
// search that found nothing, a filter that kept nothing): the model answered from the prompt
// alone, which finished green with nothing said.
func emptyContext(c any) []string {
	if c == nil || renderContext(c) != "" {
		return nil
	}
	return []string{"the context came out empty (" + describeEmpty(c) + "): the model answered from the prompt alone"}
}

func describeEmpty(c any) string {
	switch c.(type) {
	case string:
		return "an empty text"
	case []any:
		return "an empty list"
	case map[string]any:
		return "no results"
	}
	return "nothing to show"
}

func (t *Tools) generate(ctx context.Context, in toolspec.GenerateIn) (toolspec.GenerateOut, *toolspec.Usage, error) {
	var none toolspec.GenerateOut
	if t.openai == nil {
		return none, nil, &ConfigError{Msg: "no LLM configured on this worker: set OPENAI_BASE_URL (OpenAI, Ollama, vLLM, OpenRouter), OPENAI_API_KEY if it needs one, and WEFT_CHAT_MODEL where the worker runs (weft dev or weft worker's environment), then restart it"}
	}
	model := in.Model
	if model == "" {
		model = t.cfg.ChatModel
	}
	if model == "" {
		return none, nil, &ConfigError{Msg: "no chat model: set WEFT_CHAT_MODEL or the step's \"model\" input"}
	}
	prompt := in.Prompt
	if c := renderContext(in.Context); c != "" {
		prompt += "\n\nContext:\n" + c
	}
	req := provider.GenerateRequest{Model: model, SystemPrompt: in.SystemPrompt, Prompt: prompt, MaxTokens: in.MaxTokens}
	if in.Temperature != nil {
		t32 := float32(*in.Temperature)
		req.Temperature = &t32
	}
	g, err := t.openai.Generate(ctx, req)
	if err != nil {
		return none, nil, err
	}
	usage := &toolspec.Usage{PromptTokens: g.PromptTokens, CompletionTokens: g.CompletionTokens, TotalTokens: g.PromptTokens + g.CompletionTokens, Model: g.Model}
	usage.CostUSD = t.prices.Cost(g.Model, model, g.PromptTokens, g.CompletionTokens)
	return toolspec.GenerateOut{Text: g.Text, Model: g.Model, Usage: toolspec.TokenUsage{PromptTokens: g.PromptTokens,
		CompletionTokens: g.CompletionTokens, TotalTokens: usage.TotalTokens, CostUSD: usage.CostUSD}, Warnings: emptyContext(in.Context)}, usage, nil
}
