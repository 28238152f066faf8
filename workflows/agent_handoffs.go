package workflows

import (
	"github.com/weftworks/weft/events"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
)

// handoff is an agent the conversation can be passed to (the agent's handoffs input, parsed by
// dsl.ParseAgentConfig).
type handoff = dsl.Handoff

// handoffTool offers a handoff to the model as transfer_to_NAME. Calling it runs nothing: the
// loop passes the conversation to the handoff's agent after the turn.
type handoffTool struct{ h handoff }

func (t handoffTool) Name() string                    { return runwire.HandoffToolPrefix + t.h.Name }
func (t handoffTool) FunctionName() string            { return functionName("transfer_to_" + t.h.Name) }
func (t handoffTool) EditSchema() any                 { return map[string]any{"type": "object"} }
func (t handoffTool) Check(args map[string]any) error { return nil }
func (t handoffTool) Definition() map[string]any {
	desc := t.h.Desc
	if desc == "" {
		desc = "Hand the conversation to the " + t.h.Name + " agent, which continues it and answers."
	}
	return map[string]any{"name": t.FunctionName(), "description": desc, "parameters": map[string]any{"type": "object", "properties": map[string]any{}}}
}
func (t handoffTool) Call(workflow.Context, *run, *stepRun, map[string]any, string) (any, error) {
	return map[string]any{"assistant": t.h.Name, "message": "Transferred to " + t.h.Name + ", who continues the conversation."}, nil
}

// handedOff returns the handoff of the first completed transfer call of a turn (nil: none).
func handedOff(records []map[string]any, tools map[string]agentTool) *handoff {
	for _, rec := range records {
		if rec["status"] != runwire.StatusCompleted {
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
	r.record(ctx, events.Event{Type: events.Handoff, Step: sr.cs.ID, Key: key, Iteration: int32(iter), From: from, To: to})
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
	h := handoff{Name: id, Agent: agent}
	for _, o := range hands {
		h.Next = append(h.Next, o.Name)
	}
	return h
}

// transfers are the transfer tools of an agent that can hand to the agents named next (checked
// by handoffChains): the step's handoffs, or root, the step's own agent.
func transfers(next []string, hands []handoff, root *handoff) []agentTool {
	var out []agentTool
	for _, name := range next {
		if name == root.Name {
			out = append(out, handoffTool{h: *root})
			continue
		}
		for _, h := range hands {
			if h.Name == name {
				out = append(out, handoffTool{h: h})
			}
		}
	}
	return out
}

// handOff passes the conversation to h's agent: its model and settings where it sets them (the
// step's where it does not: base holds them), its system prompt in place of the one before, its
// tools in place of the ones before.
func handOff(llm map[string]any, h *handoff, base map[string]any) {
	for _, k := range handoffSettings {
		if v, ok := h.Agent[k]; ok {
			llm[k] = v
		} else if v, ok := base[k]; ok {
			llm[k] = v
		} else {
			delete(llm, k)
		}
	}
	msgs := messages(llm)
	kept := make([]any, 0, len(msgs)+1)
	if s, _ := h.Agent["system"].(string); s != "" {
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
