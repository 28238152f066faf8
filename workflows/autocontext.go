package workflows

import (
	"encoding/json"

	"github.com/weftworks/weft/activities/toolspec"
)

// autoContextNoise are the keys of a model call's output that say how the answer was made, not
// what it says: "context": "auto" leaves them out.
var autoContextNoise = map[string]bool{"usage": true, "model": true, "finishReason": true}

// autoContextText is what "context": "auto" hands the next model of one upstream output: the text
// of an llm, agent or generate answer (its JSON when a structured answer has no text); a string as
// is; any other output as compact JSON without usage, model and finishReason. A model's answer is
// known from the tool's declaration (the generation category: llm, agent, generate), not its name.
func autoContextText(spec *toolspec.Spec, out any) string {
	if s, ok := out.(string); ok {
		return s
	}
	m, isMap := out.(map[string]any)
	if isMap {
		text, hasText := m["text"].(string)
		isModel := spec != nil && spec.Category() == toolspec.CategoryGeneration
		switch {
		case isModel && text == "" && m["json"] != nil:
			return compactJSON(m["json"])
		case hasText && text != "" && (isModel || len(m) <= 4): // a model's answer, a template's text
			return text
		}
	}
	return compactJSON(withoutNoise(out))
}

// withoutNoise copies v without autoContextNoise keys at any depth.
func withoutNoise(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		//workflowcheck:ignore a copy; the result does not depend on map order (json.Marshal sorts keys)
		for k, e := range x {
			if !autoContextNoise[k] {
				out[k] = withoutNoise(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutNoise(e)
		}
		return out
	}
	return v
}

func compactJSON(v any) string {
	j, _ := json.Marshal(v)
	return string(j)
}
