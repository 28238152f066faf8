package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/weftworks/weft/events"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
)

// Environment variables the CLI reads for the gateway its followers go through (weft watch,
// weft status --follow: --gateway and --gateway-key default to them).
const (
	EnvGateway    = "WEFT_GATEWAY"
	EnvGatewayKey = "WEFT_GATEWAY_KEY"
)

// Gateway is a weft gateway's HTTP API (`weft mcp --transport http`, docs/http.md) that Stream
// follows runs through when it is set (FollowThrough): the gateway follows each run once, however
// many connect to it (its Streams share one history watch and one events query per workflow
// task), so a hundred processes following a run through it cost the run's worker one query per
// workflow task instead of a hundred.
type Gateway struct {
	// URL is the gateway's base URL (http://host:8080), the one its /v1 API is under.
	URL string
	// Key is an API key of the gateway that may read the runs followed (Authorization: Bearer);
	// "" for a gateway without keys.
	Key string
	// HTTP sends the requests (nil: a client of its own, without a timeout: a stream lasts as
	// long as its run).
	HTTP *http.Client
	// Idle is how long a stream may send nothing, not even the gateway's heartbeat comment
	// (every 15 s), before it is taken for dead and made again (default 1 min: a gateway whose
	// host went away without closing the connection).
	Idle time.Duration
}

// FollowThrough makes c's Streams follow runs through g's /v1/runs/{id}/events instead of
// asking the run's worker themselves (g.URL "": directly again). Everything else (the run's
// result, its state, reviews) still goes to Temporal. When the gateway cannot be reached, Stream
// follows the run directly from where the gateway left it.
func (c *Client) FollowThrough(g Gateway) {
	if strings.TrimSpace(g.URL) == "" {
		c.gateway = nil
		return
	}
	g.URL = strings.TrimRight(strings.TrimSpace(g.URL), "/")
	if g.HTTP == nil {
		g.HTTP = &http.Client{}
	}
	if g.Idle <= 0 {
		g.Idle = time.Minute
	}
	c.gateway = &g
}

// gatewayTries is how many connections to the gateway in a row may fail (read the run no
// further) before Stream follows the run directly.
const gatewayTries = 3

var (
	// errGatewayRefused: the gateway refused the key (Stream does not go around a refusal).
	errGatewayRefused = errors.New("the gateway refused to follow the run")
	// errGatewayNoRun: the gateway knows no such run (Stream asks Temporal).
	errGatewayNoRun = errors.New("the gateway found no such run")
)

// streamGateway is Stream through the gateway: the same events in the same order, numbered as
// the run numbered them; a connection that ends before the run does is made again after the last
// event read (since, and the run it counts in), and after gatewayTries failures in a row the
// run is followed directly from there. The run's result comes from Temporal, as in Stream.
func (c *Client) streamGateway(ctx context.Context, id string, o StreamOptions, fn func(events.Event), done chan outcome) (*weftv1.RunResult, error) {
	s := &streamer{c: c, id: id, o: o, fn: fn, since: o.Since, runID: o.SinceRun, models: map[string]events.Event{}}
	failed := 0 // connections in a row that read nothing
	for {
		since, run := s.since, s.runID
		err := c.gateway.follow(ctx, id, since, run, func(e events.Event) { s.fromGateway(ctx, e) })
		if s.ended != nil {
			select {
			case out := <-done:
				return s.finish(out)
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, errGatewayRefused) {
			return nil, err
		}
		switch {
		case errors.Is(err, errGatewayNoRun):
			failed = gatewayTries // the direct path says what there is
		case s.since != since || s.runID != run:
			failed = 0 // it read the run further: connect again at once
		default:
			failed++
		}
		if failed >= gatewayTries {
			// the gateway is down or cannot follow the run: follow it directly from here (the
			// direct path says what it finds itself: no such run, no worker)
			page, err := c.Events(ctx, id, s.since)
			if errors.Is(err, errNoEventModel) {
				return c.streamPolled(ctx, id, o, fn, done)
			}
			return s.run(ctx, page, err, done)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(failed) * 100 * time.Millisecond):
		}
	}
}

// fromGateway takes one event the gateway sent: the run's events once each and in order (a
// reconnect may send again what was read), model text unless NoDeltas, the run's end held until
// its result is known.
func (s *streamer) fromGateway(ctx context.Context, e events.Event) {
	switch {
	case e.Type == events.ContinuedAsNew:
		s.runID, s.since = e.RunID, 0
		s.fn(e)
		return
	case e.Type == events.LLMDelta:
		if !s.o.NoDeltas {
			s.fn(e)
		}
		return
	case e.Seq == 0:
		s.fn(e) // a child run's reviews, a skipped-events notice
		return
	case e.Seq <= s.since:
		return // never twice
	}
	s.since = e.Seq
	switch e.Type {
	case events.RunCompleted, events.RunFailed:
		s.ended = &e
		return
	case events.StepCompleted, events.StepFailed:
		if s.o.StepOutputs && e.StepState != nil {
			if st, err := s.c.ownState(ctx, s.id); err == nil {
				for _, step := range st.GetSteps() {
					if step.Id == e.Step {
						e.StepState.Output, e.StepState.OutputTruncated = step.Output, step.OutputTruncated
					}
				}
			}
		}
	}
	s.fn(e)
}

// follow reads run id's events from the gateway after since (in run runID, "" the newest) and
// calls fn with each, until the gateway ends the stream (the run ended, or the gateway stopped)
// or ctx ends.
func (g *Gateway) follow(ctx context.Context, id string, since int64, runID string, fn func(events.Event)) error {
	q := url.Values{}
	if since > 0 {
		q.Set("since", strconv.FormatInt(since, 10))
	}
	if runID != "" {
		q.Set("run", runID)
	}
	u := g.URL + "/v1/runs/" + url.PathEscape(id) + "/events"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	idle := time.AfterFunc(g.Idle, cancel) // a stream that says nothing for so long is dead
	defer idle.Stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("gateway %s: %w (set %s or --gateway to the gateway's base URL)", g.URL, err, EnvGateway)
	}
	req.Header.Set("Accept", "text/event-stream")
	if g.Key != "" {
		req.Header.Set("Authorization", "Bearer "+g.Key)
	}
	resp, err := g.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("following run %s through the gateway %s: %w", id, g.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return fmt.Errorf("%w %s (%s: %s): set %s or --gateway-key to a key that may read it, or unset %s to follow runs directly",
			errGatewayRefused, id, resp.Status, strings.TrimSpace(string(body)), EnvGatewayKey, EnvGateway)
	}
	if resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w %s", errGatewayNoRun, id)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return fmt.Errorf("following run %s through the gateway %s: %s: %s", id, g.URL, resp.Status, strings.TrimSpace(string(body)))
	}
	return readSSE(resp.Body, func() { idle.Reset(g.Idle) }, fn)
}

// readSSE reads server-sent events whose data is an events.Event (the gateway's runEvents) and
// calls fn with each; comments (heartbeats) are skipped; alive is called for each line.
func readSSE(r io.Reader, alive func(), fn func(events.Event)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var data strings.Builder
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		alive()
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if data.Len() > 0 {
				var e events.Event
				if err := json.Unmarshal([]byte(data.String()), &e); err != nil {
					return fmt.Errorf("an event from the gateway does not decode: %w", err)
				}
				fn(e)
			}
			data.Reset()
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
}
