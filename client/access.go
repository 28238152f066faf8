package client

import (
	"context"
	"fmt"
	"time"

	"github.com/weftworks/weft/auth"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// Who may read a run or a chat session (docs/security.md, "Reads"). One rule, used by the MCP
// gateway and the console wherever they read a run's state, a chat's turns or a listing:
//
//   - nobody authenticated (who == nil: stdio MCP, the console on loopback without login) is the
//     operator and reads everything;
//   - an admin reads everything;
//   - a key reads what it started (started_by equals its name) and what nobody authenticated
//     started (started_by empty: the operator's runs from the CLI or a schedule);
//   - a key with the reviewer role reads a run or session that waits for a review it may decide
//     (reviewers see what they approve).
//
// Who may act on one: cancel, retry or fork a run, manage a schedule (docs/security.md, "Acts").
// Narrower than reads, since acting on a run changes it or spends on its behalf:
//
//   - nobody authenticated (the operator) and an admin act on every run and schedule;
//   - a key acts on the runs it started, and on nothing else: the operator's runs (started_by
//     empty) and schedules are the operator's, and the operator's policy names who else acts
//     on them by giving keys the admin role.
//
// Client operations read the caller from their context (Caller: auth.WithIdentity, which the
// MCP gateway and the console set for every request), so every surface gets the same rule, and
// a run's id a lookup did not find is answered with near ids only from the runs the caller may
// read (notFound).

// MemoStartedBy is the memo key holding the identity that started a run or chat session (absent
// when nobody authenticated started it, and on runs started before weft recorded it).
const MemoStartedBy = "startedBy"

// MayRead reports whether who may read a run or chat session that startedBy started ("" : the
// operator). who is nil when nobody authenticated. Pending reviews are not considered: see
// MayDecide and Client.CheckRead.
func MayRead(who *auth.Identity, startedBy string) bool {
	return who == nil || who.Has(auth.RoleAdmin) || startedBy == "" || startedBy == who.Name
}

// MayDecide reports whether a key with the reviewer role may decide review r: the review names
// no reviewers, or names who, or one of who's roles as "role:NAME" (the workflow enforces the
// same on the decision itself). who nil (the operator) may.
func MayDecide(who *auth.Identity, r *weftv1.ReviewRequest) bool {
	if who == nil || who.Has(auth.RoleAdmin) {
		return true
	}
	return who.Has(auth.RoleReviewer) && runwire.ReviewerListed(r.GetReviewers(), who.Name, who.Roles)
}

// ReadRefusal is the error that refuses who reading what (e.g. "execution X") started by owner.
func ReadRefusal(what, owner string, who *auth.Identity) error {
	return &RefusedError{Access: true, Msg: fmt.Sprintf("%s was started by %s: %s may read only the runs and chat sessions it started, those the operator started, and those waiting for a review it may decide with the reviewer role (or any with the admin role)", what, owner, nameOf(who))}
}

// MayAct reports whether who may cancel, retry or fork a run (or manage a schedule) that
// startedBy started ("" : the operator). who is nil when nobody authenticated.
func MayAct(who *auth.Identity, startedBy string) bool {
	return who == nil || who.Has(auth.RoleAdmin) || (startedBy != "" && startedBy == who.Name)
}

// ActRefusal is the error that refuses who doing to what (e.g. "cancel run X") what only its
// starter, owner ("" : the operator), may do.
func ActRefusal(do, what, owner string, who *auth.Identity) error {
	if owner == "" {
		return &RefusedError{Access: true, Msg: fmt.Sprintf("cannot %s %s: it is the operator's, and only the operator (the weft CLI, or the console on its own machine) and keys with the admin role may %s it; %s may %s only the runs it started", do, what, do, nameOf(who), do)}
	}
	return &RefusedError{Access: true, Msg: fmt.Sprintf("cannot %s %s: it was started by %s, and only %s and keys with the admin role may %s it; %s may %s only the runs it started", do, what, owner, owner, do, nameOf(who), do)}
}

func nameOf(who *auth.Identity) string {
	if who == nil {
		return ""
	}
	return who.Name
}

// Caller is the authenticated identity ctx carries (auth.WithIdentity: an MCP key, a console
// login), nil when nobody authenticated: the operator, who may do everything.
func Caller(ctx context.Context) *auth.Identity {
	if id, ok := auth.IdentityFrom(ctx); ok {
		return &id
	}
	return nil
}

// CheckAct refuses (*RefusedError) when ctx's caller may not do (cancel, retry, fork) to run
// id (what names it: "run X"): MayAct. A caller that may not even read the run gets the read
// refusal, as a read would; one that may read it is told who may do it.
func (c *Client) CheckAct(ctx context.Context, do, what, id string) error {
	who := Caller(ctx)
	if who == nil || who.Has(auth.RoleAdmin) {
		return nil
	}
	owner, err := c.StartedBy(ctx, id)
	if err != nil {
		return err
	}
	if MayAct(who, owner) {
		return nil
	}
	if err := c.CheckRead(ctx, what, id, who); err != nil {
		return err
	}
	return ActRefusal(do, what, owner, who)
}

// StartedBy returns the identity that started run or chat session id ("" : nobody
// authenticated), as its start request records it (RunRequest.started_by, ChatSession.StartedBy):
// it holds for child runs, continued chat sessions and runs started before the memo existed.
func (c *Client) StartedBy(ctx context.Context, id string) (string, error) {
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	a, found, err := c.startEvent(hctx, id)
	if !found {
		return "", &NotFoundError{ID: id}
	}
	if err != nil {
		if isNotFound(err) {
			return "", c.notFound(ctx, id)
		}
		return "", fmt.Errorf("run %s: reading who started it: %w", id, err)
	}
	if a == nil || len(a.GetInput().GetPayloads()) == 0 {
		return "", fmt.Errorf("run %s: its history does not start with its start request", id)
	}
	p := a.GetInput().GetPayloads()[0]
	switch t := a.GetWorkflowType().GetName(); t {
	case runwire.ChatWorkflowType:
		var s runwire.ChatSession
		if err := c.converter().FromPayload(p, &s); err != nil {
			return "", fmt.Errorf("chat session %s: reading its start request: %w", id, err)
		}
		return s.StartedBy, nil
	case runwire.WorkflowType:
		var req weftv1.RunRequest
		if err := c.converter().FromPayload(p, &req); err != nil {
			return "", fmt.Errorf("run %s: reading its start request: %w", id, err)
		}
		return req.GetStartedBy(), nil
	default:
		// weft's own helpers (a forEach's batches, notification deliveries) record no starter:
		// reading one as a run would make it everybody's
		return "", &RefusedError{Msg: fmt.Sprintf("%s is not a run or chat session (it is a %s): read the run it belongs to", id, t)}
	}
}

// CheckRead refuses (*RefusedError) when who may not read run or chat session id (what names it
// in the refusal: "execution X", "chat session X"); nil who is the operator.
func (c *Client) CheckRead(ctx context.Context, what, id string, who *auth.Identity) error {
	if who == nil || who.Has(auth.RoleAdmin) {
		return nil
	}
	ctx = auth.WithIdentity(ctx, *who) // a lookup that does not find id suggests only what who may read
	owner, err := c.StartedBy(ctx, id)
	if err != nil {
		return err
	}
	if MayRead(who, owner) {
		return nil
	}
	if who.Has(auth.RoleReviewer) {
		if st, err := c.State(ctx, id); err == nil {
			for _, r := range st.GetPendingReviews() {
				if MayDecide(who, r) {
					return nil
				}
			}
		}
	}
	return ReadRefusal(what, owner, who)
}

// Readable keeps the runs of a listing who may read. A run's starter comes from its memo; a
// child run (whose memo names its parent but not its starter) is asked for its start request.
func (c *Client) Readable(ctx context.Context, who *auth.Identity, runs []RunSummary) []RunSummary {
	if who == nil || who.Has(auth.RoleAdmin) {
		return runs
	}
	out := []RunSummary{}
	for _, r := range runs {
		owner := r.StartedBy
		if owner == "" && r.parent != "" {
			var err error
			if owner, err = c.StartedBy(ctx, r.ID); err != nil {
				continue // cannot tell: leave it out
			}
		}
		if MayRead(who, owner) {
			out = append(out, r)
		}
	}
	return out
}

// ReadableReviews keeps the pending reviews who may see: of runs it may read, and with the
// reviewer role those it may decide.
func ReadableReviews(who *auth.Identity, reviews []PendingReview) []PendingReview {
	if who == nil || who.Has(auth.RoleAdmin) {
		return reviews
	}
	out := []PendingReview{}
	for _, r := range reviews {
		if MayRead(who, r.Run.StartedBy) || MayDecide(who, r.Review) {
			out = append(out, r)
		}
	}
	return out
}
