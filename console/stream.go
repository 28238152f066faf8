package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/events"
)

// quietSnapshot is how long a run page's stream goes without an event before it reads the
// snapshot again anyway (what no event tells: a worker that went away, or came back).
const quietSnapshot = 30 * time.Second

// followRun writes run id's snapshots to a run page's event stream (apiEvents), one whenever
// something changed, and the run's own events as "run-event" server-sent events (events.Event's
// JSON, with the sequence number as the id; Last-Event-ID resumes after it), until the run ends
// ("end") or the page goes away. It follows the run with client.Stream: it reads the snapshot
// again as soon as the run records an event (its history's long poll), and asks nothing while
// nothing happens. Model text (llm_delta, read by Stream every PollInterval while a model call
// runs) goes into the last snapshot's streaming text without reading the run again.
func (s *Server) followRun(ctx context.Context, w io.Writer, fl http.Flusher, r *http.Request, id string) {
	since, _ := strconv.ParseInt(r.Header.Get("Last-Event-ID"), 10, 64)
	evs := make(chan events.Event, 256)
	followed := make(chan struct{})
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		defer close(followed)
		o := weftclient.StreamOptions{Since: max(since, 0), Interval: s.o.PollInterval, DeltaInterval: s.o.PollInterval}
		_, _ = s.o.Client.Stream(sctx, id, o, func(e events.Event) {
			select {
			case evs <- e:
			case <-sctx.Done():
			}
		})
	}()
	var last []byte
	var shown *Snapshot // the last snapshot written
	write := func(snap *Snapshot) {
		if b, _ := json.Marshal(snap); !bytes.Equal(b, last) {
			last, shown = b, snap
			_, _ = fmt.Fprintf(w, "event: snapshot\ndata: %s\n\n", b)
			fl.Flush()
		}
	}
	// snapshot reads the run and writes its snapshot when it changed; done: the run closed and
	// its state was read (the stream has said all)
	snapshot := func() (done bool) {
		snap, err := s.snapshot(ctx, id)
		if ctx.Err() != nil {
			return true
		}
		if err != nil {
			_, _ = fmt.Fprintf(w, "event: problem\ndata: %s\n\n", mustJSON(map[string]string{"error": err.Error()}))
			fl.Flush()
			return false
		}
		write(snap)
		return snap.Closed && snap.StateErr == ""
	}
	texts := streamedTexts{}
	// onlyText: every event forwarded since the last snapshot was model text that texts placed
	onlyText := true
	forward := func(e events.Event) {
		if e.Seq > 0 {
			_, _ = fmt.Fprintf(w, "event: run-event\nid: %d\ndata: %s\n\n", e.Seq, mustJSON(e))
		} else {
			_, _ = fmt.Fprintf(w, "event: run-event\ndata: %s\n\n", mustJSON(e))
		}
		onlyText = texts.add(e) && onlyText
	}
	// drain forwards the events waiting, so that one snapshot follows a burst of them
	drain := func() {
		for {
			select {
			case e := <-evs:
				forward(e)
			default:
				return
			}
		}
	}
	quiet := time.NewTimer(quietSnapshot)
	defer quiet.Stop()
	snapshot()
	for closed := false; !closed; {
		onlyText = true
		select {
		case <-ctx.Done():
			return
		case e := <-evs:
			forward(e)
			drain()
			fl.Flush()
			if onlyText && shown != nil && !shown.Closed && shown.StateErr == "" {
				// model text only: the snapshot shown with its streaming text so far
				write(texts.into(shown))
				break
			}
			closed = snapshot()
		case <-quiet.C:
			closed = snapshot()
		case <-followed:
			// The run ended (or cannot be followed): its last events, then its closed state, read
			// again at the interval while its worker cannot answer.
			drain()
			fl.Flush()
			t := time.NewTicker(s.o.PollInterval)
			defer t.Stop()
			for !snapshot() {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
			closed = true
		}
		quiet.Reset(quietSnapshot)
	}
	// closed: the stream ends once the follower has delivered the run's last events
	for {
		select {
		case e := <-evs:
			forward(e)
			continue
		case <-followed:
			drain()
		case <-ctx.Done():
			return
		}
		break
	}
	if ctx.Err() != nil {
		return
	}
	_, _ = io.WriteString(w, "event: end\ndata: {}\n\n")
	fl.Flush()
}

// streamedTexts is the text so far of the model calls a run page follows, by activity id, from
// their llm_delta events.
type streamedTexts map[string]streamedText

// streamedText is one model call's text so far: its step's, of its text attempt (0 or 1: the
// first; more when a retry or a repair started it over).
type streamedText struct {
	step, text string
	attempt    int32
}

// add takes a run event in: it reports whether e was model text placed in the texts so far (a
// delta that continues what was read, or a new attempt's that starts over at offset 0: it
// replaces the text, never extends it). A finished call, or the calls of a step that ended, are
// dropped.
func (t streamedTexts) add(e events.Event) bool {
	switch e.Type {
	case events.LLMDelta:
		cur := t[e.Activity]
		if e.Attempt != cur.attempt {
			cur.text = "" // a retry or a repair: the text before is not the call's any more
		}
		if e.Offset > len(cur.text) {
			return false // a piece missed: read the run
		}
		t[e.Activity] = streamedText{step: e.Step, text: cur.text[:e.Offset] + e.Text, attempt: e.Attempt}
		return true
	case events.LLMFinished:
		delete(t, e.Activity)
	case events.StepCompleted, events.StepFailed, events.StepCancelled:
		maps.DeleteFunc(t, func(_ string, st streamedText) bool { return st.step == e.Step })
	}
	return false
}

// into is snap with its streaming text brought up to the texts so far (snap is left as it is),
// and StreamingAttempt saying which steps' text started over. A step's text read with the
// snapshot is kept when it is already further on in the same attempt or a later one; a later
// attempt's text replaces it.
func (t streamedTexts) into(snap *Snapshot) *Snapshot {
	out := *snap
	out.Streaming = maps.Clone(snap.Streaming)
	out.StreamingAttempt = maps.Clone(snap.StreamingAttempt)
	for _, a := range slices.Sorted(maps.Keys(t)) {
		st := t[a]
		attempt := max(st.attempt, 1)
		if old := out.Streaming[st.step]; attempt <= max(out.StreamingAttempt[st.step], 1) && len(old) > len(st.text) && strings.HasPrefix(old, st.text) {
			continue
		}
		if out.Streaming == nil {
			out.Streaming = map[string]string{}
		}
		out.Streaming[st.step] = st.text
		if attempt > 1 {
			if out.StreamingAttempt == nil {
				out.StreamingAttempt = map[string]int32{}
			}
			out.StreamingAttempt[st.step] = attempt
		} else {
			delete(out.StreamingAttempt, st.step)
		}
	}
	return &out
}
