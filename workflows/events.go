package workflows

import (
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"

	"github.com/weftworks/weft/events"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// A run records what happens in it where it happens: each events.Event gets the next sequence
// number and the workflow's time. The events live in workflow memory only (a bounded ring), not
// in history: recording one adds no command, and replay rebuilds the same events with the same
// numbers and times. Clients read them with the events query (events.Query, from a sequence
// number) each time the run's history says a workflow task completed (client.WatchHistory,
// Temporal's history long poll): a query writes nothing, so following a run, by one client or a
// hundred, leaves its history as it is without them.
//
// Streamed model text does not go through the run (Temporal keeps no partial results): it is an
// llm activity's heartbeat, which clients read into the same model (an llm_delta event with
// step, attempt and offset); the llm_finished event carries the final text so the last piece arrives.

const (
	// UpdateWaitEvents was the followers' long poll, an Update that waited for the run's next
	// event: each one accepted left two events in the run's history. Runs now refuse every wait
	// (ErrNoMoreWaits: an older client then reads the events query at an interval, and the
	// refusal leaves nothing in history); the handler stays so that histories that accepted
	// waits replay (validators do not run in replay).
	UpdateWaitEvents = "wait-events"
	// EventRing is how many events a run keeps; a client further behind is told how many it
	// missed (events.Page.Oldest) and reads the state for the rest.
	EventRing = 2000
	// eventTextCap bounds the text an llm_finished event carries; eventDataCap the review data
	// and tool call arguments an event carries (the state has them whole).
	eventTextCap = 64 << 10
	eventDataCap = 16 << 10
)

// ErrNoMoreWaits is the error type with which a wait Update is refused: the run takes no waits;
// read its events query.
const ErrNoMoreWaits = "NoMoreWaits"

// eventLog is a run's ring of events: ring holds the newest EventRing, the oldest at head once
// it is full (a full ring overwrites its oldest event in place: recording costs the same at the
// millionth event as at the first).
type eventLog struct {
	ring  []events.Event
	head  int
	seq   int64
	ended bool
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

// registerEventHandlers installs the events query and the refused wait Update. Neither adds a
// command: the query reads memory, the Update's validator refuses (nothing reaches history), and
// its handler, run only when a recorded history accepted a wait, waits for the run's progress.
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
			_ = workflow.Await(ctx, func() bool { return r.events.seq > since || r.events.ended })
			return r.events.seq, nil
		},
		workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, since int64) error {
			return temporal.NewApplicationError("this run takes no waits: read its events with the events query when its history grows", ErrNoMoreWaits)
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
	case runwire.StatusCompleted:
		r.recordStep(ctx, sr, events.StepCompleted)
	case runwire.StatusFailed:
		r.recordStep(ctx, sr, events.StepFailed)
	case runwire.StatusSkipped, runwire.StatusNotRun:
		// a step that never started did not run: its state says why (status not_run)
		r.recordStep(ctx, sr, events.StepSkipped)
	case runwire.StatusCancelled:
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
