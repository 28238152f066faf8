package workflows

import (
	"fmt"
	"strconv"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"

	"github.com/weftworks/weft/events"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
)

// A run records what happens in it where it happens: each events.Event gets the next sequence
// number and the workflow's time. The events live in workflow memory only (a bounded ring), not
// in history: recording one adds no command, and replay rebuilds the same events with the same
// numbers and times. Clients read them with the events query (events.Query, from a sequence
// number) and wait for the next one with the wait Update (UpdateWaitEvents), which returns as
// soon as the run records an event after the given number: a long poll, so a client sees a step
// finish within milliseconds and asks nothing while nothing happens.
//
// Streamed model text does not go through the run (Temporal keeps no partial results): it is an
// llm activity's heartbeat, which clients read into the same model (an llm_delta event with
// step, attempt and offset); the llm_finished event carries the final text so the last piece arrives.

const (
	// UpdateWaitEvents waits until the run records an event after a sequence number (its
	// argument) or ends, and returns the newest sequence number. Clients give it the id
	// WaitEventsID(since), so that every client waiting for the same event shares one Update.
	UpdateWaitEvents = "wait-events"
	// EventRing is how many events a run keeps; a client further behind is told how many it
	// missed (events.Page.Oldest) and reads the state for the rest.
	EventRing = 2000
	// maxEventWaits bounds the wait Updates a run accepts (each leaves two events in history);
	// past it, and past maxWaitHistory events of history, clients read the events query at an
	// interval instead. Temporal itself refuses more than 2000 Updates per run by default.
	maxEventWaits  = 1500
	maxWaitHistory = 20000
	// eventTextCap bounds the text an llm_finished event carries; eventDataCap the review data
	// and tool call arguments an event carries (the state has them whole).
	eventTextCap = 64 << 10
	eventDataCap = 16 << 10
)

// WaitEventsID is the Update id of a wait for the events after since.
func WaitEventsID(since int64) string { return "weft-events-after-" + strconv.FormatInt(since, 10) }

// Error types with which the wait Update is refused (the refusal leaves nothing in history).
const (
	// ErrEventsAvailable: events after the number exist already; read them with the query.
	ErrEventsAvailable = "EventsAvailable"
	// ErrEventsAhead: the number is past the run's newest event (a client of another run, or of
	// a chat session before it continued as new); read the query.
	ErrEventsAhead = "EventsAhead"
	// ErrRunEnded: the run recorded its last event.
	ErrRunEnded = "RunEnded"
	// ErrNoMoreWaits: the run takes no more waits; read the query at an interval.
	ErrNoMoreWaits = "NoMoreWaits"
)

// eventLog is a run's ring of events: ring holds the newest EventRing, the oldest at head once
// it is full (a full ring overwrites its oldest event in place: recording costs the same at the
// millionth event as at the first).
type eventLog struct {
	ring  []events.Event
	head  int
	seq   int64
	ended bool
	waits int
}

// at returns the i-th oldest event kept.
func (l *eventLog) at(i int) *events.Event { return &l.ring[(l.head+i)%len(l.ring)] }

// record adds an event with the next sequence number and the workflow's time.
func (r *run) record(ctx workflow.Context, e events.Event) {
	l := &r.events
	l.seq++
	e.Seq = l.seq
	e.Time = workflow.Now(ctx)
	l.add(e)
	r.notifyEvent(ctx, e)
}

// add keeps e, numbered already, dropping the oldest event when the ring is full.
func (l *eventLog) add(e events.Event) {
	if len(l.ring) >= EventRing {
		l.ring[l.head] = e
		l.head = (l.head + 1) % len(l.ring)
	} else {
		l.ring = append(l.ring, e)
	}
	if e.Type == events.RunCompleted || e.Type == events.RunFailed {
		l.ended = true
	}
}

// page answers the events after since.
func (l *eventLog) page(since int64) *events.Page {
	p := &events.Page{Last: l.seq, Ended: l.ended, Oldest: l.seq + 1, Events: []events.Event{}}
	if len(l.ring) == 0 {
		return p
	}
	p.Oldest = l.at(0).Seq
	// the events kept are numbered Oldest, Oldest+1, …: start at the first after since
	first := max(0, int(since-p.Oldest+1))
	for i := first; i < len(l.ring) && len(p.Events) < events.PageMax; i++ {
		p.Events = append(p.Events, *l.at(i))
	}
	return p
}

// registerEventHandlers installs the events query and the wait Update. Neither adds a command:
// the query reads memory, and the Update only waits (workflow.Await) for the run's own progress.
func (r *run) registerEventHandlers(ctx workflow.Context) error {
	runID := workflow.GetInfo(ctx).WorkflowExecution.RunID
	if err := workflow.SetQueryHandler(ctx, events.Query, func(since int64) (*events.Page, error) {
		p := r.events.page(since)
		p.Run = runID
		return p, nil
	}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, UpdateWaitEvents,
		func(ctx workflow.Context, since int64) (int64, error) {
			r.events.waits++
			_ = workflow.Await(ctx, func() bool { return r.events.seq > since || r.events.ended })
			return r.events.seq, nil
		},
		workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, since int64) error {
			switch {
			case r.events.ended:
				return temporal.NewApplicationError("the run has ended: read its events with the events query", ErrRunEnded)
			case r.events.seq > since:
				return temporal.NewApplicationError("there are events after this one: read them with the events query", ErrEventsAvailable)
			case since > r.events.seq:
				// a wait after an event that does not exist yet would stay open until the run ends,
				// one Update per number asked: only the newest event is waited after
				return temporal.NewApplicationError(fmt.Sprintf("the run has recorded %d events, not %d: wait after the newest", r.events.seq, since), ErrEventsAhead)
			case r.events.waits >= maxEventWaits || workflow.GetInfo(ctx).GetCurrentHistoryLength() > maxWaitHistory:
				return temporal.NewApplicationError("this run takes no more waits: read its events with the events query at an interval", ErrNoMoreWaits)
			}
			return nil
		}})
}

// finishEvents records how the run ended and lets the waits in flight answer before the run
// returns (Temporal fails the Updates a run leaves unfinished), and the notifications of the end
// start (notify.go; without webhooks it adds no command).
func (r *run) finishEvents(ctx workflow.Context, err error) {
	if err != nil {
		r.record(ctx, events.Event{Type: events.RunFailed, Error: errorText(err), Usage: copyUsage(&r.usage)})
	} else {
		r.record(ctx, events.Event{Type: events.RunCompleted, Usage: copyUsage(&r.usage)})
	}
	_ = awaitDetached(ctx, func() bool { return workflow.AllHandlersFinished(ctx) && r.notify.starting == 0 })
}

// eventState is a step's state for an event: without its output (the state query has it) and
// its tool calls (they have their own events).
func (r *run) eventState(sr *stepRun) *weftv1.StepState {
	s := r.stepHead(sr)
	s.ToolCalls = nil
	return s
}

// recordStep records a step event of the step's current status.
func (r *run) recordStep(ctx workflow.Context, sr *stepRun, typ string) {
	e := events.Event{Type: typ, Step: sr.cs.ID, StepState: r.eventState(sr), Child: sr.childID}
	if typ == events.StepFailed {
		e.Error = sr.err
	}
	r.record(ctx, e)
}

// recordStepEnd records the event of the status a step ended with.
func (r *run) recordStepEnd(ctx workflow.Context, sr *stepRun) {
	switch sr.status {
	case StatusCompleted:
		r.recordStep(ctx, sr, events.StepCompleted)
	case StatusFailed:
		r.recordStep(ctx, sr, events.StepFailed)
	case StatusSkipped, StatusNotRun:
		// a step that never started did not run: its state says why (status not_run)
		r.recordStep(ctx, sr, events.StepSkipped)
	case StatusCancelled:
		r.recordStep(ctx, sr, events.StepCancelled)
	}
}

// eventReview is a review request for an event: its data left out when large.
func eventReview(req *weftv1.ReviewRequest) *weftv1.ReviewRequest {
	out := proto.Clone(req).(*weftv1.ReviewRequest)
	if out.Data != nil && proto.Size(out.Data) > eventDataCap {
		out.Data = nil
	}
	if out.Schema != nil && proto.Size(out.Schema) > eventDataCap {
		out.Schema = nil
	}
	return out
}

// eventCall is a tool call record for an event (a copy: the record changes later).
func eventCall(c *weftv1.ToolCall) *weftv1.ToolCall {
	out := proto.Clone(c).(*weftv1.ToolCall)
	if out.Arguments != nil && proto.Size(out.Arguments) > eventDataCap {
		out.Arguments = nil
	}
	return out
}

func capText(s string) string {
	if len(s) > eventTextCap {
		return s[:eventTextCap]
	}
	return s
}

// recordItem records a forEach item event.
func (r *run) recordItem(ctx workflow.Context, sr *stepRun, i int, typ string, err error) {
	e := events.Event{Type: typ, Step: sr.cs.ID, Key: itemKey(sr.cs.ID, i), Item: &i}
	if err != nil {
		e.Error, e.ErrorKind = errorText(err), ErrorKind(err)
	}
	r.record(ctx, e)
}

// recordUsage records the run's usage so far after a call of step sr.
func (r *run) recordUsage(ctx workflow.Context, sr *stepRun) {
	r.record(ctx, events.Event{Type: events.Usage, Step: sr.cs.ID, Usage: copyUsage(&r.usage)})
}

// keyOfActivity is the step key an activity id names ("each[2]" of "each[2]#3").
func keyOfActivity(id string) string {
	key, _, _ := strings.Cut(id, "#")
	return key
}
