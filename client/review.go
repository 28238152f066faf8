package client

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	tclient "go.temporal.io/sdk/client"

	"github.com/weftworks/weft/auth"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// Decision answers one review gate.
type Decision struct {
	// ID names the gate (ReviewRequest.id). Step may name it instead when that step has one
	// pending gate; both may be left out when the run (with its children) has one pending gate.
	ID       string
	Step     string
	Decision string // approve | edit | reject
	// Data replaces the proposal on edit (any JSON value).
	Data any
	// Reviewer is a label when nobody authenticated (the CLI on the operator's machine); it is
	// ignored when By is set.
	Reviewer string
	Comment  string
	// Digest is the ReviewRequest.digest of what the reviewer was shown: the run refuses the
	// decision when the gate's data changed since. Empty: not bound.
	Digest string
	// By is the authenticated reviewer (an MCP key, a console login): the decision records its
	// name and roles as authenticated, and the gate checks them against its reviewers. Nil:
	// nobody authenticated.
	By *auth.Identity
	// Scope runwire.ScopeRun ("run"): an approve or reject of an agent's tool call that also
	// decides the later calls of that tool in the run, without waiting (approve always, reject
	// always). Empty: this gate only.
	Scope string
}

// Check says what is wrong with a decision before anything is sent (the run checks it again):
// runwire.CheckDecisionKind.
func (d Decision) Check() error {
	if err := runwire.CheckDecisionKind(d.Decision, d.Data != nil); err != nil {
		return &InvalidError{Err: err}
	}
	if err := runwire.CheckDecisionScope(d.Decision, d.Scope); err != nil {
		return &InvalidError{Err: err}
	}
	return nil
}

// Pending lists the run's pending review gates, its children's included.
func (c *Client) Pending(ctx context.Context, runID string) ([]*weftv1.ReviewRequest, error) {
	st, err := c.State(ctx, runID)
	if err != nil {
		return nil, err
	}
	return st.PendingReviews, nil
}

// pick finds the one gate a decision is meant for (runwire.PickReview, in the CLI's words).
func pick(runID string, pending []*weftv1.ReviewRequest, d Decision) (*weftv1.ReviewRequest, error) {
	r, err := runwire.PickReview(pending, d.ID, d.Step, runwire.ReviewWording{Run: "run " + runID,
		Name: "with --id", NameOrStep: "with --id or --step", All: "decide them all with --all"})
	if err != nil {
		// not pending, unless it is the choice among several gates that was left open
		notPending := len(pending) == 0 || d.ID != ""
		if !notPending && d.Step != "" {
			notPending = true
			for _, g := range pending {
				if g.Step == d.Step {
					notPending = false
				}
			}
		}
		return nil, &RefusedError{Msg: err.Error(), NotPending: notPending}
	}
	return r, nil
}

// Review sends a decision to the gate it names, as the `review` Update: the run validates it
// first and nothing reaches history when it is refused (*RefusedError with the run's reason).
func (c *Client) Review(ctx context.Context, runID string, d Decision) (*weftv1.ReviewDecision, error) {
	if err := d.Check(); err != nil {
		return nil, err
	}
	pending, err := c.Pending(ctx, runID)
	if err != nil {
		return nil, err
	}
	gate, err := pick(runID, pending, d)
	if err != nil {
		return nil, err
	}
	return c.decide(ctx, gate, d)
}

// ReviewAll sends the same decision to every pending gate (of step, when not empty), one by one,
// and returns what it decided. Gates are decided in the order the run lists them.
func (c *Client) ReviewAll(ctx context.Context, runID, step string, d Decision) ([]*weftv1.ReviewDecision, error) {
	if err := d.Check(); err != nil {
		return nil, err
	}
	pending, err := c.Pending(ctx, runID)
	if err != nil {
		return nil, err
	}
	var out []*weftv1.ReviewDecision
	for _, r := range pending {
		if step != "" && r.Step != step {
			continue
		}
		res, err := c.decide(ctx, r, d)
		if err != nil {
			return out, err
		}
		out = append(out, res)
	}
	if len(out) == 0 {
		return nil, &RefusedError{Msg: fmt.Sprintf("run %s has no pending review to decide", runID)}
	}
	return out, nil
}

// decisionJSON is the review Update's argument (proto JSON of weftv1.ReviewDecision).
func decisionJSON(gate *weftv1.ReviewRequest, d Decision) ([]byte, error) {
	payload := map[string]any{"id": gate.Id, "decision": d.Decision, "reviewer": d.Reviewer, "comment": d.Comment}
	if d.By != nil {
		payload["reviewer"], payload["reviewerRoles"], payload["authenticated"] = d.By.Name, d.By.Roles, true
	}
	if d.Digest != "" {
		payload["digest"] = d.Digest
	}
	if d.Scope != "" {
		payload["scope"] = d.Scope
	}
	if d.Data != nil {
		payload["data"] = d.Data
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return nil, &InvalidError{Err: fmt.Errorf("review data: %w", err)}
	}
	return b, nil
}

func (c *Client) decide(ctx context.Context, gate *weftv1.ReviewRequest, d Decision) (*weftv1.ReviewDecision, error) {
	b, err := decisionJSON(gate, d)
	if err != nil {
		return nil, err
	}
	// Refused here, not by the run: a refused Update's answer carries the request back, and
	// one over Temporal's 2 MB would fail the run's workflow task instead.
	if pd, perr := runwire.ParseDecision(b); perr == nil {
		if err := runwire.CheckDecisionSize(gate.Id, pd); err != nil {
			return nil, &InvalidError{Err: err}
		}
	}
	uctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	h, err := c.t.UpdateWorkflow(uctx, tclient.UpdateWorkflowOptions{
		WorkflowID: gate.ExecutionId, UpdateName: runwire.UpdateReview,
		Args: []any{json.RawMessage(b)}, WaitForStage: tclient.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		var res weftv1.ReviewDecision
		if err = h.Get(uctx, &res); err == nil {
			return &res, nil
		}
	}
	if isNotFound(err) {
		return nil, c.notFound(ctx, gate.ExecutionId)
	}
	return nil, &RefusedError{Msg: "review refused: " + Cause(err)}
}
