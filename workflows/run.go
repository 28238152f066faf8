package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/events"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
)

// run is the state of one execution.
type run struct {
	wf      *dsl.Workflow
	name    string
	env     map[string]any // template roots: inputs, defaults, and one {output, error, status} per step
	steps   map[string]*stepRun
	order   []*stepRun       // file order
	gates   map[string]*gate // pending review gates by request id
	gateSeq int
	// files are the texts of the workflows this run calls, by name (workflow_files); workflows
	// the same as structs, in requests made before workflow_files existed.
	files     map[string]string
	workflows map[string]*structpb.Struct
	// reuse holds outputs taken over from the run this one resumes (weft retry).
	reuse       map[string]*structpb.Value
	resumedFrom string
	// recorded: a replay's recorded agent tool calls, by step (RunRequest.recorded_calls;
	// replay.go); replayed counts the answers each step's calls took, by tool and arguments.
	recorded map[string]*weftv1.RecordedCalls
	replayed map[string]int
	// origin and startedBy: who the definition came from (RunRequest.origin; "" the operator)
	// and who started the run. A client's definition reaches only what the operator declared.
	origin, startedBy string
	// namedActivities: tool activities get ids naming their step (runs started since
	// VersionActivityIDs; older histories replay without them).
	namedActivities bool
	// keepsCompleted: tool activities wait for the answer to their cancellation, for a while,
	// when another step failed (ChangeFailureKeepsCompleted; older histories replay without).
	keepsCompleted bool
	// checkedOnce: registry checks are recorded in history (ChangeCheckedOnce).
	checkedOnce bool
	usage       weftv1.TokenUsage
	started     time.Time
	status      string
	failure     error // the first step failure that ends the run
	cancel      workflow.CancelFunc
	output      any
	events      eventLog // what happened, in order (events.go)
	// mcpSessions: the sessions with stateful MCP servers, by server (agent_mcp_session.go);
	// closingSessions: the run is ending them.
	mcpSessions     map[string]*mcpSession
	closingSessions bool
	notify          notifier    // which webhooks hear of it (notify.go)
	budget          budgetState // ChangeBudget, once read (budget.go)
	held            held        // the estimates of the run's model calls in flight (budget.go)
	// toolRules: the run-wide decisions for tools whose calls wait for approval, by tool
	// (tool_rules.go).
	toolRules map[string]*toolRule
}

// stepRun is one step's progress.
type stepRun struct {
	cs                    *dsl.CompiledStep
	status                string
	attempts              int32
	started, finished     time.Time
	err                   string
	output                any
	reason                string
	itemsTotal, itemsDone int32
	summary               string
	done                  bool
	openGates             int
	warnings              []string
	usage                 weftv1.TokenUsage
	toolCalls             []*weftv1.ToolCall
	iterations            int32
	childID               string
	seq                   int // activities started by the step (ids of llm activities)
	// lastModel is the usage of the step's latest model call: the next one's estimate (budget.go).
	lastModel *weftv1.TokenUsage
	held      held // the estimates of the step's model calls in flight (budget.go)
}

// Run interprets the workflow definition in req. It is registered as runwire.WorkflowType.
func Run(ctx workflow.Context, req *weftv1.RunRequest) (*weftv1.RunResult, error) {
	r, err := newRun(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := r.registerHandlers(ctx); err != nil {
		return nil, err
	}
	if err := r.registerEventHandlers(ctx); err != nil {
		return nil, err
	}
	r.planNotify(ctx)
	r.record(ctx, events.Event{Type: events.RunStarted})
	r.namedActivities = workflow.GetVersion(ctx, ChangeActivityIDs, workflow.DefaultVersion, 1) >= 1
	r.keepsCompleted = workflow.GetVersion(ctx, ChangeFailureKeepsCompleted, workflow.DefaultVersion, 1) >= 1
	r.setStatus(ctx, runwire.StatusRunning)
	err = r.execute(ctx)
	r.closeMCPSessions(ctx)
	if err != nil {
		r.setStatus(ctx, runwire.StatusFailed)
		r.finishEvents(ctx, err)
		return nil, err
	}
	res, err := r.result(ctx)
	if err == nil {
		err = gateResult(ctx, res)
	}
	if err != nil {
		r.setStatus(ctx, runwire.StatusFailed)
		r.finishEvents(ctx, err)
		return nil, err
	}
	r.setStatus(ctx, runwire.StatusCompleted)
	r.finishEvents(ctx, nil)
	return res, nil
}

func invalidDefinition(format string, args ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), runwire.ErrInvalidDefinition, nil)
}

func newRun(ctx workflow.Context, req *weftv1.RunRequest) (*run, error) {
	if req == nil {
		return nil, invalidDefinition("the run request has no definition")
	}
	name, data, err := runwire.DefinitionText(req)
	if err != nil {
		return nil, invalidDefinition("%v", err)
	}
	recorded := checkedOnce(ctx)
	wf, err := loadDefinition(ctx, recorded, name, data)
	if err != nil {
		return nil, invalidDefinition("%v", err)
	}
	inputs, err := dsl.ResolveInputs(wf.Def, nil, req.GetInputs().AsMap())
	if err != nil {
		return nil, invalidDefinition("%v", err)
	}
	defaults := map[string]any{}
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for k, v := range wf.Def.Defaults {
		defaults[k] = v
	}
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for k, v := range req.GetDefaults().AsMap() {
		defaults[k] = v
	}
	r := &run{
		wf: wf, name: wf.Def.Name,
		env:         map[string]any{"inputs": inputs, "defaults": defaults},
		steps:       map[string]*stepRun{},
		gates:       map[string]*gate{},
		workflows:   req.GetWorkflows(),
		files:       req.GetWorkflowFiles(),
		reuse:       req.GetReuse(),
		resumedFrom: req.GetResumedFrom(),
		recorded:    req.GetRecordedCalls(),
		replayed:    map[string]int{},
		origin:      req.GetOrigin(),
		startedBy:   req.GetStartedBy(),
		checkedOnce: recorded,
		started:     workflow.Now(ctx),
		status:      runwire.StatusRunning,
	}
	for _, cs := range wf.Steps {
		sr := &stepRun{cs: cs, status: runwire.StatusPending}
		r.steps[cs.ID] = sr
		r.order = append(r.order, sr)
		r.publish(sr)
	}
	return r, nil
}

// publish makes a step's current result visible to templates as {{ id.output }}, .error, .status.
func (r *run) publish(sr *stepRun) {
	var errv any
	if sr.err != "" {
		errv = sr.err
	}
	r.env[sr.cs.ID] = map[string]any{"output": sr.output, "error": errv, "status": sr.status}
}

// execute starts every step in its own coroutine; each waits for its dependencies.
func (r *run) execute(ctx workflow.Context) error {
	runCtx, cancel := workflow.WithCancel(ctx)
	r.cancel = cancel
	for _, sr := range r.order {
		workflow.Go(runCtx, func(ctx workflow.Context) { r.runStep(ctx, sr) })
	}
	if err := workflow.Await(ctx, r.allDone); err != nil {
		// The run itself was cancelled: steps see the cancelled context and finish.
		cancel()
		_ = awaitDetached(ctx, r.allDone)
		return temporal.NewCanceledError("run cancelled")
	}
	if r.failure != nil {
		return r.failure
	}
	out, err := r.resolveOutput(ctx)
	if err != nil {
		if activityFailed(err) {
			return temporal.NewNonRetryableApplicationError("output: "+errorText(err), runwire.ErrStepFailed, err)
		}
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("output: %v", err), runwire.ErrStepFailed, nil)
	}
	r.output = out
	return nil
}

func (r *run) allDone() bool {
	for _, sr := range r.order {
		if !sr.done {
			return false
		}
	}
	return true
}

func (r *run) resolveOutput(ctx workflow.Context) (any, error) {
	if r.wf.Output == nil {
		return nil, nil
	}
	return resolveValue(ctx, r.wf.Output, r.env, true)
}

// runStep waits for the step's dependencies, then decides whether it runs, and runs it.
func (r *run) runStep(ctx workflow.Context, sr *stepRun) {
	defer func() {
		sr.done = true
		r.publish(sr)
		r.recordStepEnd(ctx, sr)
	}()
	deps := sr.cs.Deps
	err := workflow.Await(ctx, func() bool {
		for _, d := range deps {
			if !r.steps[d].done {
				return false
			}
		}
		return true
	})
	if err != nil || ctx.Err() != nil {
		sr.status, sr.reason = runwire.StatusNotRun, "the run ended before this step started"
		return
	}
	if v, ok := r.reuse[sr.cs.ID]; ok {
		// weft retry: the step completed in the run this one resumes.
		sr.output = v.AsInterface()
		sr.status, sr.reason = runwire.StatusCompleted, "reused from run "+r.resumedFrom
		sr.summary = summarize(sr.output)
		return
	}
	if reason := r.skipReason(sr); reason != "" {
		sr.status, sr.reason = runwire.StatusSkipped, reason
		return
	}
	if sr.cs.Condition != nil {
		ok, err := evalBool(ctx, sr.cs.Condition, r.env)
		if err != nil {
			r.fail(ctx, sr, fmt.Errorf("condition: %w", err))
			return
		}
		if !ok {
			sr.status, sr.reason = runwire.StatusSkipped, "condition is false: "+sr.cs.Step.Condition
			return
		}
	}
	sr.status = runwire.StatusRunning
	sr.started = workflow.Now(ctx)
	r.publish(sr)
	r.recordStep(ctx, sr, events.StepStarted)
	var out any
	if sr.cs.ForEach != nil {
		out, err = r.forEach(ctx, sr)
	} else {
		out, err = r.execOnce(ctx, sr, r.env)
	}
	sr.finished = workflow.Now(ctx)
	if err != nil {
		if ctx.Err() != nil && r.failure != nil {
			sr.status, sr.err = runwire.StatusCancelled, "cancelled: another step failed"
			return
		}
		if ctx.Err() != nil {
			// the run itself was cancelled (weft cancel): the step did not fail
			sr.status, sr.err = runwire.StatusCancelled, runwire.StoppedInFlight
			return
		}
		var rej *reviewRejected
		if errors.As(err, &rej) {
			sr.output = rej.output // files branch on {{ step.output.decision }}
		}
		r.fail(ctx, sr, err)
		return
	}
	sr.output = out
	sr.status = runwire.StatusCompleted
	sr.summary = summarize(out)
}

// skipReason tells whether a conditional step upstream disabled this one, or a dependency was
// cancelled.
func (r *run) skipReason(sr *stepRun) string {
	for _, d := range sr.cs.Deps {
		dep := r.steps[d]
		if dep.status == runwire.StatusCancelled {
			return "dependency " + d + " was cancelled"
		}
		if dep.status == runwire.StatusNotRun {
			return "dependency " + d + " did not run"
		}
		if dep.cs.Spec == nil || !dep.cs.Spec.Branches || dep.status != runwire.StatusCompleted {
			continue
		}
		out, _ := dep.output.(map[string]any)
		skipped, _ := out["skippedSteps"].([]any)
		for _, s := range skipped {
			if s == sr.cs.ID {
				return fmt.Sprintf("branch not taken (%s took %v)", d, out["branchTaken"])
			}
		}
	}
	return ""
}

// fail records a step failure; without continueOnError it ends the run and cancels the steps
// in flight.
func (r *run) fail(ctx workflow.Context, sr *stepRun, err error) {
	sr.status = runwire.StatusFailed
	sr.err = errorText(err)
	if sr.finished.IsZero() {
		sr.finished = workflow.Now(ctx)
	}
	if sr.cs.ContinueOnError {
		workflow.GetLogger(ctx).Warn("step failed, continuing", "step", sr.cs.ID, "error", sr.err)
		return
	}
	if r.failure == nil {
		errType := runwire.ErrStepFailed
		var ae *temporal.ApplicationError
		if errors.As(err, &ae) && (ae.Type() == runwire.ErrReviewRejected || ae.Type() == runwire.ErrReviewTimeout || ae.Type() == runwire.ErrBudgetExceeded) {
			errType = ae.Type()
		}
		r.failure = temporal.NewNonRetryableApplicationError(fmt.Sprintf("step %q: %s", sr.cs.ID, sr.err), errType, err)
		r.cancel()
	}
}

// errorText is the message of the innermost cause people need: an activity's application error
// rather than the "activity error (type: ..., scheduledEventID: ...)" wrapper.
func errorText(err error) string { return runwire.ErrorText(err) }

// The kinds of failure ErrorKind tells apart (events.Event.ErrorKind).
const (
	ErrorKindFailed    = "failed"
	ErrorKindCancelled = "cancelled"
	ErrorKindTimedOut  = "timed_out"
)

// ErrorKind is the kind of err by its type: a timeout is ErrorKindTimedOut, whatever failure it
// carries as its cause (a call that timed out holds the last attempt's application error), then
// an application error is a failure whatever its message says (an item's own error may read
// "cancelled"), a cancellation is ErrorKindCancelled, anything else a failure. (ErrorText reads
// the application error first: a timeout's text is its last failure's, when it has one.)
func ErrorKind(err error) string {
	var te *temporal.TimeoutError
	if errors.As(err, &te) {
		return ErrorKindTimedOut
	}
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return ErrorKindFailed
	}
	var ce *temporal.CanceledError
	if errors.As(err, &ce) {
		return ErrorKindCancelled
	}
	return ErrorKindFailed
}

// result builds the RunResult.
func (r *run) result(ctx workflow.Context) (*weftv1.RunResult, error) {
	out, err := toValue(r.output)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("output: "+err.Error(), runwire.ErrStepFailed, nil)
	}
	res := &weftv1.RunResult{
		Workflow:   r.name,
		Output:     out,
		DurationMs: workflow.Now(ctx).Sub(r.started).Milliseconds(),
		Usage:      copyUsage(&r.usage),
	}
	for _, sr := range r.order {
		// Step outputs over the cap are left out of the result (as from the state query), so a
		// run with large step outputs still fits Temporal's payload limit; the run's own output
		// stays whole.
		res.Steps = append(res.Steps, r.stepState(sr, true))
	}
	return res, nil
}

// addUsage adds one tool activity's usage to the step and the run: its calls are the provider
// requests it billed (requestsOf).
func (r *run) addUsage(sr *stepRun, u *toolspec.Usage) {
	for _, t := range []*weftv1.TokenUsage{&r.usage, &sr.usage} {
		t.Calls += requestsOf(u)
		if u == nil {
			continue
		}
		t.PromptTokens += u.PromptTokens
		t.CompletionTokens += u.CompletionTokens
		t.TotalTokens += u.TotalTokens
		t.EmbeddingTokens += u.EmbeddingTokens
		t.CostUsd += u.CostUSD
	}
}

// addChildUsage adds a child run's totals to the step and the run.
func (r *run) addChildUsage(sr *stepRun, u *weftv1.TokenUsage) {
	if u == nil {
		return
	}
	for _, t := range []*weftv1.TokenUsage{&r.usage, &sr.usage} {
		t.Calls += u.Calls
		t.PromptTokens += u.PromptTokens
		t.CompletionTokens += u.CompletionTokens
		t.TotalTokens += u.TotalTokens
		t.EmbeddingTokens += u.EmbeddingTokens
		t.CostUsd += u.CostUsd
	}
}

func copyUsage(u *weftv1.TokenUsage) *weftv1.TokenUsage {
	return &weftv1.TokenUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens,
		EmbeddingTokens: u.EmbeddingTokens, Calls: u.Calls, CostUsd: u.CostUsd}
}

// setStatus records the run status in the WeftStatus search attribute.
func (r *run) setStatus(ctx workflow.Context, status string) {
	r.status = status
	if err := workflow.UpsertTypedSearchAttributes(ctx, runwire.StatusAttribute.ValueSet(status)); err != nil {
		workflow.GetLogger(ctx).Warn("cannot set the WeftStatus search attribute (is it registered?)", "error", err)
	}
}
