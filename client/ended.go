package client

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
)

// EndedError is a run that Temporal itself (or an operator) ended: terminated or timed out. It
// says which limit, or who, and what to change.
type EndedError struct {
	How    string // terminated | timed out
	Reason string // Temporal's reason, as recorded in the run's last event
	By     string // the identity that terminated it
	Advice string
	Err    error
}

func (e *EndedError) Error() string {
	msg := "the run was " + e.How
	if e.By != "" {
		msg += " by " + e.By
	}
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	if e.Advice != "" {
		msg += " — " + e.Advice
	}
	return msg
}

func (e *EndedError) Unwrap() error { return e.Err }

// historyLimitAdvice is what to change when a run's history outgrew Temporal's limits.
const historyLimitAdvice = "Temporal ends a run whose history passes its limits (51,200 events or 50 MB by default; a forEach " +
	"item costs about 3 events, so roughly 15,000 items in one run). Split large forEach steps into batches run by a " +
	"`workflow` step (each child run has a history of its own), or pass fewer items per run"

// ended explains why a terminated or timed-out run ended, from its close event.
func (c *Client) ended(ctx context.Context, id string) *EndedError {
	it := c.t.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil
		}
		if a := ev.GetWorkflowExecutionTerminatedEventAttributes(); a != nil {
			e := &EndedError{How: "terminated", Reason: a.GetReason(), By: a.GetIdentity()}
			r := strings.ToLower(a.GetReason())
			switch {
			case strings.Contains(r, "history") && strings.Contains(r, "exceeds limit"):
				e.By = "Temporal"
				e.Advice = historyLimitAdvice + fmt.Sprintf(" (this run reached %d events)", ev.GetEventId())
			case e.Reason == "":
				e.Advice = "no reason was given: ask whoever operates the Temporal cluster, or see `temporal workflow describe`"
			}
			return e
		}
		if ev.GetWorkflowExecutionTimedOutEventAttributes() != nil {
			return &EndedError{How: "timed out", By: "Temporal",
				Reason: "it ran longer than the execution timeout it was started with",
				Advice: "start it without a timeout or with a longer one; `weft retry` resumes it, reusing what completed"}
		}
	}
	return nil
}

// explain replaces a terminated or timed-out run's bare error with an EndedError.
func (c *Client) explain(ctx context.Context, id string, err error) error {
	var te *temporal.TerminatedError
	var to *temporal.TimeoutError
	if !errors.As(err, &te) && !errors.As(err, &to) {
		return err
	}
	if e := c.ended(ctx, id); e != nil {
		e.Err = err
		return e
	}
	return err
}
