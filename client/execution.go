package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// The run statuses, the one vocabulary every surface shows (the CLI, --json, MCP, the console,
// the Go API, eval, webhooks, AG-UI): a running run that waits for a decision is awaiting_review,
// whatever the source of that fact (its state, a child's pending gate, the WeftStatus search
// attribute); a closed run has Temporal's closing status.
const (
	RunRunning        = runwire.StatusRunning
	RunAwaitingReview = runwire.StatusAwaitingReview
	RunCompleted      = runwire.StatusCompleted
	RunFailed         = runwire.StatusFailed
	RunCancelled      = runwire.StatusCancelled
	RunTerminated     = "terminated"
	RunTimedOut       = "timed_out"
)

// RunStatus is a run's status in weft's vocabulary from what Temporal says of it (temporal:
// running, completed, failed, cancelled, terminated, timed_out, as StatusName gives them) and what
// weft knows (weft: the run's own state or WeftStatus attribute; pending: whether a review gate
// of it or of a child run waits). It is the one place the vocabulary is decided.
func RunStatus(temporal, weft string, pending bool) string {
	switch temporal {
	case "", RunRunning:
		if pending || weft == RunAwaitingReview {
			return RunAwaitingReview
		}
		if temporal == "" && weft != "" {
			return weft // Temporal was not asked: the run's own word
		}
		return RunRunning
	}
	return temporal
}

// EndStatus is how a run ended, in weft's vocabulary, from the error waiting for its result gave
// (nil: completed): a cancellation is cancelled, not failed, as Temporal records it.
func EndStatus(err error) string {
	var (
		ce *temporal.CanceledError
		te *temporal.TerminatedError
		to *temporal.TimeoutError
		ee *EndedError
	)
	switch {
	case err == nil:
		return RunCompleted
	case errors.As(err, &ce):
		return RunCancelled
	case errors.As(err, &te):
		return RunTerminated
	case errors.As(err, &ee) && ee.How == "timed out":
		return RunTimedOut
	case errors.As(err, &ee):
		return RunTerminated
	case errors.As(err, &to):
		return RunTimedOut
	}
	return RunFailed
}

// Closed says whether a run of this status has ended.
func Closed(status string) bool {
	return status != RunRunning && status != RunAwaitingReview && status != ""
}

// Status is the run's status in weft's vocabulary (RunStatus): a listing line of a run waiting for
// a review says awaiting_review.
func (r RunSummary) RunStatus() string { return RunStatus(r.Status, r.Weft, false) }

// Usage is what a run or a step consumed, in the one shape every surface shows: model tokens and
// embedding tokens apart and together, the cost, and the tool activity calls that reported usage.
type Usage struct {
	PromptTokens     int64 `json:"promptTokens"`
	CompletionTokens int64 `json:"completionTokens"`
	// ChatTokens are the model calls' tokens (prompt + completion, or the provider's total).
	ChatTokens      int64 `json:"chatTokens"`
	EmbeddingTokens int64 `json:"embeddingTokens"`
	// Tokens is every billed token: ChatTokens + EmbeddingTokens.
	Tokens  int64   `json:"tokens"`
	CostUSD float64 `json:"costUsd"`
	// Calls counts the provider requests billed (a retried attempt's and each request of a batch
	// count), one for a tool call that billed nothing (TokenUsage.calls).
	Calls int64 `json:"calls"`
}

// UsageOf reads the interpreter's TokenUsage (nil: nothing used).
func UsageOf(u *weftv1.TokenUsage) Usage {
	if u == nil {
		return Usage{}
	}
	chat := runwire.ChatTokens(u)
	return Usage{PromptTokens: u.GetPromptTokens(), CompletionTokens: u.GetCompletionTokens(), ChatTokens: chat,
		EmbeddingTokens: u.GetEmbeddingTokens(), Tokens: runwire.BilledTokens(u), CostUSD: u.GetCostUsd(), Calls: u.GetCalls()}
}

// Billed says whether anything was billed (a token or a cent): what surfaces show usage for.
func (u Usage) Billed() bool { return u.Tokens > 0 || u.CostUSD > 0 }

// String is the usage as people read it: "390 tokens (60 model: 40 in, 20 out; 330 embedding),
// $0.0012, 3 calls". Every surface that prints usage prints this (the console's listing shows its
// Tokens and CostUSD: the same numbers).
func (u Usage) String() string {
	s := fmt.Sprintf("%d %s", u.Tokens, plural(u.Tokens, "token"))
	var kinds []string
	if u.ChatTokens > 0 {
		kinds = append(kinds, fmt.Sprintf("%d model: %d in, %d out", u.ChatTokens, u.PromptTokens, u.CompletionTokens))
	}
	if u.EmbeddingTokens > 0 {
		kinds = append(kinds, fmt.Sprintf("%d embedding", u.EmbeddingTokens))
	}
	if len(kinds) > 0 {
		s += " (" + strings.Join(kinds, "; ") + ")"
	}
	if u.CostUSD > 0 {
		s += fmt.Sprintf(", $%.4f", u.CostUSD)
	}
	return s + fmt.Sprintf(", %d %s", u.Calls, plural(u.Calls, "call"))
}

// plural is word, with an s unless n is 1.
func plural(n int64, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// Execution is a run as every surface shows it, computed once by Resolve: its status in weft's
// vocabulary, its state with each step's outcome as it ended (a step of a closed run is never
// shown running or pending: it completed, failed, was cancelled in flight, was skipped or never
// ran), and its usage.
type Execution struct {
	ID       string    `json:"id"`
	Workflow string    `json:"workflow"`
	Status   string    `json:"status"`
	Closed   bool      `json:"closed"`
	Started  time.Time `json:"started,omitzero"`
	Ended    time.Time `json:"ended,omitzero"`
	Usage    Usage     `json:"usage"`
	// State is the state query's answer with Status and the steps' statuses resolved; nil when
	// the run could not be asked (StateErr says why).
	State    *weftv1.ExecutionState `json:"-"`
	StateErr string                 `json:"stateError,omitempty"`
	// Description is what Temporal said of the run (nil when it was not asked).
	Description *Description `json:"-"`
}

// Execution asks Temporal and the run (Describe, State) and resolves what they say (Resolve). A
// run whose state query fails (no worker) is still described, with StateErr.
func (c *Client) Execution(ctx context.Context, id string) (*Execution, error) {
	d, err := c.Describe(ctx, id)
	if err != nil {
		return nil, err
	}
	st, err := c.State(ctx, id)
	if err != nil {
		e := Resolve(id, d, nil)
		e.StateErr = err.Error()
		return e, nil
	}
	return Resolve(id, d, st), nil
}

// Why a step of a closed run that did not end on its own ended as it did.
const (
	// NotRunReason: the step was waiting for its dependencies when the run ended.
	NotRunReason = "the run ended before this step started"
	// TerminatedInFlight: the step was in flight when the run was terminated or timed out.
	TerminatedInFlight = "stopped: the run was terminated while the step was in flight"
)

// Resolve is the one computation of what a run is: d is what Temporal says (nil: not asked), st
// the run's state (nil: not asked; not changed, a resolved copy is returned in Execution.State).
func Resolve(id string, d *Description, st *weftv1.ExecutionState) *Execution {
	e := &Execution{ID: id, Description: d}
	temporal, weft, pending := "", "", false
	if d != nil {
		temporal, weft = d.Status, d.Weft
		e.Workflow, e.Started, e.Ended = d.Workflow, d.Started, d.Closed
	}
	if st != nil {
		st = proto.Clone(st).(*weftv1.ExecutionState)
		if temporal == "" || temporal == RunRunning {
			weft = st.GetStatus() // the run's own word is newer than the search attribute
		}
		pending = len(st.GetPendingReviews()) > 0
		if st.GetWorkflow() != "" {
			e.Workflow = st.GetWorkflow()
		}
		if e.Started.IsZero() && st.GetStartedAt() != nil {
			e.Started = st.GetStartedAt().AsTime()
		}
	}
	e.Status = RunStatus(temporal, weft, pending)
	e.Closed = Closed(e.Status)
	if st == nil {
		return e
	}
	st.Status = e.Status
	if e.Closed {
		st.PendingReviews = nil
		for _, s := range st.Steps {
			resolveStep(s, e.Status)
		}
	}
	e.State, e.Usage = st, UsageOf(st.GetUsage())
	return e
}

// resolveStep is a step's outcome in a run that ended with status.
func resolveStep(s *weftv1.StepState, status string) {
	switch s.Status {
	case runwire.StatusPending:
		s.Status = runwire.StatusNotRun
		if s.Reason == "" {
			s.Reason = NotRunReason
		}
	case runwire.StatusCancelled:
		if s.StartedAt == nil && s.Error == "" {
			// workers before StatusNotRun marked a step that never started cancelled
			s.Status, s.Reason = runwire.StatusNotRun, NotRunReason
		}
	case runwire.StatusRunning, runwire.StatusAwaitingReview:
		// The run ended while the step was in flight: terminated (the state stops where the
		// history does), or an older worker's answer.
		s.Status = runwire.StatusCancelled
		if status == RunCancelled {
			s.Error = runwire.StoppedInFlight
		} else {
			s.Error = TerminatedInFlight
		}
	case runwire.StatusFailed:
		// Workers before StoppedInFlight recorded a step cancelled with its run as failed.
		if status == RunCancelled && strings.Contains(strings.ToLower(s.Error), "cancel") {
			s.Status, s.Error = runwire.StatusCancelled, runwire.StoppedInFlight
		}
	}
}
