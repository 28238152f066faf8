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

// ChangeAutoContextTurns (workflow.GetVersion): "context": "auto" passes the run's inputs and
// the chain before the step as conversation turns ahead of the step's own messages and prompt
// (chainTurns), as seed 004 chains its steps; runs recorded before it got the chain as one
// "Context:" block after the prompt (ChangeAutoContextChain), or the direct dependencies only.
const ChangeAutoContextTurns = "auto-context-turns"

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
// run's inputs and the outputs of the steps this one depends on, as turns before its messages
// and prompt (chainTurns), and tool names become function definitions.
func (r *run) prepareChat(ctx workflow.Context, sr *stepRun, inputs map[string]any) error {
	if c, _ := inputs["context"].(string); c == "auto" {
		switch {
		case workflow.GetVersion(ctx, ChangeAutoContextTurns, workflow.DefaultVersion, 1) >= 1:
			turns := r.chainTurns(sr)
			if len(turns) == 0 {
				inputs["context"] = "" // nothing before it: the model is told the context is empty
				break
			}
			delete(inputs, "context")
			if own, _ := inputs["messages"].([]any); len(own) > 0 {
				turns = append(turns, own...)
			}
			inputs["messages"] = turns
		case workflow.GetVersion(ctx, ChangeAutoContextChain, workflow.DefaultVersion, 1) >= 1:
			inputs["context"] = r.chainContext(sr)
		default:
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

// capContext cuts text to autoContextLimit, saying how much was left out.
func capContext(text string) string {
	if len(text) <= autoContextLimit {
		return text
	}
	return text[:autoContextLimit] + fmt.Sprintf("… [%d more characters]", len(text)-autoContextLimit)
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
		text := capContext(autoContextText(dep.cs.Spec, dep.output))
		fmt.Fprintf(&b, "## %s\n%s\n\n", dep.cs.Title(), text)
	}
	return strings.TrimSpace(b.String())
}

// chainPart is one earlier step of a "context": "auto" chain: its output as the model reads it.
type chainPart struct {
	id, title, text string
	model           bool // a model step's answer (generation category): the model's own turn
}

// chain is what "context": "auto" gives the model of sr: every step sr depends on, directly or
// through others, that completed with an output, in the run's order (dsl.Workflow.Order: the
// first step of the chain first), each up to autoContextLimit; past autoContextTotal in all (each
// counted as chainContext renders it) the steps furthest back are left out and named in left,
// never a direct dependency. lead, when not nil, is counted first and left out first (the run's
// inputs, for chainTurns).
func (r *run) chain(sr *stepRun, lead *chainPart) (parts []chainPart, left []string) {
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
	var all []chainPart
	if lead != nil {
		all = append(all, *lead)
	}
	for _, id := range r.wf.Order {
		dep := r.steps[id]
		if !chain[id] || dep == nil || dep.status != runwire.StatusCompleted || dep.output == nil {
			continue
		}
		text := capContext(autoContextText(dep.cs.Spec, dep.output))
		model := dep.cs.Spec != nil && dep.cs.Spec.Category() == toolspec.CategoryGeneration
		all = append(all, chainPart{id: id, title: dep.cs.Title(), text: text, model: model})
	}
	size := func(p chainPart) int { return len(fmt.Sprintf("## %s\n%s\n\n", p.title, p.text)) }
	total := 0
	for _, p := range all {
		total += size(p)
	}
	for _, p := range all {
		if total > autoContextTotal && !direct[p.id] {
			total -= size(p)
			left = append(left, p.id)
			continue
		}
		parts = append(parts, p)
	}
	return parts, left
}

// chainContext renders the chain (r.chain) as one text: a "## title" section per step (runs
// recorded after ChangeAutoContextChain and before ChangeAutoContextTurns).
func (r *run) chainContext(sr *stepRun) string {
	parts, left := r.chain(sr, nil)
	var b strings.Builder
	for _, p := range parts {
		fmt.Fprintf(&b, "## %s\n%s\n\n", p.title, p.text)
	}
	if len(left) > 0 {
		return strings.TrimSpace(fmt.Sprintf("[earlier steps left out, over %d characters: %s]\n\n%s", autoContextTotal, strings.Join(left, ", "), b.String()))
	}
	return strings.TrimSpace(b.String())
}

// chainTurns renders the run's inputs and the chain (r.chain) as the conversation so far, as
// seed 004's auto-chained context carries it: the inputs as the first user turn, a model step's
// answer as an assistant turn (what a model said), any other step's output as a user turn headed
// by the step's title (what the model was given); a note of the steps left out comes first. The
// step's own messages and prompt follow them.
func (r *run) chainTurns(sr *stepRun) []any {
	var lead *chainPart
	if in, _ := r.env["inputs"].(map[string]any); len(in) > 0 {
		text := capContext(compactJSON(in))
		lead = &chainPart{id: "inputs", title: "The run's inputs", text: text}
	}
	parts, left := r.chain(sr, lead)
	var turns []any
	if len(left) > 0 {
		turns = append(turns, map[string]any{"role": "user", "content": fmt.Sprintf("[earlier steps left out, over %d characters: %s]", autoContextTotal, strings.Join(left, ", "))})
	}
	for _, p := range parts {
		if p.model {
			turns = append(turns, map[string]any{"role": "assistant", "content": p.text})
			continue
		}
		turns = append(turns, map[string]any{"role": "user", "content": fmt.Sprintf("## %s\n%s", p.title, p.text)})
	}
	return turns
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
	callID, _ := call["id"].(string)
	if callID == "" {
		callID = fmt.Sprintf("call_%d_%d", iter, n)
	}
	fname, _ := call["name"].(string)
	rawArgs, _ := call["arguments"].(string)
	c := &toolCallRun{r: r, ctx: ctx, sr: sr, cfg: cfg, iter: iter, callID: callID, fname: fname, key: key + "/" + callID, started: workflow.Now(ctx),
		rec: &weftv1.ToolCall{Iteration: int32(iter), Id: callID, Tool: fname, Status: runwire.StatusRunning}}
	sr.toolCalls = append(sr.toolCalls, c.rec)
	c.handle(rawArgs, tools)
	return c.finish()
}

// toolCallRun is one call the model asked for while toolCall handles it: what is known of it so
// far, which finish turns into the tool message for the model and the record for the output.
type toolCallRun struct {
	r     *run
	ctx   workflow.Context
	sr    *stepRun
	cfg   agentConfig
	iter  int
	key   string // the step's key and the call's id: its events', gate's and activity's key
	rec   *weftv1.ToolCall
	args  map[string]any
	fname string // the function the model called, as it wrote it
	// callID is the model's id of the call (made up when it gave none).
	callID  string
	started time.Time // when the tool's time starts: the call, or the reviewer's decision
	result  any
	errMsg  string // what went wrong, for the model; "" when the call completed
	// verbatim is a replay's recorded answer (replay.go), given as it is when replayed.
	verbatim  string
	replayed  bool
	announced bool
}

// handle checks the call's tool and arguments, asks a person when the call needs approval and
// calls the tool; it stops at the first problem, which errMsg says.
func (c *toolCallRun) handle(rawArgs string, tools map[string]agentTool) {
	r, ctx, sr := c.r, c.ctx, c.sr
	tool, ok := tools[c.fname]
	if !ok {
		names := make([]string, 0, len(tools))
		for _, t := range sortedTools(tools) {
			names = append(names, t.FunctionName())
		}
		c.errMsg = fmt.Sprintf("unknown tool %q; the tools you can call are: %s", c.fname, strings.Join(names, ", "))
		return
	}
	c.rec.Tool = tool.Name()
	if strings.TrimSpace(rawArgs) == "" {
		rawArgs = "{}"
	}
	if err := json.Unmarshal([]byte(rawArgs), &c.args); err != nil || c.args == nil {
		c.errMsg = fmt.Sprintf("the arguments are not a JSON object (%s); send the arguments as one JSON object", truncateText(rawArgs, 200))
		c.args = nil
		return
	}
	if v, err := toValue(c.args); err == nil {
		c.rec.Arguments = v
	}
	if err := r.checkToolArgs(ctx, tool, c.args); err != nil {
		c.errMsg = "the arguments do not fit the tool's schema: " + err.Error()
		return
	}
	c.announce()
	_, transfer := tool.(handoffTool)
	if answer, failed, ok := r.replayCall(sr, tool, c.args); ok && !transfer {
		// a replay: the recorded answer, or tool drift; the call is neither approved nor run
		c.verbatim, c.replayed = answer, !failed
		if failed {
			c.errMsg = answer
		}
		return
	}
	if !transfer && (c.cfg.approve["*"] || c.cfg.approve[tool.Name()] || needsApproval(tool)) && !c.approve(tool) {
		return
	}
	out, err := tool.Call(ctx, r, sr, c.args, c.key)
	if err != nil {
		if ctx.Err() != nil {
			c.rec.Status = runwire.StatusCancelled
		}
		c.errMsg = errorText(err)
		return
	}
	c.result = out
}

// approve asks a person (or the run's rule for the tool) about the call and records the
// decision; false when the call is not to be made (refused, or edited arguments that do not
// fit), errMsg saying why. Edited arguments replace the model's.
func (c *toolCallRun) approve(tool agentTool) bool {
	rec := c.rec
	decision, rule, err := c.r.approveCall(c.ctx, c.sr, c.key, tool, c.args)
	// the tool's time starts after the decision; the wait for a person is reviewMs
	decided := workflow.Now(c.ctx)
	rec.ReviewMs = decided.Sub(c.started).Milliseconds()
	c.started = decided
	if err != nil {
		c.errMsg = errorText(err)
		return false
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
		c.errMsg = "a person refused this call"
		if rule != "" {
			c.errMsg = "a person refused every call of " + tool.Name() + " in this run (" + rule + ")"
		} else if decision.Reviewer != "" {
			c.errMsg += " (" + decision.Reviewer + ")"
		}
		if decision.Comment != "" {
			c.errMsg += ": " + decision.Comment
		}
		return false
	case runwire.DecisionEdit:
		edited, _ := decision.GetData().AsInterface().(map[string]any)
		c.args = edited
		if v, err := toValue(c.args); err == nil {
			rec.Arguments = v
		}
		if err := c.r.checkToolArgs(c.ctx, tool, c.args); err != nil {
			c.errMsg = "the reviewer's edited arguments do not fit the tool's schema: " + err.Error()
			return false
		}
	}
	return true
}

// announce records that the call started, once.
func (c *toolCallRun) announce() {
	if !c.announced {
		c.announced = true
		c.r.record(c.ctx, events.Event{Type: events.ToolCallStarted, Step: c.sr.cs.ID, Key: c.key, Iteration: int32(c.iter), Call: eventCall(c.rec)})
	}
}

// finish settles the call's status and content (the error, the replayed answer or the result as
// JSON, cut at the tool result limit), records that it finished and returns the tool message
// for the model and the record for the step's output.
func (c *toolCallRun) finish() (map[string]any, map[string]any) {
	c.announce()
	rec := c.rec
	content := ""
	if c.errMsg != "" {
		content = "error: " + c.errMsg
		rec.Error = c.errMsg
		if rec.Status == runwire.StatusRunning {
			rec.Status = runwire.StatusFailed
		}
	} else if c.replayed {
		content, rec.Status = c.verbatim, runwire.StatusCompleted
	} else {
		j, _ := json.Marshal(c.result)
		content = string(j)
		rec.Status = runwire.StatusCompleted
	}
	if limit := c.cfg.toolResultLimit; len(content) > limit {
		content = content[:limit] + fmt.Sprintf("… [truncated: %d more characters; ask for less]", len(content)-limit)
	}
	rec.DurationMs = workflow.Now(c.ctx).Sub(c.started).Milliseconds()
	if v, err := toValue(truncateText(content, 2000)); err == nil {
		rec.Result = v
	}
	record := c.record()
	if c.errMsg != "" {
		record["error"] = c.errMsg
	} else {
		record["result"] = content
	}
	c.r.record(c.ctx, events.Event{Type: events.ToolCallFinished, Step: c.sr.cs.ID, Key: c.key, Iteration: int32(c.iter), Call: eventCall(rec), Error: c.errMsg})
	return map[string]any{"role": "tool", "toolCallId": c.callID, "name": c.fname, "content": content}, record
}

// record is the call's record for the step's output, its decision included; finish adds its
// result or error.
func (c *toolCallRun) record() map[string]any {
	rec := c.rec
	record := map[string]any{"iteration": c.iter, "id": c.callID, "tool": rec.Tool, "arguments": c.args, "durationMs": rec.DurationMs, "status": rec.Status}
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
	return record
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
