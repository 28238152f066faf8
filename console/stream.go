package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/workflows"
)

// runFollower tells a run page's event stream when to read the run again: as soon as the run
// records an event (its wait-events long poll, issue 23), or every PollInterval while a model call
// streams text (heartbeats are not events) or when the run cannot be waited on (an older worker,
// a run past the waits it takes). It also forwards the run's own events to the page as
// "run-event" server-sent events with their sequence number as the id.
type runFollower struct {
	s        *Server
	id       string
	since    int64
	noWait   bool
	noEvents bool            // the run records no events (an older worker)
	models   map[string]bool // model calls running (llm_started without llm_finished)
}

// next waits for the next change; false when the page went away.
func (f *runFollower) next(ctx context.Context, w io.Writer, tick <-chan time.Time, snap *Snapshot) bool {
	poll := func() bool {
		select {
		case <-ctx.Done():
			return false
		case <-tick:
			return true
		}
	}
	if f.noWait || len(f.models) > 0 || (snap != nil && len(snap.Streaming) > 0) {
		return poll()
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err := f.s.o.Client.WaitEvents(wctx, f.id, f.since)
	switch {
	case ctx.Err() != nil:
		return false
	case err == nil, errors.Is(err, weftclient.ErrEventsWaiting), errors.Is(err, context.DeadlineExceeded):
		return true
	case errors.Is(err, weftclient.ErrNoWaits):
		f.noWait = true
	}
	return poll()
}

// forward writes the run's events after the last forwarded.
func (f *runFollower) forward(ctx context.Context, w io.Writer) {
	if f.noEvents {
		return
	}
	p, err := f.s.o.Client.Events(ctx, f.id, f.since)
	if err != nil {
		f.noEvents, f.noWait = true, true
		return
	}
	for _, e := range p.Events {
		if e.Seq <= f.since {
			continue
		}
		_, _ = fmt.Fprintf(w, "event: run-event\nid: %d\ndata: %s\n\n", e.Seq, mustJSON(e))
		f.since = e.Seq
		switch e.Type {
		case workflows.EventLLMStarted:
			if f.models == nil {
				f.models = map[string]bool{}
			}
			f.models[e.Activity] = true
		case workflows.EventLLMFinished:
			delete(f.models, e.Activity)
		}
	}
}
