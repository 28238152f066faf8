package toolspec

import "time"

// Generate is one prompt to the configured chat model.
var Generate = Declare[GenerateIn, GenerateOut](&Spec{
	Name: "generate", Domain: "generate", Kind: KindActivity,
	Title:       "Generate text with an LLM",
	Description: "Send a prompt, optional context (text, or documents rendered as a numbered list) and a system prompt to the configured OpenAI-compatible chat endpoint. Fails with a clear error when no LLM is configured.",
	Timeout:     5 * time.Minute,
	Aliases:     map[string]string{"system": "systemPrompt", "max_tokens": "maxTokens"},
	Annotations: Annotations{OpenWorld: true},
	Calls:       func(map[string]any) Calls { return Calls{LLM: 1} },
})

// GenerateIn is generate's input.
type GenerateIn struct {
	Prompt       string   `json:"prompt" weft:"content,minLength=1,maxLength=200000"`
	Context      any      `json:"context,omitempty" weft:"content"`
	SystemPrompt string   `json:"systemPrompt,omitempty" weft:"maxLength=50000"`
	Model        string   `json:"model,omitempty"`
	Temperature  *float64 `json:"temperature,omitempty" weft:"min=0,max=2"`
	MaxTokens    int      `json:"maxTokens,omitempty" weft:"min=1,max=200000"`
}

// GenerateOut is generate's output.
type GenerateOut struct {
	Text  string     `json:"text" weft:"content"`
	Model string     `json:"model"`
	Usage TokenUsage `json:"usage"`
	// Warnings: the context given came out empty; lifted into the step's warnings.
	Warnings []string `json:"warnings,omitempty" jsonschema:"What a person should know of the answer (its context came out empty); lifted into the step's warnings"`
}

// TokenUsage is what a model call consumed, as tools report it in their output.
type TokenUsage struct {
	PromptTokens     int64   `json:"promptTokens"`
	CompletionTokens int64   `json:"completionTokens"`
	TotalTokens      int64   `json:"totalTokens"`
	CostUSD          float64 `json:"costUsd"`
}
