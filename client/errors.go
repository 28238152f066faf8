package client

import (
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/weftworks/weft/runwire"
)

// NotFoundError: no run has the id (no schedule, when Schedule is set). Near lists recent runs
// with a similar id.
type NotFoundError struct {
	ID       string
	Near     []string
	Schedule bool
}

func (e *NotFoundError) Error() string {
	if e.Schedule {
		return fmt.Sprintf("no schedule named %q; list the schedules with `weft schedule list` (MCP: weft_schedules)", e.ID)
	}
	s := fmt.Sprintf("no run %q", e.ID)
	if len(e.Near) > 0 {
		s += " (did you mean " + strings.Join(e.Near, ", ") + "?)"
	} else {
		s += "; list recent runs with `weft runs`"
	}
	return s
}

// FinishedError: the operation needs a running run and this one has ended.
type FinishedError struct {
	ID     string
	Status string // completed, failed, cancelled, terminated, timed_out, ...
	What   string // what could not be done
}

func (e *FinishedError) Error() string {
	return fmt.Sprintf("cannot %s %s: it already %s", e.What, e.ID, pastTense(e.Status))
}

func pastTense(status string) string {
	switch status {
	case "completed", "failed", "cancelled", "canceled", "terminated":
		return status
	case "timed_out":
		return "timed out"
	case "continued_as_new":
		return "continued as new"
	}
	return "ended (" + status + ")"
}

// AlreadyRunningError: a run with the requested id is still running.
type AlreadyRunningError struct {
	ID       string
	Workflow string
}

func (e *AlreadyRunningError) Error() string {
	w := ""
	if e.Workflow != "" {
		w = " (workflow " + e.Workflow + ")"
	}
	return fmt.Sprintf("a run with id %q is already running%s; choose another --id, or follow that one with `weft status --follow %s`", e.ID, w, e.ID)
}

// RefusedError: the run refused a request (a review decision that does not fit a pending gate).
type RefusedError struct {
	Msg string
	// NotPending: the review a decision named waits no more in the run, or the run has none (it
	// was decided, or the run ended, elsewhere): Review refused before sending anything.
	NotPending bool
	// Access: the caller may not read or act on what it named (not its own): ReadRefusal,
	// ActRefusal. The console answers it with 403.
	Access bool
}

func (e *RefusedError) Error() string { return e.Msg }

// InvalidError: the caller's input is wrong (a workflow, inputs, an id); nothing was started.
type InvalidError struct{ Err error }

func (e *InvalidError) Error() string { return e.Err.Error() }
func (e *InvalidError) Unwrap() error { return e.Err }

// IsInvalid reports whether err is the caller's mistake (exit 2 for the CLI).
func IsInvalid(err error) bool {
	var ie *InvalidError
	var re *RefusedError
	var nf *NotFoundError
	var ar *AlreadyRunningError
	return errors.As(err, &ie) || errors.As(err, &re) || errors.As(err, &nf) || errors.As(err, &ar)
}

// Cause is the message people need from a run or step error: the innermost application error
// ("step \"x\": ...") without Temporal's wrappers ("workflow execution error (...)",
// "activity error (type: ..., scheduledEventID: ...)", "(type: X, retryable: false)").
func Cause(err error) string {
	if err == nil {
		return ""
	}
	var ee *EndedError
	if errors.As(err, &ee) {
		return ee.Error()
	}
	var te *temporal.TerminatedError
	if errors.As(err, &te) {
		return "terminated (by an operator, or by Temporal when the run exceeded a limit such as its history size: see `temporal workflow describe`)"
	}
	return runwire.ErrorText(err)
}

func isNotFound(err error) bool {
	var nf *serviceerror.NotFound
	return errors.As(err, &nf)
}

// IsNotPending reports whether err refused a decision because the review it named waits no more
// in a run that exists (RefusedError.NotPending): someone else decided it, or the run ended.
func IsNotPending(err error) bool {
	var re *RefusedError
	return errors.As(err, &re) && re.NotPending
}

// RunError is a run that did not complete, as a Go program gets it from Run (and the Go API's
// Get, Run and Stream): its message is the run's id and the cause once (Cause), not Temporal's
// error chain around it; the chain is still there for errors.As (Unwrap).
type RunError struct {
	ID    string
	Cause string
	Err   error
}

func (e *RunError) Error() string { return fmt.Sprintf("run %s: %s", e.ID, e.Cause) }
func (e *RunError) Unwrap() error { return e.Err }

// NewRunError wraps what waiting for run id's result returned (nil stays nil).
func NewRunError(id string, err error) error {
	if err == nil {
		return nil
	}
	var re *RunError
	if errors.As(err, &re) {
		return err
	}
	return &RunError{ID: id, Cause: Cause(err), Err: err}
}

// decodeError is err of reading what (a run's state, events, result) with advice when the payload
// is encoded (weft's codec: compressed or encrypted) and this process has no codec for it.
func decodeError(id, what string, err error) error {
	if errors.Is(err, converter.ErrEncodingIsNotSupported) || strings.Contains(err.Error(), "payload encoding is not supported") {
		return fmt.Errorf("run %s: reading %s: its payloads are encoded by weft's codec (compressed or encrypted) and this process has none for them: set WEFT_CODEC_KEYS (or WEFT_CODEC_KEY_FILE) to the worker's keys, as `weft dev` and the worker have them: %w", id, what, err)
	}
	return fmt.Errorf("run %s: reading %s: %w", id, what, err)
}
