package events

import (
	"encoding/json"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/weftworks/weft/internal/wirejson"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
)

// Event types, in the order a run records them. The JSONL of `weft run --json --verbose` is one
// Event per line.
const (
	RunStarted       = "run_started"
	StepStarted      = "step_started"
	StepCompleted    = "step_completed"
	StepFailed       = "step_failed"
	StepSkipped      = "step_skipped"
	StepCancelled    = "step_cancelled"
	ItemStarted      = "item_started"
	ItemCompleted    = "item_completed"
	ItemFailed       = "item_failed"
	Iteration        = "iteration_started"
	LLMStarted       = "llm_started"
	LLMFinished      = "llm_finished"
	ToolCallStarted  = "tool_call_started"
	ToolCallFinished = "tool_call_finished"
	ReviewRequested  = "review_requested"
	ReviewDecided    = "review_decided"
	Usage            = "usage"
	ChildStarted     = "child_started"
	// GuardrailTripped: an agent's guardrail check tripped (Guardrail, Stage, Reason); the step
	// fails or returns with stopReason guardrail after it.
	GuardrailTripped = "guardrail_tripped"
	// BudgetExceeded: a model call was not made because it would have passed a budget (Budget
	// names it, Spent and Limit in its unit, Reason says so); the step fails next.
	BudgetExceeded = "budget_exceeded"
	// Handoff: an agent passed the conversation to another (From, To) in its step.
	Handoff = "handoff"
	// MCPSessionLost: the worker that held a stateful MCP server's session (Server) is gone; the
	// call runs again in a fresh session, without what the server held (Reason).
	MCPSessionLost = "mcp_session_lost"
	RunCompleted   = "run_completed"
	RunFailed      = "run_failed"
)

// Event types a follower adds to the run's own (the run never records them).
const (
	// LLMDelta is text a running model call streamed (read from its heartbeats): Attempt and
	// Offset place it.
	LLMDelta = "llm_delta"
	// SkippedEvents: the reader fell further behind than the run keeps events (Missed says how
	// many); the state has the rest.
	SkippedEvents = "events_skipped"
	// ContinuedAsNew: the run continued as new (a chat session after its turns per run): the
	// events after it are the new run's (RunID), numbered from 1 again. After is the last event
	// of the run before.
	ContinuedAsNew = "continued_as_new"
)

// Query is the run's events query: its argument is a sequence number, its answer the Page of
// the events after it.
const Query = "events"

// PageMax is how many events one answer of the query holds.
const PageMax = 500

// Event is one thing that happened in a run. Only the fields of its type are set.
type Event struct {
	Type string `json:"event"`
	// Run is the run's workflow id (set by the client that follows it).
	Run string `json:"run"`
	// Seq numbers the run's events 1, 2, 3, … with no gap: resume after a disconnect from the
	// last one seen. A follower's own events (deltas) have none: After is the event they follow.
	Seq   int64 `json:"seq,omitempty"`
	After int64 `json:"after,omitempty"`
	// Time is the workflow's time of the event (a follower's own: when it saw it).
	Time time.Time `json:"time"`
	// Step is the step id; Key the step's key when it says more (a forEach item "each[2]", an
	// agent's tool call "agent/CALL").
	Step string `json:"step,omitempty"`
	Key  string `json:"key,omitempty"`
	// Item is the forEach item's index (item_* events).
	Item *int `json:"item,omitempty"`
	// Iteration is the agent's or loop's iteration (iteration_started, llm_*, tool_call_*).
	Iteration int32 `json:"iteration,omitempty"`
	// Activity is the model call's activity id (llm_*, llm_delta): its heartbeats are its text.
	Activity string `json:"activity,omitempty"`
	// Attempt and Offset place an llm_delta: a retry or a repair of the call starts a new
	// attempt (its text starts over at offset 0); Text goes at Offset in the attempt's text.
	// Restarted marks the first delta of an attempt after the first (a worker died mid-answer and
	// the call runs again, or a repair): discard the call's text shown so far, it is not part of
	// the answer. Keep the text by Activity and Attempt: the one with the highest Attempt is the
	// call's text, never an earlier attempt's with this one appended.
	Attempt   int32 `json:"attempt,omitempty"`
	Offset    int   `json:"offset,omitempty"`
	Restarted bool  `json:"restarted,omitempty"`
	// Decision and Reviewer: review_decided.
	Decision string `json:"decision,omitempty"`
	Reviewer string `json:"reviewer,omitempty"`
	// Child is a child run's id (child_started, step_started of a workflow step; a child run's
	// review events, shown in its parent).
	Child string `json:"child,omitempty"`
	// Missed: events_skipped.
	Missed int64 `json:"missed,omitempty"`
	// Guardrail, Stage (input or output) and Reason: guardrail_tripped.
	Guardrail string `json:"guardrail,omitempty"`
	Stage     string `json:"stage,omitempty"`
	Reason    string `json:"reason,omitempty"`
	// Budget names the budget a model call would have passed ("budget.maxTokens" of the file,
	// "steps.ID.budget.maxCostUsd" of a step), Spent what was used so far and Limit the budget's
	// value, in its unit (tokens or US dollars): budget_exceeded.
	Budget string  `json:"budget,omitempty"`
	Spent  float64 `json:"spent,omitempty"`
	Limit  float64 `json:"limit,omitempty"`
	// From and To name the agents of a handoff.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Server: the MCP server whose session was lost (mcp_session_lost; Reason says what it means).
	Server string `json:"server,omitempty"`
	// RunID: continued_as_new, the Temporal run id of the new run.
	RunID string `json:"runId,omitempty"`
	// Status is how the run ended (run_completed, run_failed), in the vocabulary every surface
	// shows: completed, failed, cancelled, terminated or timed_out (set by the client).
	Status string `json:"status,omitempty"`
	// StepState is the step as it was (step_* events; review_requested), without its output
	// unless the follower asked for outputs.
	StepState *weftv1.StepState `json:"-"`
	// Review is the gate (review_* events).
	Review *weftv1.ReviewRequest `json:"-"`
	// Text is new model text (llm_delta), or a model call's final text (llm_finished), which
	// the run caps at 64 KiB.
	Text string `json:"text,omitempty"`
	// Call is the agent's tool call (tool_call_* events).
	Call *weftv1.ToolCall `json:"-"`
	// Usage: the run's usage so far (usage, run_*); the step's (step_*).
	Usage *weftv1.TokenUsage `json:"-"`
	// Result is the run's result (run_completed, set by the client).
	Result *weftv1.RunResult `json:"-"`
	// Error is the cause (run_failed, step_failed, item_failed, llm_finished of a failed call).
	Error string `json:"error,omitempty"`
	// ErrorKind is what ended an item that did not complete (item_failed): cancelled (in
	// flight, another item or step failed, the run was cancelled), timed_out, or failed for its
	// own failure, whatever its Error says. Events recorded by older workers have none.
	ErrorKind string `json:"errorKind,omitempty"`
}

type plainEvent Event

// eventJSON is an Event with its proto parts as proto JSON (camelCase field names).
type eventJSON struct {
	plainEvent
	State  json.RawMessage `json:"state,omitempty"`
	Review json.RawMessage `json:"review,omitempty"`
	Call   json.RawMessage `json:"call,omitempty"`
	Usage  json.RawMessage `json:"usage,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
}

// parts pairs the proto parts of e with their places in j.
func parts(e *Event, j *eventJSON) []struct {
	m   proto.Message
	raw *json.RawMessage
} {
	return []struct {
		m   proto.Message
		raw *json.RawMessage
	}{{e.StepState, &j.State}, {e.Review, &j.Review}, {e.Call, &j.Call}, {e.Usage, &j.Usage}, {e.Result, &j.Result}}
}

// MarshalJSON writes the proto parts as proto JSON, 64-bit integers as numbers (wirejson).
func (e Event) MarshalJSON() ([]byte, error) {
	out := eventJSON{plainEvent: plainEvent(e)}
	for _, p := range parts(&e, &out) {
		if p.m == nil || !p.m.ProtoReflect().IsValid() { // a typed nil is not valid
			continue
		}
		b, err := wirejson.Marshal(p.m) // 64-bit integers as numbers, as every surface writes them
		if err != nil {
			return nil, err
		}
		*p.raw = b
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON wrote (proto fields it does not know are left out).
func (e *Event) UnmarshalJSON(b []byte) error {
	var in eventJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*e = Event(in.plainEvent)
	opts := protojson.UnmarshalOptions{DiscardUnknown: true}
	for _, p := range []struct {
		raw json.RawMessage
		set func() proto.Message
	}{
		{in.State, func() proto.Message { e.StepState = &weftv1.StepState{}; return e.StepState }},
		{in.Review, func() proto.Message { e.Review = &weftv1.ReviewRequest{}; return e.Review }},
		{in.Call, func() proto.Message { e.Call = &weftv1.ToolCall{}; return e.Call }},
		{in.Usage, func() proto.Message { e.Usage = &weftv1.TokenUsage{}; return e.Usage }},
		{in.Result, func() proto.Message { e.Result = &weftv1.RunResult{}; return e.Result }},
	} {
		if len(p.raw) == 0 || string(p.raw) == "null" {
			continue
		}
		if err := opts.Unmarshal(p.raw, p.set()); err != nil {
			return err
		}
	}
	return nil
}

// Page answers the events query.
type Page struct {
	Events []Event `json:"events"`
	// Oldest is the sequence number of the oldest event the run still keeps; a reader that asked
	// for events after a number below Oldest-1 missed Oldest-1-since of them.
	Oldest int64 `json:"oldest"`
	// Last is the newest sequence number: more events follow when it is past the page's last.
	Last int64 `json:"last"`
	// Ended: the run recorded its last event (run_completed or run_failed), or (a chat session)
	// records no more because it continues as new.
	Ended bool `json:"ended,omitempty"`
	// Run is the Temporal run id of the run that answered: a session that continued as new
	// answers from its new run, which numbers its events from 1 again.
	Run string `json:"run,omitempty"`
}
