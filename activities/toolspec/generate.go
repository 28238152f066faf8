package toolspec

import "time"

func init() {
	register(&Spec{
		Name: "generate", Domain: "generate", Kind: KindActivity,
		Title:       "Generate text with an LLM",
		Description: "Send a prompt, optional context (text, or documents rendered as a numbered list) and a system prompt to the configured OpenAI-compatible chat endpoint. Fails with a clear error when no LLM is configured.",
		Input: `{"type":"object","required":["prompt"],"additionalProperties":false,"properties":{
		  "prompt":{"type":"string","minLength":1,"maxLength":200000},
		  "context":{},
		  "systemPrompt":{"type":"string","maxLength":50000},
		  "model":{"type":"string"},
		  "temperature":{"type":"number","minimum":0,"maximum":2},
		  "maxTokens":{"type":"integer","minimum":1,"maximum":200000}}}`,
		Output: `{"type":"object","properties":{"text":{"type":"string"},"model":{"type":"string"},
		  "usage":{"type":"object","properties":{"promptTokens":{"type":"integer"},"completionTokens":{"type":"integer"},"totalTokens":{"type":"integer"}}}}}`,
		Timeout:     5 * time.Minute,
		Aliases:     map[string]string{"system": "systemPrompt", "max_tokens": "maxTokens"},
		Annotations: Annotations{OpenWorld: true},
		Calls:       func(map[string]any) Calls { return Calls{LLM: 1} },
	})
}
