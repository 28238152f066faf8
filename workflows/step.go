package workflows

import (
	"fmt"
	"maps"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/events"
	"github.com/weftworks/weft/internal/english"
	"github.com/weftworks/weft/workflows/dsl"
	"github.com/weftworks/weft/workflows/expr"
)

// execOnce runs the step once in env (the workflow environment, or a per-item copy).
func (r *run) execOnce(ctx workflow.Context, sr *stepRun, env map[string]any) (any, error) {
	cs := sr.cs
	if cs.Spec.Kind == toolspec.KindInline && inlineReadsStored(cs, env) && readsStoredValues(ctx) {
		// A data tool reads its inputs here: over a stored value it runs where the value is.
		sr.attempts = max(sr.attempts, 1)
		return runInlineStored(ctx, cs, env)
	}
	inputs, err := r.resolveInputs(ctx, cs, cs.InputValue, cs.Spec, env)
	if err != nil {
		return nil, err
	}
	return stepKinds[cs.Spec.Kind].run(r, ctx, sr, inputs, env)
}

func init() { registerKind(toolspec.KindActivity, runMethod((*run).toolActivity)) }

// toolActivity runs an activity tool's step: the activity named after the tool.
func (r *run) toolActivity(ctx workflow.Context, sr *stepRun, inputs, env map[string]any) (any, error) {
	return r.activity(ctx, sr, sr.cs.Tool, sr.cs.Spec, inputs, sr.cs.Title(), env)
}

// resolveInputs renders the step's templates and fills db, collection and model from defaults
// when the tool takes them and the step leaves them out. A template that looks inside a stored
// value is rendered by the evaluate activity; one that is exactly a path hands a stored value on
// as its reference (resolved by the tool activity that receives it).
func (r *run) resolveInputs(ctx workflow.Context, cs *dsl.CompiledStep, val *expr.Value, spec *toolspec.Spec, env map[string]any) (map[string]any, error) {
	resolved, err := resolveValue(ctx, val, env, true)
	if err != nil {
		if activityFailed(err) {
			return nil, err // the evaluate activity failed (the store is down): its own message
		}
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("inputs: %v", err), toolspec.ErrInvalidInput, nil)
	}
	// A copy: inputs without templates resolve to the compiled definition's own map, which the
	// compile cache shares between runs (and their goroutines); defaults, lazy inputs and an
	// llm call's "context": "auto" are written into this run's inputs only.
	m, _ := resolved.(map[string]any)
	inputs := maps.Clone(m)
	if inputs == nil {
		inputs = map[string]any{}
	}
	r.fillDefaults(spec, inputs)
	if err := r.checkNamespace(ctx, spec.Name, spec, inputs); err != nil {
		return nil, err
	}
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for k, v := range cs.Lazy {
		if _, set := inputs[k]; !set && val == cs.InputValue {
			inputs[k] = v
		}
	}
	return inputs, nil
}

// activityOptions applies the tool's defaults and the step's overrides.
func activityOptions(p dsl.Policy, spec *toolspec.Spec, summary string) workflow.ActivityOptions {
	timeout := spec.EffectiveTimeout()
	if p.Timeout > 0 {
		timeout = p.Timeout
	}
	rp := &temporal.RetryPolicy{
		InitialInterval:        time.Second,
		BackoffCoefficient:     2,
		MaximumInterval:        time.Minute,
		MaximumAttempts:        int32(spec.EffectiveMaxAttempts()),
		NonRetryableErrorTypes: []string{toolspec.ErrInvalidInput, toolspec.ErrMissingConfig},
	}
	if p.MaxAttempts > 0 {
		rp.MaximumAttempts = int32(p.MaxAttempts)
	}
	if p.InitialInterval > 0 {
		rp.InitialInterval = p.InitialInterval
	}
	if p.Backoff >= 1 {
		rp.BackoffCoefficient = p.Backoff
	}
	if p.MaxInterval > 0 {
		rp.MaximumInterval = p.MaxInterval
	}
	return workflow.ActivityOptions{
		StartToCloseTimeout: timeout,
		HeartbeatTimeout:    spec.EffectiveHeartbeat(),
		RetryPolicy:         rp,
		Summary:             summary,
	}
}

// activity runs a tool step as the activity named after the tool.
func (r *run) activity(ctx workflow.Context, sr *stepRun, tool string, spec *toolspec.Spec, inputs map[string]any, summary string, env map[string]any) (any, error) {
	opts := activityOptions(sr.cs.Policy, spec, summary)
	if spec.ModelCall {
		if err := r.prepareChat(ctx, sr, inputs); err != nil {
			return nil, err
		}
		opts = llmOptions(opts)
	}
	if spec.ModelCall || r.namedActivities {
		opts.ActivityID = r.activityID(sr, stepKey(sr, env))
	}
	return r.runActivity(ctx, sr, tool, opts, inputs)
}

// runActivity executes one tool activity and records its attempts and usage on the step.
func (r *run) runActivity(ctx workflow.Context, sr *stepRun, tool string, opts workflow.ActivityOptions, inputs map[string]any) (any, error) {
	return r.runActivityOn(ctx, ctx, sr, tool, opts, inputs)
}

// runActivityOn is runActivity with the activity scheduled on sched, a context of another
// coroutine (a stateful MCP server's session), and waited for on ctx: the wait ends when ctx is
// cancelled (the activity ends with its session).
func (r *run) runActivityOn(ctx, sched workflow.Context, sr *stepRun, tool string, opts workflow.ActivityOptions, inputs map[string]any) (any, error) {
	if err := r.checkScope(tool, inputs); err != nil {
		return nil, err
	}
	spec, _ := toolspec.Lookup(tool)
	if err := r.checkNamespace(ctx, tool, spec, inputs); err != nil {
		return nil, err
	}
	elsewhere := sched != ctx
	if elsewhere {
		// The caller's cancellation reaches the activity through this; released when done.
		var cancel workflow.CancelFunc
		sched, cancel = workflow.WithCancel(sched)
		defer cancel()
	}
	// Waiting for the answer to a cancellation (not on another coroutine's context: that wait
	// ends with the caller's), so that an activity that completes anyway is not dropped.
	waits := r.keepsCompleted && !elsewhere
	opts.WaitForCancellation = waits
	actx := workflow.WithActivityOptions(sched, opts)
	model := tool == toolspec.LLM
	release := func() {}
	if model {
		var err error
		if release, err = r.checkBudget(ctx, sr, opts.ActivityID); err != nil {
			return nil, err
		}
		defer release() // also when the call is not made
		r.record(ctx, events.Event{Type: events.LLMStarted, Step: sr.cs.ID, Key: keyOfActivity(opts.ActivityID), Activity: opts.ActivityID, Iteration: sr.iterations})
	}
	if err := gateInputs(ctx, "the inputs of "+tool, inputs); err != nil {
		return nil, err
	}
	var res toolspec.Result
	f := workflow.ExecuteActivity(actx, tool, inputs)
	var err error
	switch {
	case waits:
		err = r.awaitActivity(ctx, f, &res)
	case !elsewhere:
		err = f.Get(ctx, &res)
	default:
		// The caller gave up: so does the activity (the deferred cancel), without waiting for it.
		sel := workflow.NewSelector(ctx)
		sel.AddFuture(f, func(f workflow.Future) { err = f.Get(ctx, &res) })
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) { err = temporal.NewCanceledError("cancelled") })
		sel.Select(ctx)
	}
	release() // before its usage is added: the call no longer holds its estimate
	if model {
		e := events.Event{Type: events.LLMFinished, Step: sr.cs.ID, Key: keyOfActivity(opts.ActivityID), Activity: opts.ActivityID, Iteration: sr.iterations}
		if err != nil {
			e.Error = errorText(err)
		} else if m, ok := res.Output.(map[string]any); ok {
			text, _ := m["text"].(string)
			e.Text = capText(text)
		}
		r.record(ctx, e)
	}
	if err != nil {
		if u := failedUsage(err); u != nil {
			r.addUsage(sr, u) // the provider billed the calls of a failed attempt too
			r.recordUsage(ctx, sr)
		}
		var ae *temporal.ActivityError
		if asActivityError(err, &ae) && ae.RetryState().String() == "MaximumAttemptsReached" {
			sr.attempts = max(sr.attempts, opts.RetryPolicy.MaximumAttempts)
		} else {
			sr.attempts = max(sr.attempts, 1)
		}
		return nil, err
	}
	sr.attempts = max(sr.attempts, res.Attempt, 1)
	r.addUsage(sr, res.Usage)
	if res.Usage != nil {
		r.recordUsage(ctx, sr)
		if model {
			sr.lastModel = tokenUsage(res.Usage, requestsOf(res.Usage))
		}
	}
	addWarnings(&sr.warnings, res.Warnings)
	return res.Output, nil
}

// failureGrace is how long a tool activity cancelled by another step's failure is given to
// answer: one that completes within it keeps its output (its side effects happened, history holds
// its result, weft retry reuses it), one that has not answered is cancelled. It bounds how much
// longer a failed run takes than the failure.
const failureGrace = 5 * time.Second

// awaitActivity waits for f, an activity scheduled with WaitForCancellation. When ctx is
// cancelled by another step's failure, the SDK has asked the activity to stop; it is given
// failureGrace to answer with its result, or its cancellation. When the run itself is cancelled,
// or ctx for another reason, the wait ends at once, as it did before the activity waited for its
// cancellation.
func (r *run) awaitActivity(ctx workflow.Context, f workflow.Future, res *toolspec.Result) error {
	var err error
	settled := false
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(f, func(f workflow.Future) { err, settled = f.Get(ctx, res), true })
	sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
	sel.Select(ctx)
	if settled {
		return err
	}
	if r.failure == nil {
		return temporal.NewCanceledError()
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	gctx, stop := workflow.WithCancel(dctx)
	defer stop()
	err = temporal.NewCanceledError()
	sel = workflow.NewSelector(gctx)
	sel.AddFuture(f, func(f workflow.Future) { err = f.Get(gctx, res) })
	sel.AddFuture(workflow.NewTimer(gctx, failureGrace), func(workflow.Future) {})
	sel.Select(gctx)
	return err
}

// summarize is the one-line description of an output shown in progress output.
// countOf is a count read from an output (a number, as JSON decodes it, or an int) with its noun;
// another value is shown as it is.
func countOf(v any, noun string) string {
	switch n := v.(type) {
	case int:
		return english.Count(n, noun)
	case int64:
		return english.Count(int(n), noun)
	case float64:
		if n == float64(int(n)) {
			return english.Count(int(n), noun)
		}
	}
	return fmt.Sprintf("%v %s", v, english.Plural(2, noun))
}

func summarize(out any) string {
	m, ok := out.(map[string]any)
	if !ok {
		if out == nil {
			return ""
		}
		return expr.TypeName(out)
	}
	switch {
	case m["decision"] != nil:
		s := fmt.Sprint(m["decision"])
		if rv, _ := m["reviewer"].(string); rv != "" {
			s += " by " + rv
		}
		return s
	case m["branchTaken"] != nil:
		return fmt.Sprintf("took %v", m["branchTaken"])
	case m["resultCount"] != nil:
		return countOf(m["resultCount"], "result")
	case m["results"] != nil:
		if a, ok := m["results"].([]any); ok {
			return english.Count(len(a), "result")
		}
	case m["models"] != nil:
		if a, ok := m["models"].([]any); ok {
			return english.Count(len(a), "model")
		}
	case m["estimates"] != nil:
		if a, ok := m["estimates"].([]any); ok {
			return english.Count(len(a), "estimate")
		}
	case m["count"] != nil:
		return countOf(m["count"], "item")
	case m["iterations"] != nil:
		return countOf(m["iterations"], "iteration")
	case m["charCount"] != nil:
		return countOf(m["charCount"], "char")
	case m["similarity"] != nil:
		return fmt.Sprintf("similarity %v", m["similarity"])
	case m["chunksCreated"] != nil:
		return countOf(m["chunksCreated"], "chunk")
	case m["text"] != nil:
		if s, ok := m["text"].(string); ok {
			return english.Count(len([]rune(s)), "char")
		}
	}
	return ""
}
