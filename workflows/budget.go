package workflows

import (
	"fmt"
	"strconv"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/events"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
)

// ChangeBudget (workflow.GetVersion): a model call that would pass the file's budget or its
// step's is not made and the step fails with runwire.ErrBudgetExceeded (version 1); the model
// calls in flight hold their estimates against both budgets until they answer (version 2). Read
// once per run, at the first model call of a run whose file declares a budget; runs recorded
// before it made every call, runs recorded at version 1 checked each call against what was spent
// only.
const ChangeBudget = "budget-stops-model-calls"

// budgetState is what the run knows of ChangeBudget: read (asked once), on (version 1) and
// holds (version 2: calls in flight hold their estimates).
type budgetState struct{ read, on, holds bool }

// held is what the model calls in flight are estimated at: made, not yet answered.
type held struct{ tokens, cost float64 }

func (h *held) add(u *weftv1.TokenUsage, sign float64) {
	h.tokens += sign * float64(runwire.BilledTokens(u))
	h.cost += sign * u.GetCostUsd()
}

// overBudget is a budget a model call would pass: which (the file's or the step's, and which
// limit), the limit, what was spent and what the next call is estimated at, in the limit's unit.
type overBudget struct {
	name                string // budget.maxTokens, steps.ID.budget.maxCostUsd
	tokens              bool
	limit, spent, guess float64
	held                float64 // by the calls in flight (ChangeBudget version 2)
}

// checkBudget is called before each model call of step sr (activity id: the call's): it fails
// the call when the call would pass the file's budget or the step's. The spent amounts are the
// run's usage and the step's, as every surface shows them (r.usage, sr.usage: added once, in
// addUsage); the call's own size is estimated as the step's previous model call (sr.lastModel),
// since an agent's conversation only grows: a step's first call is made whenever the spent total is
// under the limit, and may pass it by its own size (docs/agents.md). A call that is made holds
// its estimate against both budgets until it answers (ChangeBudget version 2), so calls in flight
// together (a forEach's items, parallel steps) cannot each spend the same remainder: the release
// returned (once or more) is called when the call has answered, before its usage is added.
func (r *run) checkBudget(ctx workflow.Context, sr *stepRun, activityID string) (release func(), err error) {
	release = func() {}
	var file *dsl.Budget
	if r.wf != nil && r.wf.Def != nil {
		file = r.wf.Def.Budget
	}
	step := sr.cs.Budget
	if file == nil && step == nil {
		return release, nil
	}
	if !r.budget.read {
		r.budget.read = true
		v := workflow.GetVersion(ctx, ChangeBudget, workflow.DefaultVersion, 2)
		r.budget.on, r.budget.holds = v >= 1, v >= 2
	}
	if !r.budget.on {
		return release, nil
	}
	var runHeld, stepHeld held
	if r.budget.holds {
		runHeld, stepHeld = r.held, sr.held
	}
	over := passes("budget", file, &r.usage, sr.lastModel, runHeld)
	if over == nil {
		over = passes("steps."+sr.cs.ID+".budget", step, &sr.usage, sr.lastModel, stepHeld)
	}
	if over == nil {
		if !r.budget.holds || sr.lastModel == nil {
			return release, nil
		}
		estimate := sr.lastModel
		r.held.add(estimate, 1)
		sr.held.add(estimate, 1)
		released := false
		return func() {
			if !released {
				released = true
				r.held.add(estimate, -1)
				sr.held.add(estimate, -1)
			}
		}, nil
	}
	msg := over.message(sr.cs.ID)
	r.record(ctx, events.Event{Type: events.BudgetExceeded, Step: sr.cs.ID, Key: keyOfActivity(activityID), Iteration: sr.iterations,
		Budget: over.name, Spent: over.spent, Limit: over.limit, Reason: msg, Usage: copyUsage(&r.usage)})
	return release, temporal.NewNonRetryableApplicationError(msg, runwire.ErrBudgetExceeded, nil)
}

// passes is the first limit of b (tokens, then cost) that the next call would pass, spent
// having been used, inFlight held by the calls in flight, and last being the step's previous
// model call (its estimate); nil: none.
func passes(name string, b *dsl.Budget, spent, last *weftv1.TokenUsage, inFlight held) *overBudget {
	if b == nil {
		return nil
	}
	if b.MaxTokens > 0 {
		o := overBudget{name: name + ".maxTokens", tokens: true, limit: float64(b.MaxTokens),
			spent: float64(runwire.BilledTokens(spent)), guess: float64(runwire.BilledTokens(last)), held: inFlight.tokens}
		if o.spent >= o.limit || o.spent+o.held+o.guess > o.limit {
			return &o
		}
	}
	if b.MaxCostUSD > 0 {
		o := overBudget{name: name + ".maxCostUsd", limit: b.MaxCostUSD, spent: spent.GetCostUsd(), guess: last.GetCostUsd(), held: inFlight.cost}
		if o.spent >= o.limit || o.spent+o.held+o.guess > o.limit {
			return &o
		}
	}
	return nil
}

// amount is v in the limit's unit: "40 tokens", "$0.0031".
func (o *overBudget) amount(v float64) string {
	if o.tokens {
		return strconv.FormatInt(int64(v), 10) + " tokens"
	}
	return "$" + strconv.FormatFloat(v, 'f', -1, 64)
}

// message says which budget, what was spent, the limit, and what to change.
func (o *overBudget) message(step string) string {
	whose, used, fix := fmt.Sprintf("step %q's", step), "the step has used", fmt.Sprintf("raise %s in the workflow file", o.name)
	if strings.HasPrefix(o.name, "budget.") {
		whose, used = "the workflow's", "the run has used"
	}
	why := fmt.Sprintf("%s %s", used, o.amount(o.spent))
	if o.spent < o.limit {
		if o.held > 0 {
			why += fmt.Sprintf(", its model calls in flight are estimated at %s more,", o.amount(o.held))
		}
		why += fmt.Sprintf(" and its next model call is estimated at %s more (the step's previous call)", o.amount(o.guess))
	}
	return fmt.Sprintf("budget exceeded: %s %s is %s and %s, so the model call was not made. To go on, %s, or have the step use less (a shorter prompt or context, a lower maxTokens, fewer maxIterations)",
		whose, o.name, o.amount(o.limit), why, fix)
}
