package client

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/workflows"
)

// Event types, in the order a run produces them. The JSONL of `weft run --json --verbose` is
// one Event per line.
const (
	EventRunStarted       = "run_started"
	EventStepStarted      = "step_started"
	EventStepCompleted    = "step_completed"
	EventStepFailed       = "step_failed"
	EventStepSkipped      = "step_skipped"
	EventStepCancelled    = "step_cancelled"
	EventReviewRequested  = "review_requested"
	EventReviewDecided    = "review_decided"
	EventLLMDelta         = "llm_delta"
	EventToolCallStarted  = "tool_call_started"
	EventToolCallFinished = "tool_call_finished"
	EventRunCompleted     = "run_completed"
	EventRunFailed        = "run_failed"
)

// Event is one thing that happened in a run. Only the fields of its type are set.
type Event struct {
	Type string    `json:"event"`
	Run  string    `json:"run"`
	Time time.Time `json:"time"`
	// Step is the step id (step events, reviews, llm deltas, tool calls).
	Step string `json:"step,omitempty"`
	// StepState is the step's state (step_* events).
	StepState *weftv1.StepState `json:"-"`
	// Review is the gate (review_* events).
	Review *weftv1.ReviewRequest `json:"-"`
	// Text is new model text (llm_delta): append the deltas to get the text so far.
	Text string `json:"text,omitempty"`
	// Call is the agent tool call (tool_call_* events).
	Call *weftv1.ToolCall `json:"-"`
	// Result is the run's result (run_completed).
	Result *weftv1.RunResult `json:"-"`
	// Error is the cause (run_failed, step_failed).
	Error string `json:"error,omitempty"`
}

// MarshalJSON renders the proto parts as proto JSON (camelCase field names).
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event
	out := struct {
		plain
		State  json.RawMessage `json:"state,omitempty"`
		Review json.RawMessage `json:"review,omitempty"`
		Call   json.RawMessage `json:"call,omitempty"`
		Result json.RawMessage `json:"result,omitempty"`
	}{plain: plain(e)}
	pj := func(m proto.Message) json.RawMessage {
		if m == nil || !m.ProtoReflect().IsValid() {
			return nil
		}
		b, _ := protojson.Marshal(m)
		return b
	}
	if e.StepState != nil {
		out.State = pj(e.StepState)
	}
	if e.Review != nil {
		out.Review = pj(e.Review)
	}
	if e.Call != nil {
		out.Call = pj(e.Call)
	}
	if e.Result != nil {
		out.Result = pj(e.Result)
	}
	return json.Marshal(out)
}

// StreamOptions tune Stream.
type StreamOptions struct {
	// Interval between reads of the run's state (default 250ms).
	Interval time.Duration
	// NoDeltas skips reading partial model text (one DescribeWorkflowExecution per interval).
	NoDeltas bool
}

// Stream follows a run until it ends and calls fn with each event; it returns the run's result,
// or its error (read it with Cause). Events come from the state query and from the heartbeat
// details of running llm activities (their text so far): Temporal keeps no partial results in
// history, so deltas are best effort while the final answer is durable. When ctx ends first,
// Stream returns ctx's error and the run goes on.
func (c *Client) Stream(ctx context.Context, id string, o StreamOptions, fn func(Event)) (*weftv1.RunResult, error) {
	if o.Interval <= 0 {
		o.Interval = 250 * time.Millisecond
	}
	type outcome struct {
		res *weftv1.RunResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := c.Result(context.WithoutCancel(ctx), id)
		done <- outcome{res, err}
	}()
	t := &tracker{id: id, fn: fn, steps: map[string]string{}, reviews: map[string]*weftv1.ReviewRequest{}, calls: map[string]string{}}
	t.emit(Event{Type: EventRunStarted})
	ticker := time.NewTicker(o.Interval)
	defer ticker.Stop()
	for {
		select {
		case out := <-done:
			if st, err := c.ownState(context.WithoutCancel(ctx), id); err == nil {
				t.state(st)
			} else if out.res != nil {
				t.state(&weftv1.ExecutionState{Steps: out.res.Steps})
			}
			if out.err != nil {
				t.emit(Event{Type: EventRunFailed, Error: Cause(out.err)})
				return nil, out.err
			}
			t.emit(Event{Type: EventRunCompleted, Result: out.res})
			return out.res, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ticker.C:
			if st, err := c.State(ctx, id); err == nil {
				t.state(st)
			}
			if !o.NoDeltas {
				if d, err := c.Describe(ctx, id); err == nil {
					t.deltas(d.Pending)
				}
			}
		}
	}
}

// tracker turns successive states into events.
type tracker struct {
	id      string
	fn      func(Event)
	steps   map[string]string // step id -> last status
	reviews map[string]*weftv1.ReviewRequest
	calls   map[string]string // step/call id -> last status
	follow  TextFollower      // llm text read so far
}

func (t *tracker) emit(e Event) {
	e.Run = t.id
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	t.fn(e)
}

func (t *tracker) state(st *weftv1.ExecutionState) {
	// Events come in the order things happen within a step: it starts, its tool calls start and
	// finish, its reviews are requested and decided, then it ends. Reviews of steps the state
	// does not list (a child run's) come after.
	open := map[string]bool{}
	byStep := map[string][]*weftv1.ReviewRequest{}
	for _, r := range st.PendingReviews {
		open[r.Id] = true
		byStep[r.Step] = append(byStep[r.Step], r)
	}
	listed := map[string]bool{}
	for _, s := range st.Steps {
		listed[s.Id] = true
		prev := t.steps[s.Id]
		changed := prev != s.Status
		if changed && (prev == "" || prev == workflows.StatusPending) && s.Status != workflows.StatusPending && s.Status != workflows.StatusSkipped && s.Status != workflows.StatusCancelled {
			t.emit(Event{Type: EventStepStarted, Step: s.Id, StepState: s})
		}
		for _, call := range s.ToolCalls {
			key := s.Id + "/" + call.Id
			prevCall, seen := t.calls[key]
			if !seen {
				t.emit(Event{Type: EventToolCallStarted, Step: s.Id, Call: call})
			}
			if call.Status != workflows.StatusRunning && call.Status != workflows.StatusAwaitingReview && prevCall != call.Status {
				t.emit(Event{Type: EventToolCallFinished, Step: s.Id, Call: call})
			}
			t.calls[key] = call.Status
		}
		t.reviewsOf(s.Id, byStep[s.Id], open, s)
		if !changed {
			continue
		}
		t.steps[s.Id] = s.Status
		switch s.Status {
		case workflows.StatusCompleted:
			t.emit(Event{Type: EventStepCompleted, Step: s.Id, StepState: s})
		case workflows.StatusFailed:
			t.emit(Event{Type: EventStepFailed, Step: s.Id, StepState: s, Error: s.Error})
		case workflows.StatusSkipped:
			t.emit(Event{Type: EventStepSkipped, Step: s.Id, StepState: s})
		case workflows.StatusCancelled:
			t.emit(Event{Type: EventStepCancelled, Step: s.Id, StepState: s})
		}
	}
	// Reviews of steps the state does not list: pending ones, and ones seen before that may
	// have been decided since.
	otherSet := map[string]bool{}
	for step := range byStep {
		if !listed[step] {
			otherSet[step] = true
		}
	}
	for _, r := range t.reviews {
		if r != nil && !listed[r.Step] {
			otherSet[r.Step] = true
		}
	}
	others := slices.Sorted(maps.Keys(otherSet))
	for _, step := range others {
		t.reviewsOf(step, byStep[step], open, nil)
	}
}

// reviewsOf emits the reviews of step requested since the last state (pending, in order) and
// those decided since (no longer open).
func (t *tracker) reviewsOf(step string, pending []*weftv1.ReviewRequest, open map[string]bool, s *weftv1.StepState) {
	for _, r := range pending {
		if _, seen := t.reviews[r.Id]; !seen {
			t.reviews[r.Id] = r
			t.emit(Event{Type: EventReviewRequested, Step: r.Step, Review: r, StepState: s})
		}
	}
	var decided []string
	for id, r := range t.reviews {
		if r != nil && r.Step == step && !open[id] {
			decided = append(decided, id)
		}
	}
	sort.Strings(decided)
	for _, id := range decided {
		r := t.reviews[id]
		t.emit(Event{Type: EventReviewDecided, Step: r.Step, Review: r})
		t.reviews[id] = nil
	}
}

// deltas emits the new text of running llm activities.
func (t *tracker) deltas(pending []PendingActivity) {
	for _, d := range t.follow.Next(LLMText(pending)) {
		t.emit(Event{Type: EventLLMDelta, Step: d.Key, Text: d.New})
	}
}

// llmActivity is the activity type whose heartbeat details are the model's text so far.
const llmActivity = "llm"

// StreamedText is the text so far of one running llm activity: its last heartbeat details.
// Temporal keeps no partial results in history: the text is best effort, the final answer durable.
type StreamedText struct {
	ActivityID string
	// Key is the step's key: its id, with the item's index inside forEach ("summarize[2]").
	Key string
	// Step is the step's id (workflows.StepOfActivity): "summarize".
	Step string
	Text string
}

// LLMText picks the running llm activities that have text so far out of pending (a
// Description's), in their order. Their activity ids start with the step's key ("step#3");
// activities whose ids weft did not choose are left out.
func LLMText(pending []PendingActivity) []StreamedText {
	var out []StreamedText
	for _, a := range pending {
		if a.Type != llmActivity || a.Details == "" {
			continue
		}
		step := workflows.StepOfActivity(a.ActivityID)
		if step == "" {
			continue
		}
		key, _, _ := strings.Cut(a.ActivityID, "#")
		out = append(out, StreamedText{ActivityID: a.ActivityID, Key: key, Step: step, Text: a.Details})
	}
	return out
}

// TextDelta is what one llm activity wrote since the previous read.
type TextDelta struct {
	StreamedText
	// New is the text added since the previous read: all of it the first time the activity is
	// seen and when it started over (a retry, whose text does not extend what was read).
	New string
	// Restarted says the activity started over: what was shown of it before is not a prefix of
	// its text any more.
	Restarted bool
}

// TextFollower follows streamed text from one read to the next (weft run's llm_delta events,
// weft chat's streamed answer). The zero value is ready.
type TextFollower struct {
	seen map[string]string // activity id -> text read so far
}

// Next returns, for each activity of texts that wrote something since the previous call, what it
// added (in the order of texts).
func (f *TextFollower) Next(texts []StreamedText) []TextDelta {
	if f.seen == nil {
		f.seen = map[string]string{}
	}
	var out []TextDelta
	for _, t := range texts {
		prev, seen := f.seen[t.ActivityID]
		restarted := seen && !strings.HasPrefix(t.Text, prev)
		if restarted {
			prev = ""
		}
		if len(t.Text) <= len(prev) {
			continue
		}
		f.seen[t.ActivityID] = t.Text
		out = append(out, TextDelta{StreamedText: t, New: t.Text[len(prev):], Restarted: restarted})
	}
	return out
}
