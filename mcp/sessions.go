package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/weftworks/weft/auth"
)

// Sessions over streamable HTTP. initialize answers with an Mcp-Session-Id; a client that sends it
// back gets a session: its log level (logging/setLevel), its resource subscriptions, and a GET
// /mcp event stream on which they (and tools/list_changed) reach it. A session belongs to the key
// that opened it: another key's requests with its id are answered 404 like an unknown id, and
// only its key may end it (DELETE). A request without the header is served as before, statelessly
// (its own short-lived session, progress on the POST's own stream), so stateless clients and
// scripts work unchanged. Sessions without a request or an open stream for sessionIdleTTL are
// ended (keySessions.sweep: mcp-go's own idle clock would not see the tool calls served on a
// session of their own, nor an open stream).

// sessionIdleTTL is how long a session lives without a request or an open stream.
var sessionIdleTTL = 30 * time.Minute

// keySessions records which key opened which session, and when each was last used.
type keySessions struct {
	mu    sync.Mutex
	owner map[string]string    // session id -> key name
	seen  map[string]time.Time // session id -> its last request
	open  map[string]int       // session id -> its open event streams
	// end terminates a session through the transport (a DELETE as its key); set by HTTPHandler
	end      func(id, key string)
	sweeping bool
	// ttl is sessionIdleTTL as it was when the gateway was made: the sweeper reads it, and may
	// outlive a test that changes the variable
	ttl time.Duration
	// calls numbers the call sessions of tool calls (callID); ask holds, per session, the call
	// session asking its person now (elicitation: one question at a time), and askFree a
	// one-slot semaphore per session
	calls   atomic.Int64
	ask     map[string]string
	askFree map[string]chan struct{}
}

func newKeySessions() *keySessions {
	return &keySessions{owner: map[string]string{}, seen: map[string]time.Time{}, open: map[string]int{}, ask: map[string]string{}, askFree: map[string]chan struct{}{},
		ttl: sessionIdleTTL}
}

// callMark separates a session's id from the number of one of its tool calls in the id of the
// call session that call is served on (hygiene): "weft-…~call-7".
const callMark = "~call-"

// callID names a new call session of session id.
func (k *keySessions) callID(id string) string {
	return id + callMark + strconv.FormatInt(k.calls.Add(1), 10)
}

// ofSession is the session a (call) session id belongs to.
func ofSession(id string) string {
	base, _, _ := strings.Cut(id, callMark)
	return base
}

// asking marks call session cs (of session id) as asking its person a question (elicitation)
// until the returned func is called: the client's answer, posted with the session's id, goes to
// it (answerTo). A session's calls ask one at a time; this waits for its turn. Without a session
// (stdio, no HTTPHandler) there is nothing to route.
func (k *keySessions) asking(ctx context.Context, id string, cs server.ClientSession) (func(), error) {
	if k == nil || id == "" || cs == nil {
		return func() {}, nil
	}
	k.mu.Lock()
	free, ok := k.askFree[id]
	if !ok {
		free = make(chan struct{}, 1)
		free <- struct{}{}
		k.askFree[id] = free
	}
	k.mu.Unlock()
	select {
	case <-free:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	k.mu.Lock()
	k.ask[id] = cs.SessionID()
	k.mu.Unlock()
	return func() {
		k.mu.Lock()
		delete(k.ask, id)
		k.mu.Unlock()
		free <- struct{}{}
	}, nil
}

// answerTo is the call session a client's response posted with session id is for ("" : none).
func (k *keySessions) answerTo(id string) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.ask[id]
}

// touch records a request of session id (every request counts, the tool calls HTTPHandler serves
// on a session of their own included, which mcp-go's own idle clock would not see).
func (k *keySessions) touch(id string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.owner[id]; ok {
		k.seen[id] = time.Now()
	}
}

// streaming marks an event stream of session id open until the returned func is called: a
// session with an open stream is not idle.
func (k *keySessions) streaming(id string) func() {
	k.mu.Lock()
	k.open[id]++
	k.mu.Unlock()
	return func() {
		k.mu.Lock()
		if k.open[id]--; k.open[id] <= 0 {
			delete(k.open, id)
		}
		k.mu.Unlock()
		k.touch(id)
	}
}

// sweep ends the sessions idle for sessionIdleTTL, every quarter of it, while there are any.
func (k *keySessions) sweep() {
	t := time.NewTicker(k.ttl / 4)
	defer t.Stop()
	for range t.C {
		k.mu.Lock()
		if len(k.owner) == 0 {
			k.sweeping = false
			k.mu.Unlock()
			return
		}
		var idle [][2]string
		for id, key := range k.owner {
			if k.open[id] == 0 && time.Since(k.seen[id]) > k.ttl {
				idle = append(idle, [2]string{id, key})
			}
		}
		end := k.end
		k.mu.Unlock()
		for _, s := range idle {
			if end != nil {
				end(s[0], s[1])
			}
			k.mu.Lock()
			k.drop(s[0])
			k.mu.Unlock()
		}
	}
}

// drop forgets session id; k.mu held.
func (k *keySessions) drop(id string) {
	delete(k.owner, id)
	delete(k.seen, id)
	delete(k.askFree, id)
}

// ResolveSessionIdManager gives mcp-go a view of the sessions bound to the request's key.
func (k *keySessions) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	if r == nil {
		return &keyView{k: k, key: "\x00nobody"} // mcp-go's own sweeper (not enabled): terminates nothing
	}
	id, _ := auth.IdentityFrom(r.Context())
	return &keyView{k: k, key: id.Name}
}

// owns reports whether key opened session id.
func (k *keySessions) owns(id, key string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	owner, ok := k.owner[id]
	return ok && owner == key
}

func (k *keySessions) forget(_ context.Context, s server.ClientSession) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.drop(s.SessionID())
}

var errUnknownSession = errors.New("unknown session: initialize again (a session ends after 30 minutes idle or when its key ends it)")

type keyView struct {
	k   *keySessions
	key string
}

func (v *keyView) Generate() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	id := "weft-" + hex.EncodeToString(b)
	v.k.mu.Lock()
	v.k.owner[id] = v.key
	v.k.seen[id] = time.Now()
	if !v.k.sweeping {
		v.k.sweeping = true
		go v.k.sweep()
	}
	v.k.mu.Unlock()
	return id
}

func (v *keyView) Validate(id string) (bool, error) {
	if id == "" {
		return false, nil // no session asked for: served statelessly
	}
	if !v.k.owns(ofSession(id), v.key) { // a call session is its session's
		return false, errUnknownSession
	}
	return false, nil
}

func (v *keyView) Terminate(id string) (bool, error) {
	if !v.k.owns(id, v.key) {
		return true, nil // not this key's: not allowed
	}
	v.k.mu.Lock()
	v.k.drop(id)
	v.k.mu.Unlock()
	return false, nil
}

// maxSessionEvents is how many of a session's last stream messages are kept for a client that
// resumes a broken stream (GET /mcp with Last-Event-ID).
const maxSessionEvents = 1000

// eventLog is the gateway's EventStore: resumable streams (Last-Event-ID) for sessions, the last
// maxSessionEvents messages of each, dropped with the session. Requests without a session are
// not recorded (nobody could resume them), so stateless traffic costs no memory. Having a store
// also makes mcp-go hand a request's last notifications to its stream in order before the
// response: without one, a notification taken off the queue as the call returns is dropped.
type eventLog struct {
	mu       sync.Mutex
	next     int64
	sessions map[string][]storedEvent
}

type storedEvent struct {
	id, stream string
	msg        json.RawMessage
}

func newEventLog() *eventLog { return &eventLog{sessions: map[string][]storedEvent{}} }

func (l *eventLog) StoreEvent(_ context.Context, session, stream string, msg json.RawMessage) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	id := strconv.FormatInt(l.next, 10)
	if session == "" || strings.Contains(session, callMark) {
		return id, nil // nobody resumes a call session's stream (a call is served on its own)
	}
	events := append(l.sessions[session], storedEvent{id: id, stream: stream, msg: msg})
	if len(events) > maxSessionEvents {
		events = slices.Clone(events[len(events)-maxSessionEvents:])
	}
	l.sessions[session] = events
	return id, nil
}

func (l *eventLog) ReplayEventsAfter(_ context.Context, session, last string, send func(string, json.RawMessage) error) (string, error) {
	l.mu.Lock()
	events := slices.Clone(l.sessions[session])
	l.mu.Unlock()
	at := slices.IndexFunc(events, func(e storedEvent) bool { return e.id == last })
	if at < 0 {
		return "", fmt.Errorf("event %q of this session is not kept (the last %d are): %w", last, maxSessionEvents, server.ErrUnknownEventID)
	}
	stream := events[at].stream
	for _, e := range events[at+1:] {
		if e.stream != stream {
			continue
		}
		if err := send(e.id, e.msg); err != nil {
			return stream, err
		}
	}
	return stream, nil
}

func (l *eventLog) PurgeSession(_ context.Context, session string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.sessions, session)
	return nil
}
