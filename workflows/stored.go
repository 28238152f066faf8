package workflows

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/dsl"
	"github.com/weftworks/weft/workflows/expr"
)

// Large values are not in workflow history: a tool's output over the claim-check threshold is
// kept in the knowledge store and the step's output holds a reference ({"$weftBlob": id, ...}).
// Workflow code cannot read the store, so a template or expression that would look inside a
// stored value (a field, its length, text around it, a condition on it) is evaluated by the
// evaluate activity (toolspec.ActivityEvaluate), which reads the values, evaluates the same
// source with the same engine (Evaluate) and stores a large result again. A template that is
// exactly one path ({{ page.output.text }}) hands what it finds on whole, reference included, at
// no cost where the consumer resolves references itself (tool activities, an agent's model
// calls, a child run's own templates). Everything else is evaluated here as before.

// ChangeStoredValues (workflow.GetVersion): templates that look inside a stored value see the
// value. Runs that met a stored value before this change replay as they ran (they saw the
// reference); runs that never meet one record no marker.
const ChangeStoredValues = "templates-read-stored-values"

// evaluateTimeout bounds one evaluate activity (reading large values included).
const evaluateTimeout = 2 * time.Minute

// maxEvaluateInput bounds the environment sent to one evaluation (Temporal refuses payloads over
// 2 MB).
const maxEvaluateInput = 1536 << 10

// readsStoredValues reports whether this run evaluates reads of stored values in the activity.
// Called only where a stored value would be read, so the marker is recorded only by such runs.
func readsStoredValues(ctx workflow.Context) bool {
	return workflow.GetVersion(ctx, ChangeStoredValues, workflow.DefaultVersion, 1) >= 1
}

// segIndex parses a path segment that indexes an array.
func segIndex(seg string) (int, bool) {
	n, err := strconv.Atoi(seg)
	return n, err == nil && n >= 0 && strconv.Itoa(n) == seg
}

// step follows one path segment the way expressions do (expr.Get).
func step(v any, seg string) any {
	switch x := v.(type) {
	case map[string]any:
		return x[seg]
	case []any:
		if i, ok := segIndex(seg); ok {
			return expr.Get(x, i)
		}
	}
	return expr.Get(v, seg)
}

// readsStored reports whether an expression with these references would look inside a stored
// value in env: a path through a reference, or a value holding one that the expression uses
// (whole: the expression is that one path and its value is handed on unchanged, references
// included, which is not looking inside).
func readsStored(refs []expr.Ref, env map[string]any, whole bool) bool {
	for _, ref := range refs {
		v, ok := env[ref.Root]
		if !ok {
			continue
		}
		for _, seg := range ref.Path {
			if toolspec.IsBlob(v) {
				return true
			}
			v = step(v, seg)
		}
		if !whole && toolspec.HoldsBlob(v) {
			return true
		}
	}
	return false
}

// isWholePath reports whether a template is exactly one {{ path }}.
func isWholePath(t *expr.Template) bool { return t.IsSingle() && t.Programs()[0].IsPath() }

// evalError is an evaluation the activity refused (the template or step is wrong): its message
// is the one evaluating here would give.
type evalError struct{ msg string }

func (e *evalError) Error() string { return e.msg }

// activityFailed reports whether err is the evaluate activity's own failure (it could not read
// or store a value), not a problem with the template.
func activityFailed(err error) bool {
	var ae *temporal.ActivityError
	var ce *temporal.CanceledError
	return errors.As(err, &ae) || errors.As(err, &ce)
}

// evaluate runs the evaluate activity for jobs that read refs in env.
func evaluate(ctx workflow.Context, jobs []toolspec.EvalJob, refs []expr.Ref, env map[string]any) ([]any, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: evaluateTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        30 * time.Second,
			MaximumAttempts:        5,
			NonRetryableErrorTypes: []string{toolspec.ErrInvalidInput, toolspec.ErrMissingConfig},
		},
		Summary: "evaluate templates over stored values",
	})
	req := toolspec.EvalRequest{Jobs: jobs, Env: pruneEnv(env, refs)}
	if n := jsonSize(req.Env); n > maxEvaluateInput {
		// Temporal would refuse the activity's input and the run would stop making progress.
		return nil, &evalError{msg: fmt.Sprintf(
			"a template over stored values also reads %d KiB of step outputs kept in history, more than weft hands to one evaluation (%d KiB): read fields of those outputs instead of whole outputs",
			n>>10, maxEvaluateInput>>10)}
	}
	var res toolspec.EvalResult
	err := workflow.ExecuteActivity(actx, toolspec.ActivityEvaluate, req).Get(actx, &res)
	if err != nil {
		var ae *temporal.ApplicationError
		if errors.As(err, &ae) && ae.Type() == toolspec.ErrInvalidInput {
			return nil, &evalError{msg: ae.Message()}
		}
		return nil, err
	}
	if len(res.Values) != len(jobs) {
		return nil, fmt.Errorf("internal: the evaluate activity returned %d values for %d templates", len(res.Values), len(jobs))
	}
	return res.Values, nil
}

// resolveValue renders val in env as val.Resolve does; the templates that would look inside a
// stored value are rendered by one evaluate activity. With whole, a template that is exactly one
// path hands its value on as it is (the consumer resolves references).
func resolveValue(ctx workflow.Context, val *expr.Value, env map[string]any, whole bool) (any, error) {
	if !readsStored(val.Refs(), env, false) {
		return val.Resolve(env) // no stored value in reach: the common case, unchanged
	}
	var paths []string
	var jobs []toolspec.EvalJob
	var refs []expr.Ref
	val.Each(func(path string, t *expr.Template) {
		if readsStored(t.Refs(), env, whole && isWholePath(t)) {
			paths = append(paths, path)
			jobs = append(jobs, toolspec.EvalJob{Kind: toolspec.EvalTemplate, Source: t.Source()})
			refs = append(refs, t.Refs()...)
		}
	})
	if len(jobs) == 0 || !readsStoredValues(ctx) {
		return val.Resolve(env)
	}
	values, err := evaluate(ctx, jobs, refs, env)
	if err != nil {
		return nil, err
	}
	remote := make(map[string]any, len(paths))
	for i, p := range paths {
		remote[p] = values[i]
	}
	return val.ResolveWith(func(path string, t *expr.Template) (any, error) {
		if v, ok := remote[path]; ok {
			return v, nil
		}
		return t.Render(env)
	})
}

// evalBool evaluates a condition; one that looks inside a stored value is evaluated by the
// evaluate activity.
func evalBool(ctx workflow.Context, p *expr.Program, env map[string]any) (bool, error) {
	if !readsStored(p.Refs(), env, false) || !readsStoredValues(ctx) {
		return p.EvalBool(env)
	}
	values, err := evaluate(ctx, []toolspec.EvalJob{{Kind: toolspec.EvalBool, Source: p.Source()}}, p.Refs(), env)
	if err != nil {
		return false, err
	}
	b, _ := values[0].(bool)
	return b, nil
}

// evalItems evaluates a forEach expression: a list (or a step output holding results). One that
// looks inside a stored value, or whose list is itself stored, is evaluated by the evaluate
// activity, which hands the list back with its large items stored one by one.
func evalItems(ctx workflow.Context, p *expr.Program, env map[string]any) (any, error) {
	if !readsStored(p.Refs(), env, p.IsPath()) {
		v, err := p.Eval(env)
		if err != nil {
			return nil, err
		}
		return storedItems(ctx, v)
	}
	if !readsStoredValues(ctx) {
		return p.Eval(env)
	}
	values, err := evaluate(ctx, []toolspec.EvalJob{{Kind: toolspec.EvalItems, Source: p.Source()}}, p.Refs(), env)
	if err != nil {
		return nil, err
	}
	return values[0], nil
}

// storedItems returns the list a stored list (or a step output whose results are stored) stands
// for, its large items as references; any other value is returned as it is.
func storedItems(ctx workflow.Context, v any) (any, error) {
	m, _ := v.(map[string]any)
	if !toolspec.IsBlob(v) && (m == nil || !toolspec.IsBlob(m["results"])) {
		return v, nil
	}
	if !readsStoredValues(ctx) {
		return v, nil
	}
	values, err := evaluate(ctx, []toolspec.EvalJob{{Kind: toolspec.EvalItems, Source: "items"}},
		[]expr.Ref{{Root: "items"}}, map[string]any{"items": v})
	if err != nil {
		return nil, err
	}
	return values[0], nil
}

// inlineReadsStored reports whether inline data step cs would look inside a stored value in env
// (data tools read their inputs in workflow code, so a reference passed whole counts).
func inlineReadsStored(cs *dsl.CompiledStep, env map[string]any) bool {
	return readsStored(inlineRefs(cs), env, false)
}

func inlineRefs(cs *dsl.CompiledStep) []expr.Ref {
	refs := append([]expr.Ref(nil), cs.InputValue.Refs()...)
	return append(refs, cs.CompiledRefs()...)
}

// runInlineStored runs inline data step cs in the evaluate activity; its output is kept in the
// store when large, as a tool's is.
func runInlineStored(ctx workflow.Context, cs *dsl.CompiledStep, env map[string]any) (any, error) {
	values, err := evaluate(ctx, []toolspec.EvalJob{inlineJob(cs)}, inlineRefs(cs), env)
	if err != nil {
		var ee *evalError
		if errors.As(err, &ee) {
			return nil, temporal.NewNonRetryableApplicationError(ee.msg, toolspec.ErrInvalidInput, nil)
		}
		return nil, err
	}
	return values[0], nil
}

// pathNode is one place in the environment an expression reads: whole, or only the children.
type pathNode struct {
	kids  map[string]*pathNode
	whole bool
}

func (n *pathNode) kid(seg string) *pathNode {
	if n.kids == nil {
		n.kids = map[string]*pathNode{}
	}
	k := n.kids[seg]
	if k == nil {
		k = &pathNode{}
		n.kids[seg] = k
	}
	return k
}

// pruneEnv returns the part of env that expressions with refs can read: along each reference's
// path only the fields and items it names, at its end (or where it meets a stored value, a
// string or a list's length) the whole value. What an evaluation reads there is the same as in
// env, and the activity's input stays small.
func pruneEnv(env map[string]any, refs []expr.Ref) map[string]any {
	root := &pathNode{}
	for _, ref := range refs {
		v, ok := env[ref.Root]
		if !ok {
			continue
		}
		n := root.kid(ref.Root)
		for _, seg := range ref.Path {
			if n.whole {
				break
			}
			descend := false
			switch x := v.(type) {
			case map[string]any:
				descend = !toolspec.IsBlob(x)
			case []any:
				_, descend = segIndex(seg)
			}
			if !descend {
				break
			}
			n = n.kid(seg)
			v = step(v, seg)
		}
		n.whole, n.kids = true, nil
	}
	out := make(map[string]any, len(root.kids))
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for k, n := range root.kids {
		out[k] = materialize(n, env[k])
	}
	return out
}

func materialize(n *pathNode, v any) any {
	if n.whole {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(n.kids))
		//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
		for k, kid := range n.kids {
			if e, ok := x[k]; ok {
				out[k] = materialize(kid, e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
		for k, kid := range n.kids {
			if i, ok := segIndex(k); ok && i < len(x) {
				out[i] = materialize(kid, x[i])
			}
		}
		return out
	}
	return v
}
