package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/weftworks/weft/events"
	"sort"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities/toolspec"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
)

func init() { registerKind(toolspec.KindAgent, runMethod((*run).agent)) }

// agent runs the tool-calling loop: one llm activity per iteration, then every tool call the
// model asked for (in parallel unless parallelToolCalls is false), each its own activity or
// child workflow, behind a review gate when its tool is listed in approve. Mistakes of the
// model (unknown tool, bad JSON, arguments that fail the schema) and tool failures go back to
// the model as the tool's result, so it can correct itself.
func (r *run) agent(ctx workflow.Context, sr *stepRun, inputs map[string]any, env map[string]any) (any, error) {
	a, err := r.newAgentLoop(ctx, sr, inputs, env)
	if err != nil {
		return nil, err
	}
	start, err := a.resume()
	if err != nil {
		return nil, err
	}
	if res, stopped, err := a.checkInput(start); stopped || err != nil {
		return res, err
	}
	for iter := start; ; iter++ {
		if res, done, err := a.iterate(iter); done || err != nil {
			return res, err
		}
	}
}

// agentLoop is one agent step as it runs: its settings, the conversation so far (llm: the next
// model call's input), the agent that is active (the step's, or one handed to) with its tools,
// and the tool calls and handoffs made.
type agentLoop struct {
	r      *run
	ctx    workflow.Context
	sr     *stepRun
	inputs map[string]any
	env    map[string]any
	key    string
	spec   *toolspec.Spec // llm's

	cfg    agentConfig
	hands  []handoff
	guards *dsl.Guardrails
	// llm is the next model call's input; base the step's model settings, which an agent handed
	// to has where it sets none; root the step's own agent, which an agent handed to may hand
	// back to.
	llm, base map[string]any
	root      handoff

	// The active agent: its name (the step's id, or a handoff's), tools, and resetToolChoice.
	active      string
	tools       []agentTool
	byFunction  map[string]agentTool
	resetChoice bool
	// stepApprove is the step's approve list: it holds for every agent of the step (equip adds
	// an agent's own), so a model cannot hand off to escape a person's approval.
	stepApprove map[string]bool

	calls        []any // the tool calls' records, for the output
	handoffsMade []any
	// usedTools: the agents (by name) that have called tools in this step. An agent that has, and
	// whose toolChoice is required or a tool, goes on with auto unless it sets resetToolChoice
	// false: the model decides again, instead of being made to call tools until maxIterations.
	usedTools    map[string]bool
	resetVersion int // ChangeAgentResetToolChoice, read when it first matters (-2: not yet)
}

// agentInvalid is err as the step's failure: an input the step cannot run with, unless it is an
// application error already (listing an MCP server failed: its type says whether it is retried).
func agentInvalid(err error) error {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return err
	}
	return temporal.NewNonRetryableApplicationError(err.Error(), toolspec.ErrInvalidInput, nil)
}

// newAgentLoop reads the step's settings and equips the step's agent. Each input's problems fail
// the step where they always did, after what ran before them (a templated stopWhen's after the
// agent's MCP servers were listed).
func (r *run) newAgentLoop(ctx workflow.Context, sr *stepRun, inputs, env map[string]any) (*agentLoop, error) {
	cfg, err := agentSettings(sr.cs, inputs)
	if err != nil {
		return nil, err
	}
	parsed, problems := agentParsed(sr.cs, inputs)
	if ps := problems.Of("handoffs"); ps != nil {
		return nil, agentInvalid(ps)
	}
	a := &agentLoop{r: r, ctx: ctx, sr: sr, inputs: inputs, env: env, cfg: cfg, hands: parsed.Handoffs,
		llm: map[string]any{}, base: map[string]any{}, byFunction: map[string]agentTool{}, active: sr.cs.ID,
		stepApprove: cfg.approve, resetChoice: cfg.resetToolChoice, usedTools: map[string]bool{}, resetVersion: -2}
	for _, k := range []string{"model", "system", "prompt", "messages", "context", "temperature", "maxTokens", "responseFormat", "maxRepairs"} {
		if v, ok := inputs[k]; ok {
			a.llm[k] = v
		}
	}
	if err := r.prepareChat(ctx, sr, a.llm); err != nil {
		return nil, err
	}
	for _, k := range handoffSettings {
		if v, ok := a.llm[k]; ok {
			a.base[k] = v
		}
	}
	a.root = stepAgent(sr.cs.ID, inputs, firstSystem(messages(a.llm)), a.hands)
	if err := a.equip(inputs["tools"], inputs["approve"], cfg.toolChoice, cfg.resetToolChoice, transfers(a.root.Next, a.hands, &a.root)); err != nil {
		return nil, agentInvalid(err)
	}
	if ps := problems.Of("stopWhen"); ps != nil {
		return nil, temporal.NewNonRetryableApplicationError(ps.Error(), toolspec.ErrInvalidInput, nil)
	}
	a.cfg.stopWhen = parsed.StopWhen
	for _, rule := range a.cfg.stopWhen {
		if rule.Tool != "" {
			if _, err := toolChoice(rule.Tool, a.tools); err != nil {
				return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("stopWhen names tool %q, which is not in tools", rule.Tool), toolspec.ErrInvalidInput, nil)
			}
		}
	}
	a.spec, _ = toolspec.Lookup(toolspec.LLM)
	a.key = stepKey(sr, env)
	if ps := problems.Of("guardrails"); ps != nil {
		return nil, temporal.NewNonRetryableApplicationError(ps.Error(), toolspec.ErrInvalidInput, nil)
	}
	a.guards = parsed.Guardrails
	return a, nil
}

// equip makes an agent (the step's, or one handed to) the active one: its tools, approvals and
// toolChoice.
func (a *agentLoop) equip(toolList, approve any, choice string, reset bool, extra []agentTool) error {
	a.resetChoice = reset
	list, err := a.r.agentTools(a.ctx, a.sr, toolList)
	if err != nil {
		return err
	}
	a.tools = append(list, extra...)
	a.byFunction = map[string]agentTool{}
	defs := make([]any, 0, len(a.tools))
	for _, t := range a.tools {
		a.byFunction[t.FunctionName()] = t
		defs = append(defs, t.Definition())
	}
	a.cfg.approve = approveSet(stringList(approve)) // a new map: stepApprove stays the step's
	approveNames := make([]string, 0, len(a.cfg.approve))
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for name := range a.cfg.approve {
		approveNames = append(approveNames, name)
	}
	sort.Strings(approveNames)
	for _, name := range approveNames {
		if name == "*" {
			continue
		}
		if _, ok := a.byFunction[functionName(name)]; !ok {
			return fmt.Errorf("approve names %q, which is not in tools", name)
		}
	}
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for name := range a.stepApprove {
		a.cfg.approve[name] = true
	}
	if len(defs) > 0 {
		a.llm["tools"] = defs
		a.llm["parallelToolCalls"] = a.cfg.parallel
		if choice != "" {
			fn, err := toolChoice(choice, a.tools)
			if err != nil {
				return err
			}
			a.llm["toolChoice"] = fn
		}
	}
	return nil
}

// handTo makes h's agent the active one.
func (a *agentLoop) handTo(h *handoff) error {
	a.active = h.Name
	handOff(a.llm, h, a.base)
	choice, _ := h.Agent["toolChoice"].(string)
	if err := a.equip(h.Agent["tools"], h.Agent["approve"], choice, h.ResetToolChoice(), transfers(h.Next, a.hands, &a.root)); err != nil {
		return agentInvalid(fmt.Errorf("handoff %s: %w", h.Name, err))
	}
	return nil
}

// output is the step's output; with handoffs it says which agent answered and the handoffs made.
func (a *agentLoop) output(text string, iterations int, stop string) map[string]any {
	res := a.r.agentOutput(a.sr, a.llm, a.calls, text, iterations, stop)
	if len(a.hands) > 0 {
		res["agent"] = a.active
		res["handoffs"] = append([]any{}, a.handoffsMade...)
	}
	return res
}

// answered runs the output guardrails on an answer the agent is about to return.
func (a *agentLoop) answered(res map[string]any) (any, error) {
	if a.guards == nil || len(a.guards.Output) == 0 {
		return res, nil
	}
	text, _ := res["text"].(string)
	trip, err := a.r.check(a.ctx, a.sr, a.key, GuardrailOutput, a.guards.Output, text, res["json"], a.llm["model"])
	res["usage"] = agentUsage(a.sr) // the output guardrails' judges are the step's calls too
	if err != nil || trip == nil {
		return res, err
	}
	if a.guards.OnTrip != "return" {
		return nil, trip.err()
	}
	res["text"], res["json"], res["stopReason"], res["guardrail"] = "", nil, StopGuardrail, trip.value()
	return res, nil
}

// resume starts a fork from its recorded conversation (its model and tool results are not asked
// again) and returns the first iteration to run: 1 without a resume.
func (a *agentLoop) resume() (int, error) {
	resume, _ := a.inputs["resume"].(map[string]any)
	if resume == nil {
		return 1, nil
	}
	start := 1
	msgs, _ := resume["messages"].([]any)
	a.llm["messages"] = append([]any{}, msgs...)
	delete(a.llm, "prompt")
	delete(a.llm, "system")
	delete(a.llm, "context")
	recorded, _ := resume["toolCalls"].([]any)
	a.calls = append(a.calls, recorded...)
	markUsedTools(a.usedTools, a.sr.cs.ID, recorded)
	if f, ok := resume["iteration"].(float64); ok && f >= 0 {
		start = int(f) + 1
	}
	if name, _ := resume["agent"].(string); name != "" && name != a.sr.cs.ID {
		var h *handoff
		for i := range a.hands {
			if a.hands[i].Name == name {
				h = &a.hands[i]
			}
		}
		if h == nil {
			return 0, agentInvalid(fmt.Errorf("resume: agent %q is not one of the step's handoffs", name))
		}
		if err := a.handTo(h); err != nil {
			return 0, err
		}
	}
	return start, nil
}

// checkInput runs the input guardrails on the prompt, or on a fork's edited message (its last
// user message); a judge is the step's model, as for the prompt, whichever agent the fork goes
// on with. stopped: a check tripped and the step returns res.
func (a *agentLoop) checkInput(start int) (res any, stopped bool, err error) {
	if a.guards == nil || len(a.guards.Input) == 0 {
		return nil, false, nil
	}
	resume, _ := a.inputs["resume"].(map[string]any)
	checkInput := resume == nil
	if edited, _ := resume["edited"].(bool); edited {
		checkInput = workflow.GetVersion(a.ctx, ChangeForkChecksInput, workflow.DefaultVersion, 1) >= 1
	}
	if !checkInput {
		return nil, false, nil
	}
	trip, err := a.r.check(a.ctx, a.sr, a.key, GuardrailInput, a.guards.Input, inputText(a.llm), nil, a.base["model"])
	if err != nil {
		return nil, true, err
	}
	if trip == nil {
		return nil, false, nil
	}
	if a.guards.OnTrip != "return" {
		return nil, true, trip.err()
	}
	out := a.output("", start-1, StopGuardrail)
	out["guardrail"] = trip.value()
	return out, true, nil
}

// iterate runs iteration iter: a model call, then the tool calls it asks for. done: the step
// returns res.
func (a *agentLoop) iterate(iter int) (res any, done bool, err error) {
	r, sr, cfg := a.r, a.sr, &a.cfg
	if iter > cfg.maxIterations {
		if cfg.onLimit == "return" {
			return a.output("", iter-1, StopMaxIterations), true, nil
		}
		return nil, true, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"the agent did not answer within maxIterations (%d): it kept calling tools. Raise maxIterations, narrow the tools, or set onLimit: \"return\"", cfg.maxIterations),
			runwire.ErrStepFailed, nil)
	}
	sr.iterations = int32(iter)
	r.record(a.ctx, events.Event{Type: events.Iteration, Step: sr.cs.ID, Key: a.key, Iteration: sr.iterations})
	a.resetToolChoice()
	answer, err := a.modelCall(iter)
	if err != nil {
		return nil, true, err
	}
	text, _ := answer["text"].(string)
	requested, _ := answer["toolCalls"].([]any)
	msg := map[string]any{"role": "assistant", "content": text}
	if len(requested) > 0 {
		msg["toolCalls"] = requested
	}
	a.llm["messages"] = append(messages(a.llm), msg)
	delete(a.llm, "prompt") // now part of messages
	delete(a.llm, "system")
	delete(a.llm, "context")
	if re := textStop(cfg.stopWhen, text); re != "" {
		a.skipCalls(iter, requested, re)
		out := a.output(text, iter, StopTextMatched)
		out["json"], out["stoppedBy"] = answer["json"], re
		res, err := a.answered(out)
		return res, true, err
	}
	if len(requested) == 0 {
		out := a.output(text, iter, StopFinalAnswer)
		out["json"] = answer["json"]
		res, err := a.answered(out)
		return res, true, err
	}
	results, records := a.toolCalls(iter, requested)
	if a.ctx.Err() != nil {
		return nil, true, temporal.NewCanceledError("agent cancelled")
	}
	msgs := messages(a.llm)
	for i := range requested {
		msgs = append(msgs, results[i])
		a.calls = append(a.calls, records[i])
	}
	a.llm["messages"] = msgs
	a.showEdits(msg, records)
	a.usedTools[a.active] = true
	if h := handedOff(records, a.byFunction); h != nil {
		return a.handOffAfter(iter, h)
	}
	if tool, content := toolStop(cfg.stopWhen, a.tools, records, results); tool != "" {
		out := a.output(content, iter, StopToolCalled)
		out["stoppedBy"] = tool
		var v any
		if json.Unmarshal([]byte(content), &v) == nil {
			out["json"] = v
		}
		res, err := a.answered(out)
		return res, true, err
	}
	return nil, false, nil
}

// resetToolChoice sends auto instead of a toolChoice that forces tools once the active agent has
// called tools (unless it set resetToolChoice false), in runs since ChangeAgentResetToolChoice.
func (a *agentLoop) resetToolChoice() {
	if !a.resetChoice || !a.usedTools[a.active] || !forcesTools(a.llm["toolChoice"]) {
		return
	}
	if a.resetVersion == -2 {
		a.resetVersion = int(workflow.GetVersion(a.ctx, ChangeAgentResetToolChoice, workflow.DefaultVersion, 1))
	}
	if a.resetVersion >= 1 {
		a.llm["toolChoice"] = "auto"
	}
}

// modelCall is iteration iter's llm activity: the conversation, with the step's instructions
// rendered for it while the step's own agent is active.
func (a *agentLoop) modelCall(iter int) (map[string]any, error) {
	r, sr := a.r, a.sr
	opts := llmOptions(activityOptions(sr.cs.Policy, a.spec, fmt.Sprintf("%s · model call %d", sr.cs.Title(), iter)))
	opts.ActivityID = r.activityID(sr, stepKey(sr, a.env))
	call := a.llm
	if agentInstructions(sr.cs) != nil && a.inputs["instructions"] != nil && a.active == sr.cs.ID {
		var err error
		if call, err = r.withInstructions(sr, a.llm, a.env, iter, a.calls); err != nil {
			return nil, err
		}
	}
	out, err := r.runActivity(a.ctx, sr, toolspec.LLM, opts, call)
	if err != nil {
		return nil, err
	}
	answer, _ := out.(map[string]any)
	return answer, nil
}

// toolCalls runs the calls the model asked for, in parallel unless parallelToolCalls is false:
// the tool messages for the model and the records for the output, in the order asked.
func (a *agentLoop) toolCalls(iter int, requested []any) (results, records []map[string]any) {
	results = make([]map[string]any, len(requested))
	records = make([]map[string]any, len(requested))
	runOne := func(ctx workflow.Context, i int) {
		call, _ := requested[i].(map[string]any)
		results[i], records[i] = a.r.toolCall(ctx, a.sr, a.key, iter, i, call, a.byFunction, a.cfg)
	}
	if a.cfg.parallel && len(requested) > 1 {
		pending := len(requested)
		for i := range requested {
			workflow.Go(a.ctx, func(ctx workflow.Context) {
				defer func() { pending-- }()
				runOne(ctx, i)
			})
		}
		_ = awaitDetached(a.ctx, func() bool { return pending == 0 })
		return results, records
	}
	for i := range requested {
		runOne(a.ctx, i)
		if a.ctx.Err() != nil {
			break
		}
	}
	return results, records
}

// handOffAfter passes the conversation to h after iteration iter's transfer, unless the step's
// agents have made maxHandoffs handoffs already.
func (a *agentLoop) handOffAfter(iter int, h *handoff) (res any, done bool, err error) {
	if len(a.handoffsMade) >= a.cfg.maxHandoffs {
		if a.cfg.onLimit == "return" {
			return a.output("", iter, StopMaxHandoffs), true, nil
		}
		return nil, true, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"the agents handed the conversation off more than maxHandoffs (%d) times (%s): they keep passing it on. Say in the handoffs' descriptions when to hand off, raise maxHandoffs, or set onLimit: \"return\"",
			a.cfg.maxHandoffs, handoffPath(a.handoffsMade, h.Name)), runwire.ErrStepFailed, nil)
	}
	a.handoffsMade = append(a.handoffsMade, map[string]any{"iteration": iter, "from": a.active, "to": h.Name})
	a.r.recordHandoff(a.ctx, a.sr, a.key, iter, a.active, h.Name)
	if err := a.handTo(h); err != nil {
		return nil, true, err
	}
	return nil, false, nil
}

// skipCalls answers each call of iteration iter's answer, which a stopWhen textMatches (pattern)
// ended before they ran, with a tool message saying it was skipped, and lists them in toolCalls
// (the output's and the state's, which weft status shows) as skipped: a provider refuses a
// transcript with an assistant tool call left unanswered. Runs recorded before
// ChangeAgentSkippedCalls left them unanswered.
func (a *agentLoop) skipCalls(iter int, requested []any, pattern string) {
	if len(requested) == 0 || workflow.GetVersion(a.ctx, ChangeAgentSkippedCalls, workflow.DefaultVersion, 1) < 1 {
		return
	}
	msgs := messages(a.llm)
	for i, c := range requested {
		call, _ := c.(map[string]any)
		callID, _ := call["id"].(string)
		if callID == "" {
			callID = fmt.Sprintf("call_%d_%d", iter, i)
		}
		fname, _ := call["name"].(string)
		tool := fname
		if t, ok := a.byFunction[fname]; ok {
			tool = t.Name()
		}
		var args any
		if raw, _ := call["arguments"].(string); raw != "" {
			_ = json.Unmarshal([]byte(raw), &args)
		}
		why := fmt.Sprintf("skipped: the run stopped before this call ran (the answer matched stopWhen textMatches %q)", pattern)
		msgs = append(msgs, map[string]any{"role": "tool", "toolCallId": callID, "name": fname, "content": why})
		rec := &weftv1.ToolCall{Iteration: int32(iter), Id: callID, Tool: tool, Status: runwire.StatusSkipped, Error: why}
		if v, err := toValue(args); err == nil && args != nil {
			rec.Arguments = v
		}
		a.sr.toolCalls = append(a.sr.toolCalls, rec)
		a.calls = append(a.calls, map[string]any{"iteration": iter, "id": callID, "tool": tool, "arguments": args,
			"durationMs": int64(0), "status": runwire.StatusSkipped, "error": why})
	}
	a.llm["messages"] = msgs
}

// showEdits puts the arguments that ran into the assistant message msg for each of its calls a
// reviewer edited (records: the calls' records, in msg's order), so the model does not read its
// own arguments for a call that ran with others. Runs recorded before ChangeAgentEditedArguments
// kept the model's arguments.
func (a *agentLoop) showEdits(msg map[string]any, records []map[string]any) {
	ranWith := func(rec map[string]any) map[string]any {
		args, _ := rec["arguments"].(map[string]any)
		if rec["decision"] != runwire.DecisionEdit || args == nil {
			return nil
		}
		return args
	}
	edited := false
	for _, rec := range records {
		edited = edited || ranWith(rec) != nil
	}
	requested, _ := msg["toolCalls"].([]any)
	if !edited || len(requested) != len(records) || workflow.GetVersion(a.ctx, ChangeAgentEditedArguments, workflow.DefaultVersion, 1) < 1 {
		return
	}
	shown := make([]any, len(requested))
	for i, c := range requested {
		shown[i] = c
		call, _ := c.(map[string]any)
		args := ranWith(records[i])
		if call == nil || args == nil {
			continue
		}
		j, err := json.Marshal(args)
		if err != nil {
			continue
		}
		copied := make(map[string]any, len(call))
		//workflowcheck:ignore the result does not depend on map order (copied)
		for k, v := range call {
			copied[k] = v
		}
		copied["arguments"] = string(j)
		shown[i] = copied
	}
	msg["toolCalls"] = shown
}
