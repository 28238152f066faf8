package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/events"
)

// Resource subscriptions: a client subscribes to weft://executions/{id} (resources/subscribe) and
// gets notifications/resources/updated each time the run's state changes (a step starts or ends,
// a review is asked for or decided, the run ends), then reads the resource again. The gateway
// follows each subscribed run once, with client.Stream (the run's events, a long poll: nothing is
// asked while nothing happens), whatever the number of sessions subscribed to it; the follower
// stops when the last of them unsubscribes or goes away, or when the run ends.
//
// Subscribing needs a session the gateway can reach later: stdio, or streamable HTTP with the
// Mcp-Session-Id from initialize (and a GET /mcp stream to receive on). The caller must be allowed
// to read the run (reader role, and the read rule of client.CheckRead).

const executionsPrefix = "weft://executions/"

// subscriptions holds the followed runs.
type subscriptions struct {
	g  *Gateway
	mu sync.Mutex
	// runs: run id -> its follower
	runs map[string]*follower
}

type follower struct {
	// sessions: who is told, by key (a session id, or "listen:…" for a subscriptions/listen
	// stream), with how to tell it
	sessions map[string]func(uri string)
	stop     context.CancelFunc
	done     chan struct{}
}

func newSubscriptions(g *Gateway) *subscriptions {
	return &subscriptions{g: g, runs: map[string]*follower{}}
}

func (s *subscriptions) hook(h *server.Hooks) {
	h.AddOnRequestInitialization(s.check)
	h.AddAfterSubscribe(func(ctx context.Context, _ any, req *mcplib.SubscribeRequest, _ *mcplib.EmptyResult) {
		if sess := server.ClientSessionFromContext(ctx); sess != nil {
			id, run := sess.SessionID(), strings.TrimPrefix(req.Params.URI, executionsPrefix)
			s.add(run, id, s.tell(id))
			s.g.sessions.subscribed(id, run, true) // kept with the session (durable sessions)
		}
	})
	// Protocol 2026-07-28 replaced resources/subscribe with subscriptions/listen: a stream that
	// lasts as long as the request. Its resources are followed while it is open.
	h.AddBeforeSubscriptionsListen(func(ctx context.Context, _ any, req *mcplib.SubscriptionsListenRequest) {
		sess := server.ClientSessionFromContext(ctx)
		if sess == nil {
			return
		}
		for _, uri := range req.Params.Notifications.ResourceSubscriptions {
			s.add(strings.TrimPrefix(uri, executionsPrefix), listenKey(sess), func(uri string) {
				n := mcplib.JSONRPCNotification{JSONRPC: mcplib.JSONRPC_VERSION, Notification: mcplib.Notification{
					Method: string(mcplib.MethodNotificationResourceUpdated), Params: mcplib.NotificationParams{AdditionalFields: map[string]any{"uri": uri}}}}
				select {
				case sess.NotificationChannel() <- n:
				default: // the stream is not reading: it reads the resource when it catches up
				}
			})
		}
	})
	h.AddAfterSubscriptionsListen(func(ctx context.Context, _ any, _ *mcplib.SubscriptionsListenRequest, _ *mcplib.SubscriptionsListenResult) {
		if sess := server.ClientSessionFromContext(ctx); sess != nil {
			s.removeSession(listenKey(sess))
		}
	})
	h.AddAfterUnsubscribe(func(ctx context.Context, _ any, req *mcplib.UnsubscribeRequest, _ *mcplib.EmptyResult) {
		if sess := server.ClientSessionFromContext(ctx); sess != nil {
			run := strings.TrimPrefix(req.Params.URI, executionsPrefix)
			s.remove(run, sess.SessionID())
			s.g.sessions.subscribed(sess.SessionID(), run, false)
		}
	})
	h.AddOnUnregisterSession(func(_ context.Context, sess server.ClientSession) { s.removeSession(sess.SessionID()) })
}

// tell notifies session id that a resource it subscribed to changed.
func (s *subscriptions) tell(id string) func(uri string) {
	return func(uri string) {
		_ = s.g.srv.SendNotificationToSpecificClient(id, string(mcplib.MethodNotificationResourceUpdated), map[string]any{"uri": uri})
	}
}

func listenKey(sess server.ClientSession) string { return fmt.Sprintf("listen:%p", sess) }

// check refuses a resources/subscribe the gateway cannot honour or the caller may not make,
// before mcp-go acknowledges it.
func (s *subscriptions) check(ctx context.Context, _ any, message any) error {
	raw, ok := message.(json.RawMessage)
	if !ok {
		return nil
	}
	var head struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(raw, &head) != nil {
		return nil
	}
	switch head.Method {
	case string(mcplib.MethodResourcesSubscribe):
		var req mcplib.SubscribeRequest
		if err := json.Unmarshal(raw, &req); err != nil {
			return fmt.Errorf("resources/subscribe: %w", err)
		}
		if sess := server.ClientSessionFromContext(ctx); sess == nil || sess.SessionID() == "" {
			return fmt.Errorf("cannot subscribe to %s without a session: over HTTP send the Mcp-Session-Id header initialize returned, and open GET /mcp with it to receive updates", req.Params.URI)
		}
		return s.mayFollow(ctx, req.Params.URI)
	case string(mcplib.MethodSubscriptionsListen):
		var req mcplib.SubscriptionsListenRequest
		if err := json.Unmarshal(raw, &req); err != nil {
			return fmt.Errorf("subscriptions/listen: %w", err)
		}
		for _, uri := range req.Params.Notifications.ResourceSubscriptions {
			if err := s.mayFollow(ctx, uri); err != nil {
				return err
			}
		}
	}
	return nil
}

// mayFollow checks that uri can be subscribed to, by this caller.
func (s *subscriptions) mayFollow(ctx context.Context, uri string) error {
	id := strings.TrimPrefix(uri, executionsPrefix)
	if !strings.HasPrefix(uri, executionsPrefix) || id == "" || strings.Contains(id, "/") {
		return fmt.Errorf("cannot subscribe to %q: only weft://executions/{id} can be subscribed to", uri)
	}
	if err := needRole(ctx, "subscribing to "+uri, auth.RoleReader); err != nil {
		return err
	}
	c, err := s.g.temporal(ctx)
	if err != nil {
		return err
	}
	return c.CheckRead(ctx, "execution "+id, id, caller(ctx))
}

// add subscribes a session to a run, starting the run's follower when it is the first.
func (s *subscriptions) add(run, session string, tell func(uri string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.runs[run]; ok {
		f.sessions[session] = tell
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	f := &follower{sessions: map[string]func(string){session: tell}, stop: stop, done: make(chan struct{})}
	s.runs[run] = f
	go s.follow(ctx, run, f)
}

func (s *subscriptions) remove(run, session string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.runs[run]
	if !ok {
		return
	}
	delete(f.sessions, session)
	if len(f.sessions) == 0 {
		f.stop()
		delete(s.runs, run)
	}
}

func (s *subscriptions) removeSession(session string) {
	s.mu.Lock()
	runs := make([]string, 0, len(s.runs))
	for run, f := range s.runs {
		if _, ok := f.sessions[session]; ok {
			runs = append(runs, run)
		}
	}
	s.mu.Unlock()
	for _, run := range runs {
		s.remove(run, session)
	}
}

// followed returns the followed runs and their sessions (tests, logs).
func (s *subscriptions) followed() map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]string{}
	for run, f := range s.runs {
		for sess := range f.sessions {
			out[run] = append(out[run], sess)
		}
		sort.Strings(out[run])
	}
	return out
}

// changes says whether an event changes what weft://executions/{id} shows.
func changes(e events.Event) bool {
	switch e.Type {
	case events.LLMDelta, events.Iteration, events.LLMStarted, events.LLMFinished, events.Usage:
		return false
	}
	return true
}

// follow streams one run's events and tells its sessions when its state changed, until the run
// ends or ctx is cancelled (the last session left). A lost stream is resumed after the last event.
func (s *subscriptions) follow(ctx context.Context, run string, f *follower) {
	defer close(f.done)
	uri := executionsPrefix + run
	// A burst of events (a page of them, a run read from its start) makes one notification: the
	// client reads the whole state anyway.
	changed := make(chan struct{}, 1)
	sent := make(chan struct{})
	defer func() { <-sent }()
	defer close(changed)
	go func() {
		defer close(sent)
		for range changed {
			s.mu.Lock()
			tell := make([]func(string), 0, len(f.sessions))
			for _, t := range f.sessions {
				tell = append(tell, t)
			}
			s.mu.Unlock()
			for _, t := range tell {
				t(uri)
			}
		}
	}()
	notify := func() {
		select {
		case changed <- struct{}{}:
		default: // one is pending already
		}
	}
	var since int64
	for wait := 250 * time.Millisecond; ctx.Err() == nil; wait = min(2*wait, 10*time.Second) {
		c, err := s.g.temporal(ctx)
		if err == nil {
			_, err = c.Stream(ctx, run, weftclient.StreamOptions{NoDeltas: true, Since: since}, func(e events.Event) {
				if e.Seq > 0 {
					since = e.Seq
				}
				if changes(e) {
					notify()
				}
			})
			if ctx.Err() != nil {
				return
			}
			if runEnded(err) {
				// the run ended (its end was notified): nothing more will change
				s.g.o.Log.Info("subscription follower done", "execution", run)
				s.mu.Lock()
				if s.runs[run] == f {
					delete(s.runs, run)
				}
				s.mu.Unlock()
				return
			}
		}
		s.g.o.Log.Warn("following a subscribed execution", "execution", run, "error", err, "retry in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// runEnded tells the run's own end (no error, or a failed or cancelled run's error from Stream,
// or a run that no longer exists) from a lost connection to Temporal (retry).
func runEnded(err error) bool {
	var ended *temporal.WorkflowExecutionError
	var gone *serviceerror.NotFound
	return err == nil || errors.As(err, &ended) || errors.As(err, &gone)
}
