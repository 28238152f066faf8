package workflows

import (
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/workflow"
)

// HandoffToolPrefix names a handoff among an agent's tool calls: "handoff:NAME".
const HandoffToolPrefix = "handoff:"

// handoff is an agent the conversation can be passed to (the agent's handoffs input).
type handoff struct {
	name, desc string
	agent      map[string]any
	next       []string // the agents it can hand to (its agent's handoffs): handoff names, or the step's id
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
		next, _ := h.agent["handoffs"].([]any)
		for _, n := range next {
			if s, _ := n.(string); s != "" {
				h.next = append(h.next, s)
			}
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

// handoffSettings are the model settings an agent handed to may set; those it does not set are
// the step's.
var handoffSettings = []string{"model", "temperature", "maxTokens", "responseFormat"}

// stepAgent is the step's own agent as a handoff (named by the step's id), which an agent handed
// to may hand back to: the step's model settings, system prompt, tools, approvals and
// toolChoice, and every handoff of the step.
func stepAgent(id string, inputs map[string]any, system string, hands []handoff) handoff {
	agent := map[string]any{}
	for _, k := range append([]string{"tools", "approve", "toolChoice", "resetToolChoice"}, handoffSettings...) {
		if v, ok := inputs[k]; ok {
			agent[k] = v
		}
	}
	if system != "" {
		agent["system"] = system
	}
	h := handoff{name: id, agent: agent}
	for _, o := range hands {
		h.next = append(h.next, o.name)
	}
	return h
}

// transfers are the transfer tools of an agent that can hand to the agents named next (checked
// by handoffChains): the step's handoffs, or root, the step's own agent.
func transfers(next []string, hands []handoff, root *handoff) []agentTool {
	var out []agentTool
	for _, name := range next {
		if name == root.name {
			out = append(out, handoffTool{h: *root})
			continue
		}
		for _, h := range hands {
			if h.name == name {
				out = append(out, handoffTool{h: h})
			}
		}
	}
	return out
}

// handoffChains checks that the agents the step's handoffs hand to exist.
func handoffChains(stepID string, hands []handoff) error {
	names := []string{stepID}
	for _, h := range hands {
		names = append(names, h.name)
	}
	for _, h := range hands {
		for _, n := range h.next {
			if n == stepID {
				for _, o := range hands {
					if o.name == stepID {
						return fmt.Errorf("handoff %s hands to %q, which names both the step and one of its handoffs: rename the handoff", h.name, n)
					}
				}
				continue
			}
			if !slices.Contains(names, n) {
				return fmt.Errorf("handoff %s hands to %q, which is neither one of the step's handoffs nor the step (%s)", h.name, n, strings.Join(names, ", "))
			}
		}
	}
	return nil
}

// handOff passes the conversation to h's agent: its model and settings where it sets them (the
// step's where it does not: base holds them), its system prompt in place of the one before, its
// tools in place of the ones before.
func handOff(llm map[string]any, h *handoff, base map[string]any) {
	for _, k := range handoffSettings {
		if v, ok := h.agent[k]; ok {
			llm[k] = v
		} else if v, ok := base[k]; ok {
			llm[k] = v
		} else {
			delete(llm, k)
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
