package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities/toolspec"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/workflows/dsl"
)

// autoContextLimit caps each upstream output rendered by "context": "auto". (An agent's own
// settings, maxIterations, toolResultLimit, maxHandoffs, have their defaults in toolspec.AgentIn.)
const autoContextLimit = 20000

// Agent stop reasons.
const (
	StopFinalAnswer   = "final_answer"
	StopMaxIterations = "max_iterations"
	StopToolCalled    = "tool_called"  // stopWhen {tool}: a call to the tool completed
	StopTextMatched   = "text_matched" // stopWhen {textMatches}: the model's text matched
	StopMaxHandoffs   = "max_handoffs" // maxHandoffs reached with onLimit: return
)

// ChangeAgentResetToolChoice (workflow.GetVersion): an agent whose toolChoice is required or a
// tool sends auto once it has called tools (resetToolChoice, as the OpenAI Agents SDK's
// reset_tool_choice); runs recorded before it send their toolChoice with every model call.
const ChangeAgentResetToolChoice = "agent-reset-tool-choice"

// ChangeForkChecksInput (workflow.GetVersion): a resumed (forked) agent whose resume says its
// last user message was edited (weft fork --message) runs the input guardrails on it, as a run's
// prompt is checked; forks recorded before it skipped them.
const ChangeForkChecksInput = "fork-checks-input"

// prepareChat completes an llm call's inputs in workflow code: "context": "auto" becomes the
// outputs of the steps this one depends on, and tool names become function definitions.
func (r *run) prepareChat(sr *stepRun, inputs map[string]any) error {
	if c, _ := inputs["context"].(string); c == "auto" {
		inputs["context"] = r.autoContext(sr)
	}
	list, _ := inputs["tools"].([]any)
	if len(list) == 0 {
		return nil
	}
	defs := make([]any, 0, len(list))
	for _, e := range list {
		name, ok := e.(string)
		if !ok {
			defs = append(defs, e) // a function definition written in the file
			continue
		}
		tools, err := r.agentTools(nil, sr, []any{name})
		if err != nil {
			return temporal.NewNonRetryableApplicationError(err.Error(), toolspec.ErrInvalidInput, nil)
		}
		defs = append(defs, tools[0].Definition())
	}
	inputs["tools"] = defs
	return nil
}

// autoContext renders the outputs of the step's dependencies, in dependency order.
func (r *run) autoContext(sr *stepRun) string {
	var b strings.Builder
	for _, d := range sr.cs.Deps {
		dep := r.steps[d]
		if dep.status != StatusCompleted || dep.output == nil {
			continue
		}
		text := autoContextText(dep.cs.Spec, dep.output)
		if len(text) > autoContextLimit {
			text = text[:autoContextLimit] + fmt.Sprintf("… [%d more characters]", len(text)-autoContextLimit)
		}
		fmt.Fprintf(&b, "## %s\n%s\n\n", dep.cs.Title(), text)
	}
	return strings.TrimSpace(b.String())
}

// LLMHeartbeatTimeout: llm activities heartbeat (their streamed text, or a keepalive every 5s),
// so a dead worker is noticed after this long instead of the call's whole timeout.
const LLMHeartbeatTimeout = 30 * time.Second

func llmOptions(o workflow.ActivityOptions) workflow.ActivityOptions {
	o.HeartbeatTimeout = LLMHeartbeatTimeout
	return o
}

// activityID names an activity after its step: "step#1", "step[2]#3" inside forEach,
// "step/CALL#1" for an agent's tool call. Clients show an llm activity's streamed text under its
// step, and `weft test` finds a step's mock by it. Ids must be unique within a run: seq counts
// the step's activities.
func (r *run) activityID(sr *stepRun, key string) string {
	sr.seq++
	return fmt.Sprintf("%s#%d", key, sr.seq)
}

// StepOfActivity returns the step id an activity id names ("" for ids weft did not choose).
func StepOfActivity(id string) string {
	head, _, ok := strings.Cut(id, "#")
	if !ok {
		return ""
	}
	head, _, _ = strings.Cut(head, "/")
	head, _, _ = strings.Cut(head, "[")
	return head
}

// agentConfig is an agent step's inputs.
type agentConfig struct {
	maxIterations   int
	parallel        bool
	approve         map[string]bool
	toolResultLimit int
	onLimit         string
	toolChoice      string
	resetToolChoice bool // after a turn with tool calls, the model calls go with auto
	maxHandoffs     int
	stopWhen        []stopRule
}

// stopRule is one condition of stopWhen: a tool (as tools names it) or a pattern.
type stopRule = dsl.StopRule

// agentSettings are the settings of an agent step, read from its declaration
// (toolspec.AgentIn, with its defaults).
func agentSettings(inputs map[string]any) (agentConfig, error) {
	in, err := declared(toolspec.Agent, inputs, "maxIterations", "parallelToolCalls", "approve", "toolResultLimit", "onLimit", "toolChoice", "resetToolChoice", "maxHandoffs")
	if err != nil {
		return agentConfig{}, err
	}
	return agentConfig{maxIterations: in.MaxIterations, parallel: in.ParallelToolCalls, approve: approveSet(in.Approve), toolResultLimit: in.ToolResultLimit,
		onLimit: in.OnLimit, toolChoice: in.ToolChoice, resetToolChoice: in.ResetToolChoice, maxHandoffs: in.MaxHandoffs}, nil
}

// approveSet is an approve list as a set.
func approveSet(list []string) map[string]bool {
	set := make(map[string]bool, len(list))
	for _, s := range list {
		set[s] = true
	}
	return set
}

// agentParsed is the step's stopWhen, guardrails and handoffs as the compiler parsed them, or
// (templated) parsed now from the resolved inputs, with their problems.
func agentParsed(cs *dsl.CompiledStep, inputs map[string]any) (*dsl.AgentConfig, dsl.Problems) {
	if cs.Agent != nil {
		return cs.Agent, nil
	}
	return dsl.ParseAgentConfig(cs.ID, inputs)
}

// agent runs the tool-calling loop: one llm activity per iteration, then every tool call the
// model asked for (in parallel unless parallelToolCalls is false), each its own activity or
// child workflow, behind a review gate when its tool is listed in approve. Mistakes of the
// model (unknown tool, bad JSON, arguments that fail the schema) and tool failures go back to
// the model as the tool's result, so it can correct itself.
func (r *run) agent(ctx workflow.Context, sr *stepRun, inputs map[string]any, env map[string]any) (any, error) {
	cfg, err := agentSettings(inputs)
	if err != nil {
		return nil, err
	}
	parsed, problems := agentParsed(sr.cs, inputs)
	invalid := func(err error) error {
		var ae *temporal.ApplicationError
		if errors.As(err, &ae) { // listing an MCP server failed: keep its type (retryable or not)
			return err
		}
		return temporal.NewNonRetryableApplicationError(err.Error(), toolspec.ErrInvalidInput, nil)
	}
	hands := parsed.Handoffs
	if ps := problems.Of("handoffs"); ps != nil {
		return nil, invalid(ps)
	}
	llm := map[string]any{}
	for _, k := range []string{"model", "system", "prompt", "messages", "context", "temperature", "maxTokens", "responseFormat", "maxRepairs"} {
		if v, ok := inputs[k]; ok {
			llm[k] = v
		}
	}
	if err := r.prepareChat(sr, llm); err != nil {
		return nil, err
	}
	// base: the step's model settings, which an agent handed to has where it sets none; root:
	// the step's own agent, which an agent handed to may hand back to.
	base := map[string]any{}
	for _, k := range handoffSettings {
		if v, ok := llm[k]; ok {
			base[k] = v
		}
	}
	root := stepAgent(sr.cs.ID, inputs, firstSystem(messages(llm)), hands)
	var tools []agentTool
	byFunction := map[string]agentTool{}
	// equip gives the agent (the step's, or one handed to) its tools, approvals and toolChoice.
	// The step's approve list holds for every agent of the step: an agent handed to adds its
	// own, and a model cannot hand off to escape a person's approval.
	stepApprove := cfg.approve // equip gives cfg a new map each time: this one stays the step's
	// resetChoice is the active agent's resetToolChoice.
	resetChoice := cfg.resetToolChoice
	equip := func(toolList, approve any, choice string, reset bool, extra []agentTool) error {
		resetChoice = reset
		list, err := r.agentTools(ctx, sr, toolList)
		if err != nil {
			return err
		}
		tools = append(list, extra...)
		byFunction = map[string]agentTool{}
		defs := make([]any, 0, len(tools))
		for _, t := range tools {
			byFunction[t.FunctionName()] = t
			defs = append(defs, t.Definition())
		}
		cfg.approve = approveSet(stringList(approve))
		approveNames := make([]string, 0, len(cfg.approve))
		//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
		for name := range cfg.approve {
			approveNames = append(approveNames, name)
		}
		sort.Strings(approveNames)
		for _, name := range approveNames {
			if name == "*" {
				continue
			}
			if _, ok := byFunction[functionName(name)]; !ok {
				return fmt.Errorf("approve names %q, which is not in tools", name)
			}
		}
		//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
		for name := range stepApprove {
			cfg.approve[name] = true
		}
		if len(defs) > 0 {
			llm["tools"] = defs
			llm["parallelToolCalls"] = cfg.parallel
			if choice != "" {
				fn, err := toolChoice(choice, tools)
				if err != nil {
					return err
				}
				llm["toolChoice"] = fn
			}
		}
		return nil
	}
	if err := equip(inputs["tools"], inputs["approve"], cfg.toolChoice, cfg.resetToolChoice, transfers(root.Next, hands, &root)); err != nil {
		return nil, invalid(err)
	}
	if ps := problems.Of("stopWhen"); ps != nil {
		return nil, temporal.NewNonRetryableApplicationError(ps.Error(), toolspec.ErrInvalidInput, nil)
	}
	cfg.stopWhen = parsed.StopWhen
	for _, rule := range cfg.stopWhen {
		if rule.Tool != "" {
			if _, err := toolChoice(rule.Tool, tools); err != nil {
				return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("stopWhen names tool %q, which is not in tools", rule.Tool), toolspec.ErrInvalidInput, nil)
			}
		}
	}
	var calls []any
	// With handoffs the output says which agent answered and the handoffs made.
	active := sr.cs.ID
	var handoffsMade []any
	output := func(text string, iterations int, stop string) map[string]any {
		res := r.agentOutput(sr, llm, calls, text, iterations, stop)
		if len(hands) > 0 {
			res["agent"] = active
			res["handoffs"] = append([]any{}, handoffsMade...)
		}
		return res
	}
	spec, _ := toolspec.Lookup(toolspec.LLM)
	key := stepKey(sr, env)
	if ps := problems.Of("guardrails"); ps != nil {
		return nil, temporal.NewNonRetryableApplicationError(ps.Error(), toolspec.ErrInvalidInput, nil)
	}
	guards := parsed.Guardrails
	// answered runs the output guardrails on an answer the agent is about to return.
	answered := func(res map[string]any) (any, error) {
		if guards == nil || len(guards.Output) == 0 {
			return res, nil
		}
		text, _ := res["text"].(string)
		trip, err := r.check(ctx, sr, key, GuardrailOutput, guards.Output, text, res["json"], llm["model"])
		res["usage"] = agentUsage(sr) // the output guardrails' judges are the step's calls too
		if err != nil || trip == nil {
			return res, err
		}
		if guards.OnTrip != "return" {
			return nil, trip.err()
		}
		res["text"], res["json"], res["stopReason"], res["guardrail"] = "", nil, StopGuardrail, trip.value()
		return res, nil
	}
	// usedTools: the agents (by name) that have called tools in this step. An agent that has, and
	// whose toolChoice is required or a tool, goes on with auto unless it sets resetToolChoice
	// false: the model decides again, instead of being made to call tools until maxIterations.
	usedTools := map[string]bool{}
	resetVersion := -2 // ChangeAgentResetToolChoice, read when it first matters
	// A fork starts from a recorded conversation: its model and tool results are not asked again.
	start := 1
	resume, _ := inputs["resume"].(map[string]any)
	if resume != nil {
		msgs, _ := resume["messages"].([]any)
		llm["messages"] = append([]any{}, msgs...)
		delete(llm, "prompt")
		delete(llm, "system")
		delete(llm, "context")
		recorded, _ := resume["toolCalls"].([]any)
		calls = append(calls, recorded...)
		markUsedTools(usedTools, sr.cs.ID, recorded)
		if f, ok := resume["iteration"].(float64); ok && f >= 0 {
			start = int(f) + 1
		}
		if a, _ := resume["agent"].(string); a != "" && a != sr.cs.ID {
			var h *handoff
			for i := range hands {
				if hands[i].Name == a {
					h = &hands[i]
				}
			}
			if h == nil {
				return nil, invalid(fmt.Errorf("resume: agent %q is not one of the step's handoffs", a))
			}
			active = h.Name
			handOff(llm, h, base)
			choice, _ := h.Agent["toolChoice"].(string)
			if err := equip(h.Agent["tools"], h.Agent["approve"], choice, h.ResetToolChoice(), transfers(h.Next, hands, &root)); err != nil {
				return nil, invalid(fmt.Errorf("handoff %s: %w", h.Name, err))
			}
		}
	}
	// Input guardrails check the prompt, and a fork's edited message (its last user message);
	// a judge is the step's model, as for the prompt, whichever agent the fork goes on with.
	checkInput := resume == nil
	if edited, _ := resume["edited"].(bool); edited && guards != nil && len(guards.Input) > 0 {
		checkInput = workflow.GetVersion(ctx, ChangeForkChecksInput, workflow.DefaultVersion, 1) >= 1
	}
	if guards != nil && len(guards.Input) > 0 && checkInput {
		trip, err := r.check(ctx, sr, key, GuardrailInput, guards.Input, inputText(llm), nil, base["model"])
		if err != nil {
			return nil, err
		}
		if trip != nil {
			if guards.OnTrip != "return" {
				return nil, trip.err()
			}
			res := output("", start-1, StopGuardrail)
			res["guardrail"] = trip.value()
			return res, nil
		}
	}
	for iter := start; ; iter++ {
		if iter > cfg.maxIterations {
			if cfg.onLimit == "return" {
				return output("", iter-1, StopMaxIterations), nil
			}
			return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
				"the agent did not answer within maxIterations (%d): it kept calling tools. Raise maxIterations, narrow the tools, or set onLimit: \"return\"", cfg.maxIterations),
				ErrStepFailed, nil)
		}
		sr.iterations = int32(iter)
		r.record(ctx, RunEvent{Type: EventIteration, Step: sr.cs.ID, Key: key, Iteration: sr.iterations})
		if resetChoice && usedTools[active] && forcesTools(llm["toolChoice"]) {
			if resetVersion == -2 {
				resetVersion = int(workflow.GetVersion(ctx, ChangeAgentResetToolChoice, workflow.DefaultVersion, 1))
			}
			if resetVersion >= 1 {
				llm["toolChoice"] = "auto"
			}
		}
		opts := llmOptions(activityOptions(sr.cs.Policy, spec, fmt.Sprintf("%s · model call %d", sr.cs.Title(), iter)))
		opts.ActivityID = r.activityID(sr, stepKey(sr, env))
		call := llm
		if sr.cs.ItemTemplate != nil && inputs["instructions"] != nil && active == sr.cs.ID {
			if call, err = r.withInstructions(sr, llm, env, iter, calls); err != nil {
				return nil, err
			}
		}
		out, err := r.runActivity(ctx, sr, toolspec.LLM, opts, call)
		if err != nil {
			return nil, err
		}
		answer, _ := out.(map[string]any)
		text, _ := answer["text"].(string)
		requested, _ := answer["toolCalls"].([]any)
		msg := map[string]any{"role": "assistant", "content": text}
		if len(requested) > 0 {
			msg["toolCalls"] = requested
		}
		llm["messages"] = append(messages(llm), msg)
		delete(llm, "prompt") // now part of messages
		delete(llm, "system")
		delete(llm, "context")
		if re := textStop(cfg.stopWhen, text); re != "" {
			res := output(text, iter, StopTextMatched)
			res["json"], res["stoppedBy"] = answer["json"], re
			return answered(res)
		}
		if len(requested) == 0 {
			res := output(text, iter, StopFinalAnswer)
			res["json"] = answer["json"]
			return answered(res)
		}
		results := make([]map[string]any, len(requested))
		records := make([]map[string]any, len(requested))
		runOne := func(ctx workflow.Context, i int) {
			call, _ := requested[i].(map[string]any)
			results[i], records[i] = r.toolCall(ctx, sr, key, iter, i, call, byFunction, cfg)
		}
		if cfg.parallel && len(requested) > 1 {
			pending := len(requested)
			for i := range requested {
				workflow.Go(ctx, func(ctx workflow.Context) {
					defer func() { pending-- }()
					runOne(ctx, i)
				})
			}
			_ = awaitDetached(ctx, func() bool { return pending == 0 })
		} else {
			for i := range requested {
				runOne(ctx, i)
				if ctx.Err() != nil {
					break
				}
			}
		}
		if ctx.Err() != nil {
			return nil, temporal.NewCanceledError("agent cancelled")
		}
		msgs := messages(llm)
		for i := range requested {
			msgs = append(msgs, results[i])
			calls = append(calls, records[i])
		}
		llm["messages"] = msgs
		usedTools[active] = true
		if h := handedOff(records, byFunction); h != nil {
			if len(handoffsMade) >= cfg.maxHandoffs {
				if cfg.onLimit == "return" {
					return output("", iter, StopMaxHandoffs), nil
				}
				return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
					"the agents handed the conversation off more than maxHandoffs (%d) times (%s): they keep passing it on. Say in the handoffs' descriptions when to hand off, raise maxHandoffs, or set onLimit: \"return\"",
					cfg.maxHandoffs, handoffPath(handoffsMade, h.Name)), ErrStepFailed, nil)
			}
			handoffsMade = append(handoffsMade, map[string]any{"iteration": iter, "from": active, "to": h.Name})
			r.recordHandoff(ctx, sr, key, iter, active, h.Name)
			active = h.Name
			handOff(llm, h, base)
			choice, _ := h.Agent["toolChoice"].(string)
			if err := equip(h.Agent["tools"], h.Agent["approve"], choice, h.ResetToolChoice(), transfers(h.Next, hands, &root)); err != nil {
				return nil, invalid(fmt.Errorf("handoff %s: %w", h.Name, err))
			}
			continue
		}
		if tool, content := toolStop(cfg.stopWhen, tools, records, results); tool != "" {
			res := output(content, iter, StopToolCalled)
			res["stoppedBy"] = tool
			var v any
			if json.Unmarshal([]byte(content), &v) == nil {
				res["json"] = v
			}
			return answered(res)
		}
	}
}

// withInstructions is the model call's input with the agent's instructions rendered for this
// iteration as the first system message (the conversation the agent keeps does not hold them).
func (r *run) withInstructions(sr *stepRun, llm map[string]any, env map[string]any, iter int, calls []any) (map[string]any, error) {
	e := make(map[string]any, len(env)+1)
	//workflowcheck:ignore the result does not depend on map order (copied)
	for k, v := range env {
		e[k] = v
	}
	var last any
	for i := len(calls) - 1; i >= 0; i-- {
		if c, _ := calls[i].(map[string]any); c["status"] == StatusCompleted {
			last = c["result"]
			if s, ok := last.(string); ok {
				var v any
				if json.Unmarshal([]byte(s), &v) == nil {
					last = v
				}
			}
			break
		}
	}
	e["agent"] = map[string]any{"iteration": iter, "lastToolResult": last, "toolCalls": len(calls), "name": sr.cs.ID,
		"usage": agentUsage(sr)}
	v, err := sr.cs.ItemTemplate.Resolve(e)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("instructions (iteration %d): %v", iter, err), toolspec.ErrInvalidInput, nil)
	}
	call := make(map[string]any, len(llm))
	//workflowcheck:ignore the result does not depend on map order (copied)
	for k, v := range llm {
		call[k] = v
	}
	msgs := messages(llm)
	call["messages"] = append([]any{map[string]any{"role": "system", "content": renderContextValue(v)}}, msgs...)
	delete(call, "prompt")
	delete(call, "system")
	delete(call, "context")
	return call, nil
}

// textStop returns the pattern of the first textMatches condition the text matches ("": none).
func textStop(rules []stopRule, text string) string {
	for _, rule := range rules {
		if rule.Pattern != nil && rule.Pattern.MatchString(text) {
			return rule.Pattern.String()
		}
	}
	return ""
}

// toolStop returns the first stopWhen tool with a call that completed this turn, and that
// call's result as the model would have read it.
func toolStop(rules []stopRule, tools []agentTool, records, results []map[string]any) (string, string) {
	for _, rule := range rules {
		if rule.Tool == "" {
			continue
		}
		fn, _ := toolChoice(rule.Tool, tools)
		for i, rec := range records {
			if rec["status"] == StatusCompleted && results[i]["name"] == fn {
				content, _ := results[i]["content"].(string)
				return rule.Tool, content
			}
		}
	}
	return "", ""
}

// firstSystem is the content of the first system message of a conversation ("": none).
func firstSystem(msgs []any) string {
	for _, m := range msgs {
		if mm, _ := m.(map[string]any); mm["role"] == "system" {
			s, _ := mm["content"].(string)
			return s
		}
	}
	return ""
}

// handoffPath renders the last handoffs made and the next one: "… a → b → a → b".
func handoffPath(made []any, next string) string {
	var names []string
	for _, m := range made {
		mm, _ := m.(map[string]any)
		if len(names) == 0 {
			names = append(names, fmt.Sprint(mm["from"]))
		}
		names = append(names, fmt.Sprint(mm["to"]))
	}
	names = append(names, next)
	if len(names) > 6 {
		names = append([]string{"…"}, names[len(names)-6:]...)
	}
	return strings.Join(names, " → ")
}

// forcesTools reports whether a toolChoice sent to the model makes it call a tool: required or
// a tool's name.
func forcesTools(choice any) bool {
	s, _ := choice.(string)
	return s != "" && s != "auto" && s != "none"
}

// markUsedTools marks the agents that made the recorded tool calls of a resumed agent: the
// step's agent, and from the turn after a completed transfer the agent handed to.
func markUsedTools(used map[string]bool, stepAgent string, recorded []any) {
	cur, next := stepAgent, ""
	last := -1.0
	for _, e := range recorded {
		rec, _ := e.(map[string]any)
		iter, _ := rec["iteration"].(float64)
		if iter != last && next != "" {
			cur, next = next, ""
		}
		last = iter
		used[cur] = true
		tool, _ := rec["tool"].(string)
		if name, ok := strings.CutPrefix(tool, HandoffToolPrefix); ok && rec["status"] == StatusCompleted && next == "" {
			next = name
		}
	}
}

// toolChoice is the agent's toolChoice as the model reads it: auto, none, required, or the
// function name of the tool it names (as tools names it, or by its function name).
func toolChoice(choice string, tools []agentTool) (string, error) {
	switch choice {
	case "auto", "none", "required":
		return choice, nil
	}
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		if t.Name() == choice || t.FunctionName() == choice {
			return t.FunctionName(), nil
		}
		names = append(names, t.Name())
	}
	return "", fmt.Errorf("toolChoice %q is neither auto, none nor required, nor one of the tools (%s): name one of them", choice, strings.Join(names, ", "))
}

// ModelCallConversation is the conversation an agent's model call (the input of its llm
// activity) holds: its messages, or those system, messages, prompt and context make. weft fork
// reads a failed agent's conversation from the input of its last model call.
func ModelCallConversation(in map[string]any) []any { return messages(in) }

// messages returns the conversation so far, starting it from system, prompt and context when
// the step gave no messages.
func messages(llm map[string]any) []any {
	if m, ok := llm["messages"].([]any); ok && llm["prompt"] == nil {
		return m
	}
	var out []any
	if s, _ := llm["system"].(string); s != "" {
		out = append(out, map[string]any{"role": "system", "content": s})
	}
	if m, ok := llm["messages"].([]any); ok {
		out = append(out, m...)
	}
	prompt, _ := llm["prompt"].(string)
	if c := llm["context"]; c != nil {
		if ctxText := renderContextValue(c); ctxText != "" {
			prompt += "\n\nContext:\n" + ctxText
		}
	}
	if prompt != "" {
		out = append(out, map[string]any{"role": "user", "content": prompt})
	}
	return out
}

// renderContextValue is the context as the model reads it (the llm activity renders documents
// the same way; strings pass through, other values as JSON).
func renderContextValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	j, _ := json.Marshal(v)
	return string(j)
}

func (r *run) agentOutput(sr *stepRun, llm map[string]any, calls []any, text string, iterations int, stop string) map[string]any {
	if calls == nil {
		calls = []any{}
	}
	return map[string]any{
		"text": text, "json": nil, "messages": messages(llm), "toolCalls": calls, "iterations": iterations, "stopReason": stop,
		"usage": agentUsage(sr),
	}
}

// agentUsage is an agent step's output.usage: what the step's calls used so far (its model calls,
// tools and guardrail judges), as its state's usage says.
func agentUsage(sr *stepRun) map[string]any {
	u := &sr.usage
	return map[string]any{"promptTokens": u.PromptTokens, "completionTokens": u.CompletionTokens, "totalTokens": u.TotalTokens, "costUsd": u.CostUsd}
}

// toolCall handles one call the model asked for and returns the tool message for the model and
// the record for the step's output.
func (r *run) toolCall(ctx workflow.Context, sr *stepRun, key string, iter, n int, call map[string]any, tools map[string]agentTool, cfg agentConfig) (map[string]any, map[string]any) {
	started := workflow.Now(ctx)
	callID, _ := call["id"].(string)
	if callID == "" {
		callID = fmt.Sprintf("call_%d_%d", iter, n)
	}
	fname, _ := call["name"].(string)
	rawArgs, _ := call["arguments"].(string)
	rec := &weftv1.ToolCall{Iteration: int32(iter), Id: callID, Tool: fname, Status: StatusRunning}
	sr.toolCalls = append(sr.toolCalls, rec)
	var args map[string]any
	var result any
	errMsg := ""
	announced := false
	announce := func() {
		if !announced {
			announced = true
			r.record(ctx, RunEvent{Type: EventToolCallStarted, Step: sr.cs.ID, Key: key + "/" + callID, Iteration: int32(iter), Call: eventCall(rec)})
		}
	}
	finish := func() (map[string]any, map[string]any) {
		announce()
		content := ""
		if errMsg != "" {
			content = "error: " + errMsg
			rec.Error = errMsg
			if rec.Status == StatusRunning {
				rec.Status = StatusFailed
			}
		} else {
			j, _ := json.Marshal(result)
			content = string(j)
			rec.Status = StatusCompleted
		}
		if len(content) > cfg.toolResultLimit {
			content = content[:cfg.toolResultLimit] + fmt.Sprintf("… [truncated: %d more characters; ask for less]", len(content)-cfg.toolResultLimit)
		}
		rec.DurationMs = workflow.Now(ctx).Sub(started).Milliseconds()
		if v, err := toValue(truncateText(content, 2000)); err == nil {
			rec.Result = v
		}
		record := map[string]any{"iteration": iter, "id": callID, "tool": rec.Tool, "arguments": args, "durationMs": rec.DurationMs, "status": rec.Status}
		if rec.Decision != "" {
			record["decision"] = rec.Decision
			record["reviewer"] = rec.Reviewer
			record["authenticated"] = rec.Authenticated
			record["reviewMs"] = rec.ReviewMs
			if len(rec.ReviewerRoles) > 0 {
				record["reviewerRoles"] = append([]string(nil), rec.ReviewerRoles...)
			}
			if rec.Comment != "" {
				record["comment"] = rec.Comment
			}
		}
		if errMsg != "" {
			record["error"] = errMsg
		} else {
			record["result"] = content
		}
		r.record(ctx, RunEvent{Type: EventToolCallFinished, Step: sr.cs.ID, Key: key + "/" + callID, Iteration: int32(iter), Call: eventCall(rec), Error: errMsg})
		return map[string]any{"role": "tool", "toolCallId": callID, "name": fname, "content": content}, record
	}
	tool, ok := tools[fname]
	if !ok {
		names := make([]string, 0, len(tools))
		for _, t := range sortedTools(tools) {
			names = append(names, t.FunctionName())
		}
		errMsg = fmt.Sprintf("unknown tool %q; the tools you can call are: %s", fname, strings.Join(names, ", "))
		return finish()
	}
	rec.Tool = tool.Name()
	if strings.TrimSpace(rawArgs) == "" {
		rawArgs = "{}"
	}
	if err := json.Unmarshal([]byte(rawArgs), &args); err != nil || args == nil {
		errMsg = fmt.Sprintf("the arguments are not a JSON object (%s); send the arguments as one JSON object", truncateText(rawArgs, 200))
		args = nil
		return finish()
	}
	if v, err := toValue(args); err == nil {
		rec.Arguments = v
	}
	if err := r.checkToolArgs(ctx, tool, args); err != nil {
		errMsg = "the arguments do not fit the tool's schema: " + err.Error()
		return finish()
	}
	announce()
	if _, transfer := tool.(handoffTool); !transfer && (cfg.approve["*"] || cfg.approve[tool.Name()] || needsApproval(tool)) {
		decision, err := r.approveCall(ctx, sr, key+"/"+callID, tool, args)
		// the tool's time starts after the decision; the wait for a person is reviewMs
		decided := workflow.Now(ctx)
		rec.ReviewMs = decided.Sub(started).Milliseconds()
		started = decided
		if err != nil {
			errMsg = errorText(err)
			return finish()
		}
		rec.Decision = decision.Decision
		rec.Reviewer = decision.Reviewer
		rec.Authenticated = decision.Authenticated
		rec.ReviewerRoles = append([]string(nil), decision.ReviewerRoles...)
		rec.Comment = decision.Comment
		switch decision.Decision {
		case DecisionReject:
			rec.Status = "rejected"
			errMsg = "a person refused this call"
			if decision.Reviewer != "" {
				errMsg += " (" + decision.Reviewer + ")"
			}
			if decision.Comment != "" {
				errMsg += ": " + decision.Comment
			}
			return finish()
		case DecisionEdit:
			edited, _ := decision.GetData().AsInterface().(map[string]any)
			args = edited
			if v, err := toValue(args); err == nil {
				rec.Arguments = v
			}
			if err := r.checkToolArgs(ctx, tool, args); err != nil {
				errMsg = "the reviewer's edited arguments do not fit the tool's schema: " + err.Error()
				return finish()
			}
		}
	}
	out, err := tool.Call(ctx, r, sr, args, key+"/"+callID)
	if err != nil {
		if ctx.Err() != nil {
			rec.Status = StatusCancelled
		}
		errMsg = errorText(err)
		return finish()
	}
	result = out
	return finish()
}

// approveCall opens a gate for a tool call and waits for a person.
func (r *run) approveCall(ctx workflow.Context, sr *stepRun, id string, tool agentTool, args map[string]any) (*weftv1.ReviewDecision, error) {
	data, err := toValue(args)
	if err != nil {
		return nil, err
	}
	req := &weftv1.ReviewRequest{Id: id, Kind: GateToolCall, Step: sr.cs.ID, Tool: tool.Name(),
		Title: fmt.Sprintf("Allow %s to call %s?", sr.cs.Title(), tool.Name()),
		Instructions: "The agent wants to call " + tool.Name() + " with the arguments in data. approve runs it as is, edit runs it with " +
			"the arguments you send as data (a JSON object), reject tells the agent the call was refused.",
		Data: data}
	g, err := r.openGate(ctx, sr, req, tool.EditSchema())
	if err != nil {
		return nil, err
	}
	for _, c := range sr.toolCalls {
		if sr.cs.ID+"/"+c.Id == id || strings.HasSuffix(id, "/"+c.Id) {
			c.Status = StatusAwaitingReview
		}
	}
	d, err := r.waitGate(ctx, g, 0, "")
	for _, c := range sr.toolCalls {
		if strings.HasSuffix(id, "/"+c.Id) && c.Status == StatusAwaitingReview {
			c.Status = StatusRunning
		}
	}
	return d, err
}

func sortedTools(m map[string]agentTool) []agentTool {
	names := make([]string, 0, len(m))
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]agentTool, len(names))
	for i, n := range names {
		out[i] = m[n]
	}
	return out
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// stringList is the strings of a list written in a file (an agent's approve); other entries are
// left out.
func stringList(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
