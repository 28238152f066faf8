package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities/toolspec"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
)

// A chat session is one long-running workflow: each user message is an Update that runs one
// agent turn (the same loop as the agent step: one llm activity per iteration, one activity per
// tool call, review gates for approvals) and returns the answer. The conversation is the
// workflow's state, so quitting, crashing or moving to another machine loses nothing. Long
// sessions continue as new, carrying the conversation.
const (
	// DefaultChatTurnsPerRun is how many turns a run holds before it continues as new.
	DefaultChatTurnsPerRun = 50
	// chatKeepMessages is how many messages a continued session carries (cut at a user message).
	chatKeepMessages = 200
)

// Chat runs a chat session.
func Chat(ctx workflow.Context, s *runwire.ChatSession) error {
	if s == nil {
		s = &runwire.ChatSession{}
	}
	if s.TurnsPerRun <= 0 {
		s.TurnsPerRun = DefaultChatTurnsPerRun
	}
	r, err := newChatRun(ctx, s)
	if err != nil {
		return err
	}
	if err := r.registerHandlers(ctx); err != nil {
		return err
	}
	// A turn's events (model calls, tool calls, approvals asked) are read as a run's: weft chat
	// waits on them (events.go) rather than polling. Registering adds no command.
	if err := r.registerEventHandlers(ctx); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, runwire.QueryChat, func() (*runwire.ChatSession, error) { return s, nil }); err != nil {
		return err
	}
	busy, turnsHere := false, 0
	validate := func(m runwire.ChatMessage) error {
		if strings.TrimSpace(m.Text) == "" {
			return errors.New("the message is empty: send {\"text\": \"...\"}")
		}
		if m.From != "" && m.From != s.StartedBy {
			return fmt.Errorf("chat session belongs to %s: %s may not send it messages or read its memory; start a session of your own", ownerName(s.StartedBy), m.From)
		}
		if turnsHere >= s.TurnsPerRun {
			return errors.New("this run is continuing as new: send the message again in a moment")
		}
		return nil
	}
	err = workflow.SetUpdateHandlerWithOptions(ctx, runwire.UpdateChatMessage, func(ctx workflow.Context, m runwire.ChatMessage) (*runwire.ChatReply, error) {
		if err := workflow.Await(ctx, func() bool { return !busy }); err != nil {
			return nil, err
		}
		busy = true
		defer func() { busy = false }()
		turnsHere++
		turn, err := r.chatTurn(ctx, s, m.Text)
		if err != nil {
			return nil, err
		}
		return &runwire.ChatReply{Turn: *turn}, nil
	}, workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, m runwire.ChatMessage) error { return validate(m) }})
	if err != nil {
		return err
	}
	err = workflow.SetUpdateHandler(ctx, runwire.UpdateChatClear, func(ctx workflow.Context) (int, error) {
		if err := workflow.Await(ctx, func() bool { return !busy }); err != nil {
			return 0, err
		}
		n := len(s.Messages)
		s.Messages = nil
		return n, nil
	})
	if err != nil {
		return err
	}
	r.setStatus(ctx, runwire.StatusRunning)
	if err := workflow.Await(ctx, func() bool { return turnsHere >= s.TurnsPerRun && !busy }); err != nil {
		r.closeMCPSessions(ctx) // a chat ends by being cancelled: its servers' connections close
		return err
	}
	// Let accepted updates finish (waits for events answer now: this run records no more), then
	// continue with the conversation in a fresh history.
	r.events.ended = true
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	// A stateful MCP server's session is the run's: the next run starts it afresh.
	r.closeMCPSessions(ctx)
	s.Messages = trimConversation(s.Messages, chatKeepMessages)
	if len(s.Turns) > 20 {
		s.Turns = s.Turns[len(s.Turns)-20:]
	}
	s.Continued++
	return workflow.NewContinueAsNewError(ctx, runwire.ChatWorkflowType, s)
}

// ownerName names who started a session, for refusals.
func ownerName(startedBy string) string {
	if startedBy == "" {
		return "the operator"
	}
	return startedBy
}

// newChatRun builds the interpreter state of a session: one agent step, run once per turn.
func newChatRun(ctx workflow.Context, s *runwire.ChatSession) (*run, error) {
	tools := make([]any, len(s.Tools))
	for i, t := range s.Tools {
		tools[i] = t
	}
	in := map[string]any{"tools": tools, "maxIterations": 10}
	if len(s.Approve) > 0 {
		approve := make([]any, len(s.Approve))
		for i, a := range s.Approve {
			approve[i] = a
		}
		in["approve"] = approve
	}
	if s.Model != "" {
		in["model"] = s.Model
	}
	defaults := map[string]any{}
	if s.DB != "" {
		defaults["db"] = s.DB
	}
	if s.Collection != "" {
		defaults["collection"] = s.Collection
	}
	if s.MemoryScope != "" {
		defaults["scope"] = s.MemoryScope
	}
	def := map[string]any{"name": "chat", "steps": []any{map[string]any{"id": "chat", "name": "Chat turn", "tool": toolspec.Agent.Name, "inputs": in}}}
	if len(defaults) > 0 {
		def["defaults"] = defaults
	}
	if len(s.MCPServers) > 0 {
		servers := map[string]any{}
		for _, name := range sortedServerNames(s.MCPServers) {
			servers[name] = mcpServerValue(s.MCPServers[name])
		}
		def["mcpServers"] = servers
	}
	text, err := json.Marshal(def) // object keys sorted: the same session is the same text
	if err != nil {
		return nil, invalidDefinition("chat session: %v", err)
	}
	return newRun(ctx, &weftv1.RunRequest{DefinitionJson: string(text), Source: "chat", Origin: s.Origin, StartedBy: s.StartedBy})
}

// chatTurn runs one agent turn on the conversation plus the new message.
func (r *run) chatTurn(ctx workflow.Context, s *runwire.ChatSession, text string) (*runwire.ChatTurn, error) {
	sr := r.order[0]
	// A fresh step state per turn: its tool calls and usage are this turn's.
	*sr = stepRun{cs: sr.cs, status: runwire.StatusRunning, started: workflow.Now(ctx)}
	r.publish(sr)
	msgs := append([]any(nil), s.Messages...)
	if len(msgs) == 0 {
		system := s.System
		if system == "" {
			system = defaultChatSystem(s)
		}
		msgs = append(msgs, map[string]any{"role": "system", "content": system})
	}
	msgs = append(msgs, map[string]any{"role": "user", "content": text})
	inputs := map[string]any{}
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for k, v := range sr.cs.Step.Inputs {
		inputs[k] = v
	}
	inputs["messages"] = msgs
	out, err := r.agent(ctx, sr, inputs, r.env)
	sr.finished = workflow.Now(ctx)
	if err != nil {
		sr.status, sr.err = runwire.StatusFailed, errorText(err)
		// The conversation is unchanged, but the calls the turn made were billed: count them.
		s.Usage.PromptTokens += sr.usage.PromptTokens
		s.Usage.CompletionTokens += sr.usage.CompletionTokens
		s.Usage.TotalTokens += sr.usage.TotalTokens
		s.Usage.CostUSD += sr.usage.CostUsd
		s.Usage.Calls += sr.usage.Calls
		return nil, fmt.Errorf("the turn failed (the conversation is unchanged): %s", errorText(err))
	}
	sr.status, sr.output = runwire.StatusCompleted, out
	res, _ := out.(map[string]any)
	s.Messages, _ = res["messages"].([]any)
	answer, _ := res["text"].(string)
	calls, _ := res["toolCalls"].([]any)
	u := runwire.ChatUsage{PromptTokens: sr.usage.PromptTokens, CompletionTokens: sr.usage.CompletionTokens, TotalTokens: sr.usage.TotalTokens, CostUSD: sr.usage.CostUsd, Calls: sr.usage.Calls}
	turn := runwire.ChatTurn{N: len(s.Turns) + 1, Question: text, Answer: answer, ToolCalls: calls, Usage: u,
		StartedAt: sr.started.UTC().Format("2006-01-02T15:04:05Z"), Ms: sr.finished.Sub(sr.started).Milliseconds()}
	if len(s.Turns) > 0 {
		turn.N = s.Turns[len(s.Turns)-1].N + 1
	}
	s.Turns = append(s.Turns, turn)
	s.Usage.PromptTokens += u.PromptTokens
	s.Usage.CompletionTokens += u.CompletionTokens
	s.Usage.TotalTokens += u.TotalTokens
	s.Usage.CostUSD += u.CostUSD
	s.Usage.Calls += u.Calls
	return &turn, nil
}

func defaultChatSystem(s *runwire.ChatSession) string {
	var b strings.Builder
	b.WriteString("You are weft's assistant. Use the tools to look things up before you answer, and say which sources you used.")
	if s.Collection != "" {
		fmt.Fprintf(&b, " The default collection is %s.", s.Collection)
	}
	if s.MemoryScope != "" {
		fmt.Fprintf(&b, " Long-term memory scope: %s (use remember only when the user asks you to remember something; use recall to look up what was remembered).", s.MemoryScope)
	}
	return b.String()
}

// trimConversation keeps the system message and the last messages, starting at a user message
// so that no tool result loses the call it answers.
func trimConversation(msgs []any, keep int) []any {
	if len(msgs) <= keep {
		return msgs
	}
	var out []any
	if m, ok := msgs[0].(map[string]any); ok && m["role"] == "system" {
		out = append(out, m)
	}
	start := len(msgs) - keep
	for start < len(msgs) {
		if m, ok := msgs[start].(map[string]any); ok && m["role"] == "user" {
			break
		}
		start++
	}
	return append(out, msgs[start:]...)
}

func sortedServerNames(m map[string]dsl.MCPServer) []string {
	out := make([]string, 0, len(m))
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// mcpServerValue is a server declaration as the file format writes it.
func mcpServerValue(s dsl.MCPServer) map[string]any {
	v := mcpConfig("", s, "")
	delete(v, "name")
	if s.Trust {
		v["trust"] = true
	}
	if s.Stateful {
		v["stateful"] = true
	}
	return v
}
