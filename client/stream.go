package client

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/events"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// StreamOptions tune Stream.
type StreamOptions struct {
	// Interval between reads when the run's history cannot be followed (or a read failed, or the
	// run closed and its result is awaited): default 250ms. Otherwise Stream reads only when the
	// run's history says something happened (WatchHistory).
	Interval time.Duration
	// NoDeltas skips partial model text (read from running model calls' heartbeats every
	// DeltaInterval, only while a model call runs).
	NoDeltas bool
	// DeltaInterval: default 100ms. The worker sends a model call's text every 50ms; a process
	// whose one read serves many followers (the gateway's /v1 events) reads at that rate.
	DeltaInterval time.Duration
	// Since resumes after the event with this sequence number (0: from the start).
	Since int64
	// SinceRun is the Temporal run id Since counts in (events.Page.Run, a continued_as_new event's
	// RunID), for a run that continues as new: when the run answering is a later one, Stream
	// reads the rest of that run's events first, then the new run's from its first. Without it a
	// new run is noticed only when its numbers are below Since.
	SinceRun string
	// StepOutputs fills the outputs of ended steps into their events' StepState (from the state
	// query: events carry no outputs).
	StepOutputs bool
	// Polled reads the state every Interval and turns its changes into events, as Stream did
	// before runs recorded their events (what it does for an older worker): for comparisons.
	Polled bool
}

// Stream follows a run until it ends and calls fn with each event, in order; it returns the run's
// result, or its error (read it with Cause). The events are the run's own (recorded where things
// happen, numbered, with the run's time): Stream reads them with the events query each time the
// run's history says a workflow task completed (WatchHistory, Temporal's history long poll), so
// it sees each within milliseconds, asks nothing while nothing happens, and writes nothing to the
// run: any number of followers leave its history as it is without them. Model text comes from running llm activities' heartbeats (Temporal keeps
// no partial results in history: deltas are best effort, the final text is in llm_finished and
// its last piece is always delivered). When ctx ends first, Stream returns ctx's error and the run
// goes on; call it again with Since set to the last Seq seen to go on where it stopped.
func (c *Client) Stream(ctx context.Context, id string, o StreamOptions, fn func(events.Event)) (*weftv1.RunResult, error) {
	if o.Interval <= 0 {
		o.Interval = 250 * time.Millisecond
	}
	if o.DeltaInterval <= 0 {
		o.DeltaInterval = 100 * time.Millisecond
	}
	done := make(chan outcome, 1)
	// The result is waited for beyond ctx (a run that ends as ctx does still reports its end), but
	// not beyond Stream: a chat session's follower stops with its turn, the session goes on.
	rctx, stopResult := context.WithCancel(context.WithoutCancel(ctx))
	defer stopResult()
	go func() {
		res, err := c.Result(rctx, id)
		done <- outcome{res, err}
	}()
	if o.Polled {
		return c.streamPolled(ctx, id, o, fn, done)
	}
	if c.gateway != nil {
		return c.streamGateway(ctx, id, o, fn, done)
	}
	page, err := c.Events(ctx, id, o.Since)
	if errors.Is(err, errNoEventModel) {
		return c.streamPolled(ctx, id, o, fn, done)
	}
	s := &streamer{c: c, id: id, o: o, fn: fn, since: o.Since, runID: o.SinceRun, models: map[string]events.Event{}}
	return s.run(ctx, page, err, done)
}

type outcome struct {
	res *weftv1.RunResult
	err error
}

// streamer follows one run's events.
type streamer struct {
	c      *Client
	id     string
	o      StreamOptions
	fn     func(events.Event)
	since  int64                   // the last event emitted
	runID  string                  // the Temporal run whose events since counts ("": not known yet)
	models map[string]events.Event // running model calls by activity id (their llm_started)
	follow TextFollower
	ended  *events.Event // the run's last event, held until the result is known
	kids   map[string]bool
	side   chan events.Event // child runs' review events
	wctx   context.Context   // ends when Stream returns
}

func (s *streamer) run(ctx context.Context, page *events.Page, err error, done chan outcome) (*weftv1.RunResult, error) {
	s.side = make(chan events.Event, 64)
	wctx, stopWaits := context.WithCancel(ctx)
	defer stopWaits()
	s.wctx = wctx
	// The run's history tells when to read (WatchHistory, shared by the Client's Streams of the
	// run): a watch of one run at a time (the run followed; a new one when it continues as new).
	changed := make(chan struct{}, 1)
	var watchEnded chan error
	watching, watched, over := false, "", false // over: the watch of watched ended
	stopWatch := func() {}
	defer func() { stopWatch() }()
	// polling: read at o.Interval as well, until the run continues as new: its history could not
	// be followed or closed, a read failed, or the run records no more events but did not end (a
	// chat session continuing as new: the new run answers soon)
	polling := false
	var result *outcome
	// Model text: the run's description, read while a model call runs (readTexts, shared by
	// the Client's Streams of the run).
	var textC chan *Description
	stopText := func() {}
	defer func() { stopText() }()
	for {
		if err == nil && page != nil && s.newRun(page) {
			page, err = s.continued(ctx, page)
			polling = false
			continue
		}
		if err == nil && page != nil {
			s.emitPage(ctx, page)
			if page.Run != "" {
				s.runID = page.Run
			}
			if page.Ended && s.ended == nil {
				polling = true
			}
			if page.Last > s.since && len(page.Events) > 0 {
				page, err = s.c.Events(ctx, s.id, s.since) // more than one page
				continue
			}
		}
		page = nil
		if s.ended != nil || result != nil {
			if result == nil {
				select {
				case out := <-done:
					result = &out
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			if s.ended == nil && err == nil {
				// The run closed: read what it recorded last (the query answers from history).
				if p, perr := s.c.Events(context.WithoutCancel(ctx), s.id, s.since); perr == nil && len(p.Events) > 0 {
					page = p
					continue
				}
			}
			return s.finish(*result)
		}
		// Model text: read while a model call runs.
		wantText := len(s.models) > 0 && !s.o.NoDeltas
		if wantText && textC == nil {
			textC = make(chan *Description, 1)
			stopText = s.c.readTexts(s.id, s.o.DeltaInterval, textC)
		} else if !wantText && textC != nil {
			stopText()
			stopText, textC = func() {}, nil
		}
		if watching && watched != s.runID {
			// the run continued as new: watch the new one (the old watch may tell once more)
			stopWatch()
			watching = false
		}
		if !watching && (!over || watched != s.runID) {
			watching, watched, over = true, s.runID, false
			watchEnded = make(chan error, 1) // this watch's: an earlier one's end is not read
			stopWatch = s.c.watch(s.id, watched, changed, watchEnded)
		}
		var pollC <-chan time.Time
		if polling {
			pollC = time.After(s.o.Interval)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case out := <-done:
			result = &out
			page, err = s.c.Events(context.WithoutCancel(ctx), s.id, s.since)
		case <-changed:
			page, err = s.c.Events(ctx, s.id, s.since)
		case werr := <-watchEnded:
			// The run closed (its result or its new run is read next), or its history could
			// not be followed (werr): read at the interval meanwhile (a new run is watched
			// again). Either way the events query, not the watch, says what happened.
			_ = werr
			watching, over, polling = false, true, true
			page, err = s.c.Events(ctx, s.id, s.since)
		case <-pollC:
			page, err = s.c.Events(ctx, s.id, s.since)
		case d := <-textC:
			s.readText(d)
		case e := <-s.side:
			s.emit(e)
		}
		if err != nil && ctx.Err() == nil && result == nil {
			// A failed read (the worker restarting): read again at the interval.
			polling = true
		}
	}
}

// newRun reports whether page comes from a later run than the events read so far: the run
// continued as new (its run id changed or, from a worker that does not say it, its numbers went
// back).
func (s *streamer) newRun(p *events.Page) bool {
	if p.Run != "" && s.runID != "" {
		return p.Run != s.runID
	}
	return p.Last < s.since
}

// continued goes from the run followed to the one that continued it (p answered): it emits what
// the earlier run recorded after the last event read (read from that run), then continued_as_new,
// and returns the new run's events from its first.
func (s *streamer) continued(ctx context.Context, p *events.Page) (*events.Page, error) {
	for s.runID != "" {
		old, err := s.c.EventsOf(ctx, s.id, s.runID, s.since)
		if err != nil || len(old.Events) == 0 {
			break
		}
		before := s.since
		s.emitPage(ctx, old)
		if old.Last <= s.since || s.since == before {
			break
		}
	}
	s.emit(events.Event{Type: events.ContinuedAsNew, RunID: p.Run})
	// the earlier run's model calls ended with it
	s.runID, s.since, s.models, s.follow = p.Run, 0, map[string]events.Event{}, TextFollower{}
	return s.c.Events(ctx, s.id, 0)
}

// emitPage emits a page's events in order.
func (s *streamer) emitPage(ctx context.Context, p *events.Page) {
	if len(p.Events) > 0 && p.Events[0].Seq > s.since+1 {
		s.emit(events.Event{Type: events.SkippedEvents, After: s.since, Missed: p.Events[0].Seq - s.since - 1})
	}
	var outputs *weftv1.ExecutionState
	for _, e := range p.Events {
		if e.Seq <= s.since {
			continue // never twice
		}
		switch e.Type {
		case events.LLMStarted:
			s.models[e.Activity] = e
		case events.LLMFinished:
			s.lastText(e)
			delete(s.models, e.Activity)
		case events.ChildStarted:
			s.followChild(ctx, e)
		case events.StepCompleted, events.StepFailed:
			if s.o.StepOutputs && e.StepState != nil {
				if outputs == nil {
					outputs, _ = s.c.ownState(ctx, s.id)
				}
				for _, st := range outputs.GetSteps() {
					if st.Id == e.Step {
						e.StepState.Output, e.StepState.OutputTruncated = st.Output, st.OutputTruncated
					}
				}
			}
		case events.RunCompleted, events.RunFailed:
			s.since = e.Seq
			s.ended = &e
			continue // emitted with the result
		}
		s.since = e.Seq
		s.emit(e)
	}
}

func (s *streamer) emit(e events.Event) {
	e.Run = s.id
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	if e.Seq == 0 && e.After == 0 {
		e.After = s.since
	}
	s.fn(e)
}

// finish emits the run's last event with its result.
func (s *streamer) finish(out outcome) (*weftv1.RunResult, error) {
	e := events.Event{Type: events.RunCompleted}
	if s.ended != nil {
		e = *s.ended
	}
	if out.err != nil {
		e.Type, e.Error, e.Result, e.Status = events.RunFailed, Cause(out.err), nil, EndStatus(out.err)
		s.emit(e)
		return nil, out.err
	}
	e.Type, e.Result, e.Status = events.RunCompleted, out.res, RunCompleted
	s.emit(e)
	return out.res, nil
}

// readText emits the text running model calls streamed since the last read (d: the run's
// description, shared).
func (s *streamer) readText(d *Description) {
	var texts []StreamedText
	for _, t := range LLMText(d.Pending) {
		if _, running := s.models[t.ActivityID]; running {
			texts = append(texts, t)
		}
	}
	for _, td := range s.follow.Next(texts) {
		s.emit(events.Event{Type: events.LLMDelta, Step: td.Step, Key: td.Key, Activity: td.ActivityID, Attempt: td.Attempt, Offset: td.Offset, Restarted: td.Restarted, Text: td.New})
	}
}

// lastText emits what a finished model call wrote after the last read (its final text, whole
// when no delta was read), so that the deltas add up to the answer.
func (s *streamer) lastText(fin events.Event) {
	if s.o.NoDeltas || fin.Error != "" || fin.Text == "" {
		s.follow.forget(fin.Activity)
		return
	}
	for _, td := range s.follow.Final(fin.Activity, fin.Text) {
		s.emit(events.Event{Type: events.LLMDelta, Time: fin.Time, Step: fin.Step, Key: fin.Key, Activity: fin.Activity, Attempt: td.Attempt, Offset: td.Offset, Restarted: td.Restarted, Text: td.New})
	}
	s.follow.forget(fin.Activity)
}

// followChild forwards the review events of a child run (a workflow step, an agent's workflow
// tool) while it runs: a person deciding them reads them with the parent's.
func (s *streamer) followChild(ctx context.Context, e events.Event) {
	if s.kids == nil {
		s.kids = map[string]bool{}
	}
	if e.Child == "" || s.kids[e.Child] {
		return
	}
	s.kids[e.Child] = true
	child := e.Child
	ctx = s.wctx
	go func() {
		_, _ = s.c.Stream(ctx, child, StreamOptions{NoDeltas: true, Interval: s.o.Interval}, func(ce events.Event) {
			switch ce.Type {
			case events.ReviewRequested, events.ReviewDecided:
				if ce.Review != nil && ce.Review.ExecutionId == "" {
					ce.Review.ExecutionId = child
				}
				ce.Seq, ce.After, ce.Child = 0, 0, child
				select {
				case s.side <- ce:
				case <-ctx.Done():
				}
			}
		})
	}()
}

// streamPolled follows a run whose worker records no events: it reads the state at o.Interval
// and turns the differences into events (what Stream did before the runs recorded their events).
func (c *Client) streamPolled(ctx context.Context, id string, o StreamOptions, fn func(events.Event), done chan outcome) (*weftv1.RunResult, error) {
	t := &tracker{id: id, fn: fn, steps: map[string]string{}, reviews: map[string]*weftv1.ReviewRequest{}, calls: map[string]string{}}
	t.emit(events.Event{Type: events.RunStarted})
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
				t.emit(events.Event{Type: events.RunFailed, Error: Cause(out.err), Status: EndStatus(out.err)})
				return nil, out.err
			}
			t.emit(events.Event{Type: events.RunCompleted, Result: out.res, Status: RunCompleted})
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
	fn      func(events.Event)
	steps   map[string]string // step id -> last status
	reviews map[string]*weftv1.ReviewRequest
	calls   map[string]string // step/call id -> last status
	follow  TextFollower      // llm text read so far
}

func (t *tracker) emit(e events.Event) {
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
		if changed && (prev == "" || prev == runwire.StatusPending) && s.Status != runwire.StatusPending && s.Status != runwire.StatusSkipped && s.Status != runwire.StatusCancelled && s.Status != runwire.StatusNotRun {
			t.emit(events.Event{Type: events.StepStarted, Step: s.Id, StepState: s})
		}
		for _, call := range s.ToolCalls {
			key := s.Id + "/" + call.Id
			prevCall, seen := t.calls[key]
			if !seen {
				t.emit(events.Event{Type: events.ToolCallStarted, Step: s.Id, Call: call})
			}
			if call.Status != runwire.StatusRunning && call.Status != runwire.StatusAwaitingReview && prevCall != call.Status {
				t.emit(events.Event{Type: events.ToolCallFinished, Step: s.Id, Call: call})
			}
			t.calls[key] = call.Status
		}
		t.reviewsOf(s.Id, byStep[s.Id], open, s)
		if !changed {
			continue
		}
		t.steps[s.Id] = s.Status
		switch s.Status {
		case runwire.StatusCompleted:
			t.emit(events.Event{Type: events.StepCompleted, Step: s.Id, StepState: s})
		case runwire.StatusFailed:
			t.emit(events.Event{Type: events.StepFailed, Step: s.Id, StepState: s, Error: s.Error})
		case runwire.StatusSkipped, runwire.StatusNotRun:
			t.emit(events.Event{Type: events.StepSkipped, Step: s.Id, StepState: s})
		case runwire.StatusCancelled:
			t.emit(events.Event{Type: events.StepCancelled, Step: s.Id, StepState: s})
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
			t.emit(events.Event{Type: events.ReviewRequested, Step: r.Step, Review: r, StepState: s})
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
		t.emit(events.Event{Type: events.ReviewDecided, Step: r.Step, Review: r})
		t.reviews[id] = nil
	}
}

// deltas emits the new text of running llm activities.
func (t *tracker) deltas(pending []PendingActivity) {
	for _, d := range t.follow.Next(LLMText(pending)) {
		t.emit(events.Event{Type: events.LLMDelta, Step: d.Step, Key: d.Key, Activity: d.ActivityID, Attempt: d.Attempt, Offset: d.Offset, Restarted: d.Restarted, Text: d.New})
	}
}

// llmActivity is the activity type whose heartbeat details are the model's text so far.
const llmActivity = toolspec.LLM

// StreamedText is the text so far of one running llm activity: its last heartbeat details.
// Temporal keeps no partial results in history: the text is best effort, the final answer durable.
type StreamedText struct {
	ActivityID string
	// Key is the step's key: its id, with the item's index inside forEach ("summarize[2]").
	Key string
	// Step is the step's id (runwire.StepOfActivity): "summarize".
	Step string
	Text string
	// TemporalAttempt is the activity's attempt (Temporal's: 1, 2, … for retries).
	TemporalAttempt int32
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
		step := runwire.StepOfActivity(a.ActivityID)
		if step == "" {
			continue
		}
		key, _, _ := strings.Cut(a.ActivityID, "#")
		out = append(out, StreamedText{ActivityID: a.ActivityID, Key: key, Step: step, Text: a.Details, TemporalAttempt: a.Attempt})
	}
	return out
}

// TextDelta is what one llm activity wrote since the previous read.
type TextDelta struct {
	StreamedText
	// New is the text added since the previous read, to be put at Offset in the text of
	// attempt Attempt.
	New string
	// Attempt counts the times the activity's text started: 1, then one more for each retry
	// (a new Temporal attempt) and each repair (the model asked again for valid JSON). A new
	// attempt's text replaces the one before; it never extends it.
	Attempt int32
	Offset  int
	// Restarted says the text started over: what was shown of the activity before is not part
	// of its text any more.
	Restarted bool
}

// TextFollower follows streamed text from one read to the next (Stream's llm_delta events,
// weft chat's streamed answer). The zero value is ready.
type TextFollower struct {
	seen map[string]*followed // by activity id
}

type followed struct {
	text     string // the current attempt's text read so far
	attempt  int32  // text attempts (see TextDelta.Attempt)
	temporal int32  // the Temporal attempt last read
	stale    bool   // a retry whose heartbeat still holds the failed attempt's text
}

// Next returns, for each activity of texts that wrote something since the previous call, what it
// added (in the order of texts).
func (f *TextFollower) Next(texts []StreamedText) []TextDelta {
	if f.seen == nil {
		f.seen = map[string]*followed{}
	}
	var out []TextDelta
	for _, t := range texts {
		st, seen := f.seen[t.ActivityID]
		if !seen {
			st = &followed{attempt: 1, temporal: t.TemporalAttempt}
			f.seen[t.ActivityID] = st
		}
		restarted := false
		switch {
		case seen && t.TemporalAttempt != st.temporal:
			// A retry: until it heartbeats, the details are the failed attempt's last text.
			st.temporal = t.TemporalAttempt
			if t.Text == st.text {
				st.stale = true
				continue
			}
			restarted = true
		case st.stale && t.Text == st.text:
			continue
		case seen && !strings.HasPrefix(t.Text, st.text):
			restarted = true // a repair, or a retry read only once it wrote more than before
		}
		if restarted || st.stale {
			st.attempt++
			st.text, st.stale, restarted = "", false, true
		}
		if len(t.Text) <= len(st.text) {
			continue
		}
		out = append(out, TextDelta{StreamedText: t, New: t.Text[len(st.text):], Attempt: st.attempt, Offset: len(st.text), Restarted: restarted})
		st.text = t.Text
	}
	return out
}

// Final returns what remains of activity id's text once it finished with text: the rest of the
// attempt read so far, or the whole text as a new attempt when it does not extend it.
func (f *TextFollower) Final(id, text string) []TextDelta {
	st, ok := f.seen[id]
	if !ok {
		return []TextDelta{{StreamedText: StreamedText{ActivityID: id, Text: text}, New: text, Attempt: 1}}
	}
	if !st.stale && strings.HasPrefix(text, st.text) {
		if len(text) == len(st.text) {
			return nil
		}
		return []TextDelta{{StreamedText: StreamedText{ActivityID: id, Text: text}, New: text[len(st.text):], Attempt: st.attempt, Offset: len(st.text)}}
	}
	return []TextDelta{{StreamedText: StreamedText{ActivityID: id, Text: text}, New: text, Attempt: st.attempt + 1, Restarted: true}}
}

// forget drops a finished activity.
func (f *TextFollower) forget(id string) { delete(f.seen, id) }
