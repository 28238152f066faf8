package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	weftclient "github.com/weftworks/weft/client"
)

// quietSnapshot is how long a run page's stream goes without an event before it reads the
// snapshot again anyway (what no event tells: a worker that went away, or came back).
const quietSnapshot = 30 * time.Second

// followRun writes run id's snapshots to a run page's event stream (apiEvents), one whenever
// something changed, and the run's own events as "run-event" server-sent events (client.Event's
// JSON, with the sequence number as the id; Last-Event-ID resumes after it), until the run ends
// ("end") or the page goes away. It follows the run with client.Stream: it reads the snapshot
// again as soon as the run records an event (the wait-events long poll) and whenever a model call
// streamed more text (every PollInterval while one runs), and asks nothing while nothing happens.
func (s *Server) followRun(ctx context.Context, w io.Writer, fl http.Flusher, r *http.Request, id string) {
	since, _ := strconv.ParseInt(r.Header.Get("Last-Event-ID"), 10, 64)
	evs := make(chan weftclient.Event, 256)
	followed := make(chan struct{})
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		defer close(followed)
		o := weftclient.StreamOptions{Since: max(since, 0), Interval: s.o.PollInterval, DeltaInterval: s.o.PollInterval}
		_, _ = s.o.Client.Stream(sctx, id, o, func(e weftclient.Event) {
			select {
			case evs <- e:
			case <-sctx.Done():
			}
		})
	}()
	var last []byte
	// snapshot writes the run's snapshot when it changed; done: the run closed and its state was
	// read (the stream has said all)
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
		if b, _ := json.Marshal(snap); !bytes.Equal(b, last) {
			last = b
			_, _ = fmt.Fprintf(w, "event: snapshot\ndata: %s\n\n", b)
			fl.Flush()
		}
		return snap.Closed && snap.StateErr == ""
	}
	forward := func(e weftclient.Event) {
		if e.Seq > 0 {
			_, _ = fmt.Fprintf(w, "event: run-event\nid: %d\ndata: %s\n\n", e.Seq, mustJSON(e))
		} else {
			_, _ = fmt.Fprintf(w, "event: run-event\ndata: %s\n\n", mustJSON(e))
		}
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
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-evs:
			forward(e)
			drain()
			fl.Flush()
		case <-quiet.C:
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
			_, _ = io.WriteString(w, "event: end\ndata: {}\n\n")
			fl.Flush()
			return
		}
		if snapshot() && ctx.Err() == nil {
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
			_, _ = io.WriteString(w, "event: end\ndata: {}\n\n")
			fl.Flush()
			return
		}
		quiet.Reset(quietSnapshot)
	}
}
