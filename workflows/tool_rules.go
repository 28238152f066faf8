package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// ChangeToolRules (workflow.GetVersion): a tool call that waits for approval is decided without
// waiting by a run-wide decision (scope "run") a person made on an earlier call of the same tool:
// approve always or reject always, as the OpenAI Agents SDK's always_approve / always_reject.
// Read when a rule would decide a call; runs recorded before it had no such decisions.
const ChangeToolRules = "tool-call-rules"

// toolRule is a run-wide decision for one tool: who made it and when.
type toolRule struct {
	decision *weftv1.ReviewDecision
	at       time.Time
}

// text is how a call's record names the rule: "approved by rule of ana at 2026-12-03T08:00:00Z".
func (t *toolRule) text() string {
	verb := "approved"
	if t.decision.Decision == runwire.DecisionReject {
		verb = "rejected"
	}
	who := t.decision.Reviewer
	if who == "" {
		who = "an unnamed reviewer"
	}
	return fmt.Sprintf("%s by rule of %s at %s", verb, who, t.at.UTC().Format(time.RFC3339))
}

// decides is the rule's decision for gate id of step.
func (t *toolRule) decides(id, step string) *weftv1.ReviewDecision {
	d := t.decision
	return &weftv1.ReviewDecision{Id: id, Step: step, Decision: d.Decision, Reviewer: d.Reviewer, Comment: d.Comment,
		ReviewerRoles: append([]string(nil), d.ReviewerRoles...), Authenticated: d.Authenticated, Scope: d.Scope}
}

// keepRule remembers decision d of gate g, when its scope is the run, as the rule for g's tool,
// and decides the other pending calls of that tool with it (parallel calls of the same answer):
// the decision said "this tool, for the rest of the run".
func (r *run) keepRule(ctx workflow.Context, g *gate, d *weftv1.ReviewDecision) {
	if d.Scope != runwire.ScopeRun || g.req.Kind != runwire.GateToolCall {
		return
	}
	if r.toolRules == nil {
		r.toolRules = map[string]*toolRule{}
	}
	rule := &toolRule{decision: d, at: workflow.Now(ctx)}
	r.toolRules[g.req.Tool] = rule
	for _, o := range r.pendingGates() {
		if o != g && o.decision == nil && o.req.Kind == runwire.GateToolCall && o.req.Tool == g.req.Tool {
			o.decision, o.rule = rule.decides(o.req.Id, o.req.Step), rule.text()
		}
	}
}

// ruleFor is the run-wide decision for a call of tool (nil: a person decides it), in runs since
// ChangeToolRules.
func (r *run) ruleFor(ctx workflow.Context, tool string) *toolRule {
	rule := r.toolRules[tool]
	if rule == nil || workflow.GetVersion(ctx, ChangeToolRules, workflow.DefaultVersion, 1) < 1 {
		return nil
	}
	return rule
}
