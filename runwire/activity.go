package runwire

import (
	"encoding/json"
	"strings"
)

// StepOfActivity returns the step id an activity id names ("" for ids weft did not choose). The
// interpreter names a step's activities "step#1", "step[2]#3" inside forEach and "step/CALL#1"
// for an agent's tool call.
func StepOfActivity(id string) string {
	head, _, ok := strings.Cut(id, "#")
	if !ok {
		return ""
	}
	head, _, _ = strings.Cut(head, "/")
	head, _, _ = strings.Cut(head, "[")
	return head
}

// ModelCallConversation is the conversation an agent's model call (the input of its llm
// activity) holds: its messages, or those system, messages, prompt and context make, the
// conversation starting from system, prompt and context when the step gave no messages. The
// interpreter builds each call's conversation with it; weft fork reads a failed agent's
// conversation from the input of its last model call.
func ModelCallConversation(in map[string]any) []any {
	if m, ok := in["messages"].([]any); ok && in["prompt"] == nil {
		return m
	}
	var out []any
	if s, _ := in["system"].(string); s != "" {
		out = append(out, map[string]any{"role": "system", "content": s})
	}
	if m, ok := in["messages"].([]any); ok {
		out = append(out, m...)
	}
	prompt, _ := in["prompt"].(string)
	if c := in["context"]; c != nil {
		if ctxText := ContextText(c); ctxText != "" {
			prompt += "\n\nContext:\n" + ctxText
		}
	}
	if prompt != "" {
		out = append(out, map[string]any{"role": "user", "content": prompt})
	}
	return out
}

// ContextText is a model call's context as the model reads it (the llm activity renders
// documents the same way; strings pass through, other values as JSON).
func ContextText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	j, _ := json.Marshal(v)
	return string(j)
}
