package workflows

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/weftworks/weft/events"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities/toolspec"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
	"github.com/weftworks/weft/workflows/expr"
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

// ChangeAutoContextChain (workflow.GetVersion): "context": "auto" renders every step this one
// depends on, directly or through others, in the run's order (the whole chain before it, as the
// Go builder's sequence of steps reads); runs recorded before it rendered the direct
// dependencies only.
const ChangeAutoContextChain = "auto-context-chain"

// ChangeAgentSkippedCalls (workflow.GetVersion): a stopWhen textMatches stop after an answer
// that asked for tool calls answers each of them with a tool message saying it was skipped (and
// lists it in toolCalls as skipped), so the transcript weft hands on is one a provider accepts;
// runs recorded before it left the calls unanswered.
const ChangeAgentSkippedCalls = "agent-skipped-calls"

// ChangeAgentEditedArguments (workflow.GetVersion): a tool call a reviewer edited shows the
// arguments that ran in the assistant message of the transcript, so the model reads what it is
// taken to have asked; runs recorded before it kept the model's own arguments there.
const ChangeAgentEditedArguments = "agent-edited-arguments"

// autoContextTotal caps what "context": "auto" renders of the whole chain: past it, the steps
// furthest back are left out (named in a note), never a direct dependency.
const autoContextTotal = 4 * autoContextLimit

// prepareChat completes an llm call's inputs in workflow code: "context": "auto" becomes the
// outputs of the steps this one depends on, and tool names become function definitions.
func (r *run) prepareChat(ctx workflow.Context, sr *stepRun, inputs map[string]any) error {
	if c, _ := inputs["context"].(string); c == "auto" {
		if workflow.GetVersion(ctx, ChangeAutoContextChain, workflow.DefaultVersion, 1) >= 1 {
			inputs["context"] = r.chainContext(sr)
		} else {
			inputs["context"] = r.autoContext(sr)
		}
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

// autoContext renders the outputs of the step's direct dependencies, in dependency order (runs
// recorded before ChangeAutoContextChain).
func (r *run) autoContext(sr *stepRun) string {
	var b strings.Builder
	for _, d := range sr.cs.Deps {
		dep := r.steps[d]
		if dep.status != runwire.StatusCompleted || dep.output == nil {
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

// chainContext renders the outputs of every step sr depends on, directly or through others, in
// the run's order (dsl.Workflow.Order): the first step of the chain first.
func (r *run) chainContext(sr *stepRun) string {
	chain := map[string]bool{}
	var walk func(ids []string)
	walk = func(ids []string) {
		for _, id := range ids {
			if chain[id] {
				continue
			}
			chain[id] = true
			if cs, ok := r.wf.Step(id); ok {
				walk(cs.Deps)
			}
		}
	}
	walk(sr.cs.Deps)
	direct := map[string]bool{}
	for _, d := range sr.cs.Deps {
		direct[d] = true
	}
	type part struct {
		id, text string
	}
	var parts []part
	total := 0
	for _, id := range r.wf.Order {
		dep := r.steps[id]
		if !chain[id] || dep == nil || dep.status != runwire.StatusCompleted || dep.output == nil {
			continue
		}
		text := autoContextText(dep.cs.Spec, dep.output)
		if len(text) > autoContextLimit {
			text = text[:autoContextLimit] + fmt.Sprintf("… [%d more characters]", len(text)-autoContextLimit)
		}
		text = fmt.Sprintf("## %s\n%s\n\n", dep.cs.Title(), text)
		parts = append(parts, part{id, text})
		total += len(text)
	}
	var b strings.Builder
	var left []string
	for _, p := range parts {
		if total > autoContextTotal && !direct[p.id] {
			total -= len(p.text)
			left = append(left, p.id)
			continue
		}
		b.WriteString(p.text)
	}
	if len(left) > 0 {
		return strings.TrimSpace(fmt.Sprintf("[earlier steps left out, over %d characters: %s]\n\n%s", autoContextTotal, strings.Join(left, ", "), b.String()))
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

// agentSettings are the settings of an agent step (dsl.AgentSettings) with the defaults of its
// declaration (toolspec.AgentIn): as the compiler decoded them, or decoded now when templated.
func agentSettings(cs *dsl.CompiledStep, inputs map[string]any) (agentConfig, error) {
	in, err := typedInput(cs, inputs, dsl.AgentInput)
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
	if a := cs.Agent(); a != nil && a.Config != nil && a.Config.Parsed {
		return a.Config, nil
	}
	return dsl.ParseAgentConfig(cs.ID, inputs)
}

// agentInstructions are agent step cs's instructions as compiled; nil when it writes none.
func agentInstructions(cs *dsl.CompiledStep) *expr.Value {
	if a := cs.Agent(); a != nil {
		return a.Instructions
	}
	return nil
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
		if c, _ := calls[i].(map[string]any); c["status"] == runwire.StatusCompleted {
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
	v, err := agentInstructions(sr.cs).Resolve(e)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("instructions (iteration %d): %v", iter, err), toolspec.ErrInvalidInput, nil)
	}
	call := make(map[string]any, len(llm))
	//workflowcheck:ignore the result does not depend on map order (copied)
	for k, v := range llm {
		call[k] = v
	}
	msgs := messages(llm)
	call["messages"] = append([]any{map[string]any{"role": "system", "content": runwire.ContextText(v)}}, msgs...)
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
			if rec["status"] == runwire.StatusCompleted && results[i]["name"] == fn {
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
		if name, ok := strings.CutPrefix(tool, runwire.HandoffToolPrefix); ok && rec["status"] == runwire.StatusCompleted && next == "" {
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

// messages returns the conversation so far (runwire.ModelCallConversation).
func messages(llm map[string]any) []any { return runwire.ModelCallConversation(llm) }

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
	rec := &weftv1.ToolCall{Iteration: int32(iter), Id: callID, Tool: fname, Status: runwire.StatusRunning}
	sr.toolCalls = append(sr.toolCalls, rec)
	var args map[string]any
	var result any
	errMsg := ""
	verbatim, replayed := "", false // a replay's recorded answer (replay.go)
	announced := false
	announce := func() {
		if !announced {
			announced = true
			r.record(ctx, events.Event{Type: events.ToolCallStarted, Step: sr.cs.ID, Key: key + "/" + callID, Iteration: int32(iter), Call: eventCall(rec)})
		}
	}
	finish := func() (map[string]any, map[string]any) {
		announce()
		content := ""
		if errMsg != "" {
			content = "error: " + errMsg
			rec.Error = errMsg
			if rec.Status == runwire.StatusRunning {
				rec.Status = runwire.StatusFailed
			}
		} else if replayed {
			content, rec.Status = verbatim, runwire.StatusCompleted
		} else {
			j, _ := json.Marshal(result)
			content = string(j)
			rec.Status = runwire.StatusCompleted
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
			if rec.Rule != "" {
				record["rule"] = rec.Rule
			}
		}
		if errMsg != "" {
			record["error"] = errMsg
		} else {
			record["result"] = content
		}
		r.record(ctx, events.Event{Type: events.ToolCallFinished, Step: sr.cs.ID, Key: key + "/" + callID, Iteration: int32(iter), Call: eventCall(rec), Error: errMsg})
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
	_, transfer := tool.(handoffTool)
	if answer, failed, ok := r.replayCall(sr, tool, args); ok && !transfer {
		// a replay: the recorded answer, or tool drift; the call is neither approved nor run
		verbatim, replayed = answer, !failed
		if failed {
			errMsg = answer
		}
		return finish()
	}
	if !transfer && (cfg.approve["*"] || cfg.approve[tool.Name()] || needsApproval(tool)) {
		decision, rule, err := r.approveCall(ctx, sr, key+"/"+callID, tool, args)
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
		rec.Rule = rule
		switch decision.Decision {
		case runwire.DecisionReject:
			rec.Status = "rejected"
			errMsg = "a person refused this call"
			if rule != "" {
				errMsg = "a person refused every call of " + tool.Name() + " in this run (" + rule + ")"
			} else if decision.Reviewer != "" {
				errMsg += " (" + decision.Reviewer + ")"
			}
			if decision.Comment != "" {
				errMsg += ": " + decision.Comment
			}
			return finish()
		case runwire.DecisionEdit:
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
			rec.Status = runwire.StatusCancelled
		}
		errMsg = errorText(err)
		return finish()
	}
	result = out
	return finish()
}

// approveCall opens a gate for a tool call and waits for a person, unless a run-wide decision
// for the tool decides it (rule: how the call's record names it).
func (r *run) approveCall(ctx workflow.Context, sr *stepRun, id string, tool agentTool, args map[string]any) (d *weftv1.ReviewDecision, rule string, err error) {
	if t := r.ruleFor(ctx, tool.Name()); t != nil {
		return t.decides(id, sr.cs.ID), t.text(), nil
	}
	data, err := toValue(args)
	if err != nil {
		return nil, "", err
	}
	req := &weftv1.ReviewRequest{Id: id, Kind: runwire.GateToolCall, Step: sr.cs.ID, Tool: tool.Name(),
		Title: fmt.Sprintf("Allow %s to call %s?", sr.cs.Title(), tool.Name()),
		Instructions: "The agent wants to call " + tool.Name() + " with the arguments in data. approve runs it as is, edit runs it with " +
			"the arguments you send as data (a JSON object), reject tells the agent the call was refused.",
		Data: data}
	g, err := r.openGate(ctx, sr, req, tool.EditSchema())
	if err != nil {
		return nil, "", err
	}
	for _, c := range sr.toolCalls {
		if sr.cs.ID+"/"+c.Id == id || strings.HasSuffix(id, "/"+c.Id) {
			c.Status = runwire.StatusAwaitingReview
		}
	}
	d, err = r.waitGate(ctx, g, 0, "")
	for _, c := range sr.toolCalls {
		if strings.HasSuffix(id, "/"+c.Id) && c.Status == runwire.StatusAwaitingReview {
			c.Status = runwire.StatusRunning
		}
	}
	return d, g.rule, err
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
