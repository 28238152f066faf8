package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/events"
)

// TextReadInterval is how often the events route reads a running model call's text: as often as
// the worker sends it (worker.New's heartbeat throttle), since the gateway's streams of a run share
// one read (weftclient's texts), so however many processes follow through it the run's text costs
// the server one read per interval. A process of its own reads every 100 ms (StreamOptions'
// default): a hundred such processes at this rate slowed every reader (docs/performance.md).
const TextReadInterval = 50 * time.Millisecond

// runEvents follows a run as server-sent events (weftclient.Stream): each event's id is its
// sequence number, so a client that reconnects with Last-Event-ID goes on after the last it saw.
func runEvents(c *call, in runIn) error {
	since := in.Since
	if last := strings.TrimSpace(c.r.Header.Get("Last-Event-ID")); last != "" {
		n, err := strconv.ParseInt(last, 10, 64)
		if err != nil || n < 0 {
			return invalid("Last-Event-ID", fmt.Sprintf("Last-Event-ID %q: send the id of the last event received (a sequence number)", last))
		}
		since = n
	}
	if since < 0 {
		return invalid("?since", "since: send 0 or the sequence number of the last event received")
	}
	wc, err := c.client()
	if err != nil {
		return err
	}
	if err := wc.CheckRead(c.ctx, "run "+in.ID, in.ID, c.caller()); err != nil {
		return err
	}
	if _, err := wc.Describe(c.ctx, in.ID); err != nil {
		return err // no such run: a problem, not an empty stream
	}
	h := c.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	c.w.WriteHeader(http.StatusOK)
	flusher, _ := c.w.(http.Flusher)
	var mu sync.Mutex
	write := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		_, _ = c.w.Write([]byte(s))
		if flusher != nil {
			flusher.Flush()
		}
	}
	write(": following run " + in.ID + "\n\n")
	done := make(chan struct{})
	defer close(done)
	go func() {
		t := time.NewTicker(c.api.o.Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				write(": still following\n\n")
			}
		}
	}()
	_, err = wc.Stream(c.ctx, in.ID, weftclient.StreamOptions{Since: since, SinceRun: in.Run, DeltaInterval: TextReadInterval}, func(e events.Event) {
		b, err := json.Marshal(e)
		if err != nil {
			return
		}
		var sb strings.Builder
		if e.Seq > 0 {
			fmt.Fprintf(&sb, "id: %d\n", e.Seq)
		}
		fmt.Fprintf(&sb, "event: %s\ndata: %s\n\n", e.Type, b)
		write(sb.String())
	})
	if err != nil && c.ctx.Err() == nil {
		// a run that failed says so in its events (run_failed); this says it once more, as a
		// comment, for a stream that stopped for another reason
		write(": " + strings.ReplaceAll(weftclient.Cause(err), "\n", " ") + "\n\n")
	}
	return nil
}
