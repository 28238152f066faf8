package runwire

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
)

// This file holds the pure part of deciding a review, shared by the run (the review Update's
// validator) and the client (which picks the gate before it sends anything): which pending
// review a decision answers, and whether its kind is one weft knows. No workflow SDK calls.

// ReviewWording is how PickReview's refusals speak to who reads them: the CLI names a review with
// --id, the Update with "id".
type ReviewWording struct {
	// Run names the run in refusals ("run ID"); empty in the run itself ("this run").
	Run string
	// Name says how to name one review of a step: "with --id", `in "id"`.
	Name string
	// NameOrStep says how to name one review of the run: "with --id or --step", `in "id"`.
	NameOrStep string
	// All says how to decide every pending review at once ("decide them all with --all"); empty
	// when there is no way to.
	All string
	// Step, when set, explains why a step waits on no review; nil falls back to "step S is not
	// awaiting review". pending is the pending reviews' ids ("none" when there are none). The run
	// sets it: it knows its steps (no such step, not a review step, its status).
	Step func(step, pending string) error
}

// PickReview finds the pending review a decision answers: the one named id; else, with step,
// that step's review when it waits on one; else the only pending review. pending lists the open
// reviews in the order they opened. A refusal says what is pending and how to name one.
func PickReview(pending []*weftv1.ReviewRequest, id, step string, w ReviewWording) (*weftv1.ReviewRequest, error) {
	subject := w.Run
	if subject == "" {
		subject = "this run"
	}
	all := ""
	if w.All != "" {
		all = ", or " + w.All
	}
	list := reviewIDs(pending)
	if len(pending) == 0 && (w.Run != "" || (id == "" && step == "")) {
		return nil, fmt.Errorf("%s has no pending review", subject)
	}
	if id != "" {
		for _, r := range pending {
			if r.Id == id {
				return r, nil
			}
		}
		if w.Run == "" {
			return nil, fmt.Errorf("no pending review %q (pending: %s)", id, list)
		}
		return nil, fmt.Errorf("%s has no pending review %q (pending: %s)", subject, id, list)
	}
	if step != "" {
		var of []*weftv1.ReviewRequest
		for _, r := range pending {
			if r.Step == step {
				of = append(of, r)
			}
		}
		switch len(of) {
		case 0:
			if w.Step != nil {
				if err := w.Step(step, list); err != nil {
					return nil, err
				}
			}
			of := ""
			if w.Run != "" {
				of = " of " + w.Run
			}
			return nil, fmt.Errorf("step %q%s is not awaiting review (pending: %s)", step, of, list)
		case 1:
			return of[0], nil
		}
		return nil, fmt.Errorf("step %q has %d pending reviews (%s): name one %s%s", step, len(of), reviewIDs(of), w.Name, all)
	}
	if len(pending) == 1 {
		return pending[0], nil
	}
	return nil, fmt.Errorf("%s has %d pending reviews (%s): name one %s%s", subject, len(pending), list, w.NameOrStep, all)
}

// reviewIDs lists the reviews' ids for messages ("none" for none).
func reviewIDs(list []*weftv1.ReviewRequest) string {
	if len(list) == 0 {
		return "none"
	}
	ids := make([]string, len(list))
	for i, r := range list {
		ids[i] = r.Id
	}
	return strings.Join(ids, ", ")
}

// CheckDecisionKind says what is wrong with a decision's kind: approve and reject stand alone, an
// edit needs data (the corrected proposal).
func CheckDecisionKind(decision string, hasData bool) error {
	switch decision {
	case DecisionApprove, DecisionReject:
	case DecisionEdit:
		if !hasData {
			return errors.New("an edit decision needs data: the corrected proposal")
		}
	default:
		return fmt.Errorf("decision %q is not approve, edit or reject", decision)
	}
	return nil
}

// ScopeRun is a decision's scope (ReviewDecision.scope) that decides an agent's tool call and
// every later call of that tool in the run, without waiting: approve always or reject always.
const ScopeRun = "run"

// CheckDecisionScope says what is wrong with a decision's scope: empty (this gate) or ScopeRun
// with approve or reject (an edit is for one call's arguments).
func CheckDecisionScope(decision, scope string) error {
	switch scope {
	case "":
		return nil
	case ScopeRun:
		if decision == DecisionEdit {
			return errors.New(`scope "run" decides the tool's later calls too, as approve or reject: an edit is for this call's arguments; send it without the scope`)
		}
		return nil
	}
	return fmt.Errorf(`scope %q is not "run" (decide this tool's later calls in the run too) or empty (this call only)`, scope)
}

// RoleAdmin is the role that may decide any review, whoever its reviewers are: the run's
// validator (workflows) lets a decision carrying it through, as the client does for a caller
// holding it. It is auth's admin role (auth.RoleAdmin, the same string): auth sits below
// runwire (internal/layers) and keeps its own name beside its other roles, and
// TestRoleAdminIsAuths holds the two equal.
const RoleAdmin = "admin"

// ReviewerListed reports whether a review's reviewers let name (with roles) decide it: the list
// is empty, names it, or names one of its roles as "role:NAME". An admin (RoleAdmin) is let
// through by the callers, which check the role first.
func ReviewerListed(reviewers []string, name string, roles []string) bool {
	if len(reviewers) == 0 {
		return true
	}
	for _, rv := range reviewers {
		if role, ok := strings.CutPrefix(rv, "role:"); ok {
			if slices.Contains(roles, role) {
				return true
			}
		} else if rv == name && name != "" {
			return true
		}
	}
	return false
}
