package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"
)

// HandoffToolPrefix names a handoff among an agent's tool calls: "handoff:NAME".
const HandoffToolPrefix = "handoff:"

// handoff is an agent the conversation can be passed to (the agent's handoffs input).
type handoff struct {
	name, desc string
	agent      map[string]any
}

func parseHandoffs(v any) ([]handoff, error) {
	list, _ := v.([]any)
	var out []handoff
	seen := map[string]bool{}
	for i, e := range list {
		m, _ := e.(map[string]any)
		h := handoff{}
		h.name, _ = m["name"].(string)
		h.desc, _ = m["description"].(string)
		h.agent, _ = m["agent"].(map[string]any)
		if h.name == "" || functionName(h.name) != h.name {
			return nil, fmt.Errorf("handoffs[%d]: name %q: name a handoff with letters, digits, _ and -", i, h.name)
		}
		if seen[h.name] {
			return nil, fmt.Errorf("handoffs[%d]: %q is named twice: give each handoff its own name", i, h.name)
		}
		seen[h.name] = true
		if h.agent == nil {
			h.agent = map[string]any{}
		}
		out = append(out, h)
	}
	return out, nil
}

// handoffTool offers a handoff to the model as transfer_to_NAME. Calling it runs nothing: the
// loop passes the conversation to the handoff's agent after the turn.
type handoffTool struct{ h handoff }

func (t handoffTool) Name() string                    { return HandoffToolPrefix + t.h.name }
func (t handoffTool) FunctionName() string            { return functionName("transfer_to_" + t.h.name) }
func (t handoffTool) EditSchema() any                 { return map[string]any{"type": "object"} }
func (t handoffTool) Check(args map[string]any) error { return nil }
func (t handoffTool) Definition() map[string]any {
	desc := t.h.desc
	if desc == "" {
		desc = "Hand the conversation to the " + t.h.name + " agent, which continues it and answers."
	}
	return map[string]any{"name": t.FunctionName(), "description": desc, "parameters": map[string]any{"type": "object", "properties": map[string]any{}}}
}
func (t handoffTool) Call(workflow.Context, *run, *stepRun, map[string]any, string) (any, error) {
	return map[string]any{"assistant": t.h.name, "message": "Transferred to " + t.h.name + ", who continues the conversation."}, nil
}

// handedOff returns the handoff of the first completed transfer call of a turn (nil: none).
func handedOff(records []map[string]any, tools map[string]agentTool) *handoff {
	for _, rec := range records {
		if rec["status"] != StatusCompleted {
			continue
		}
		for _, t := range sortedTools(tools) {
			if ht, ok := t.(handoffTool); ok && rec["tool"] == ht.Name() {
				return &ht.h
			}
		}
	}
	return nil
}

// recordHandoff records that the agent of step sr passed the conversation from one agent to
// another in iteration iter.
func (r *run) recordHandoff(ctx workflow.Context, sr *stepRun, key string, iter int, from, to string) {
	r.record(ctx, RunEvent{Type: EventHandoff, Step: sr.cs.ID, Key: key, Iteration: int32(iter), From: from, To: to})
}

// handOff passes the conversation to h's agent: its model and settings where it sets them, its
// system prompt in place of the step's, its tools in place of the step's.
func handOff(llm map[string]any, h *handoff) {
	for _, k := range []string{"model", "temperature", "maxTokens", "responseFormat"} {
		if v, ok := h.agent[k]; ok {
			llm[k] = v
		}
	}
	msgs := messages(llm)
	kept := make([]any, 0, len(msgs)+1)
	if s, _ := h.agent["system"].(string); s != "" {
		kept = append(kept, map[string]any{"role": "system", "content": s})
	}
	for _, m := range msgs {
		if mm, _ := m.(map[string]any); mm["role"] == "system" {
			continue
		}
		kept = append(kept, m)
	}
	llm["messages"] = kept
	delete(llm, "prompt")
	delete(llm, "system")
	delete(llm, "context")
	delete(llm, "tools")
	delete(llm, "parallelToolCalls")
	delete(llm, "toolChoice")
}

// resetToolChoice is the handoff's agent's resetToolChoice (default true).
func (h *handoff) resetToolChoice() bool {
	b, ok := h.agent["resetToolChoice"].(bool)
	return b || !ok
}
