package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/weftworks/weft/activities/mongostore"
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

// Sessions are durable when the gateway has a knowledge store (Options.Config.MongoDBURI): each
// one's record (its id, the key that opened it, its log level, its subscriptions, whether its
// client takes elicitation forms, when it was last used) is kept in the store's
// weft_mcp_sessions collection (sessionStore), so a gateway restarted on the same store
// recognises an id it did not issue: the first request with it, from the key that opened it,
// recalls the session (owns: mcp-go asks through the SessionIdManager the resolver gives it, and
// the hygiene layer through owns too) and gives it back its level, its elicitation capability
// and its subscriptions. Another key's request with the id is 404 as before; a session ended by
// DELETE or idleness is removed from the store, so it stays ended.

// sessionIdleTTL is how long a session lives without a request or an open stream.
var sessionIdleTTL = 30 * time.Minute

// sessionSeenEvery is how often at most a session's last use is written to the store (every
// request would cost a write); a recalled session is idle from its last written use.
var sessionSeenEvery = time.Minute

// storeTimeout bounds one session write or read of the store.
const storeTimeout = 5 * time.Second

// sessionStore keeps the sessions' records where a restarted gateway finds them.
type sessionStore interface {
	put(ctx context.Context, rec mongostore.MCPSession, create bool) error
	get(ctx context.Context, id string) (mongostore.MCPSession, bool, error)
	remove(ctx context.Context, id string) error
	// prune removes the sessions last used before then
	prune(ctx context.Context, before time.Time) error
}

// knowledgeStoreSessions is the sessionStore in the gateway's knowledge store (its database).
type knowledgeStoreSessions struct{ g *Gateway }

func (s knowledgeStoreSessions) put(ctx context.Context, rec mongostore.MCPSession, create bool) error {
	st, err := s.g.store.Store(ctx)
	if err != nil {
		return err
	}
	return st.PutMCPSession(ctx, s.g.memoryDB(), rec, create)
}

func (s knowledgeStoreSessions) get(ctx context.Context, id string) (mongostore.MCPSession, bool, error) {
	st, err := s.g.store.Store(ctx)
	if err != nil {
		return mongostore.MCPSession{}, false, err
	}
	return st.GetMCPSession(ctx, s.g.memoryDB(), id)
}

func (s knowledgeStoreSessions) prune(ctx context.Context, before time.Time) error {
	st, err := s.g.store.Store(ctx)
	if err != nil {
		return err
	}
	_, err = st.PruneMCPSessions(ctx, s.g.memoryDB(), before)
	return err
}

func (s knowledgeStoreSessions) remove(ctx context.Context, id string) error {
	st, err := s.g.store.Store(ctx)
	if err != nil {
		return err
	}
	return st.DeleteMCPSession(ctx, s.g.memoryDB(), id)
}

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

	// store keeps the records (nil: sessions live in memory only); recs holds what is kept of
	// each session, written (under writeMu, so writes of one session keep their order) when it
	// changes and, for its last use, at most every sessionSeenEvery (written: when last)
	store   sessionStore
	recs    map[string]*mongostore.MCPSession
	written map[string]time.Time
	writeMu sync.Mutex
	// storeDown is when the store last failed (storeUp)
	storeDown time.Time
	// restore gives a session recalled from the store its level, capabilities and
	// subscriptions back (set by HTTPHandler)
	restore func(rec mongostore.MCPSession)
	// ended forgets what the gateway keeps per session (subscriptions, level, capabilities) when
	// the session ends; mcp-go's unregister hook does not reach a recalled session that never
	// opened a stream (it was never registered with the server)
	ended func(id string)
	log   *slog.Logger
}

func newKeySessions() *keySessions {
	return &keySessions{owner: map[string]string{}, seen: map[string]time.Time{}, open: map[string]int{}, ask: map[string]string{}, askFree: map[string]chan struct{}{},
		ttl: sessionIdleTTL, recs: map[string]*mongostore.MCPSession{}, written: map[string]time.Time{}, log: slog.New(slog.DiscardHandler)}
}

// persist writes session id's record to the store; create says whether it may be created (only
// when the session is opened: a later write never brings back a session that ended meanwhile).
func (k *keySessions) persist(id string, create bool) {
	if !k.storeUp() {
		return
	}
	k.writeMu.Lock()
	defer k.writeMu.Unlock()
	k.mu.Lock()
	rec, ok := k.recs[id]
	var m mongostore.MCPSession
	if ok {
		m = *rec
		m.Subscriptions = slices.Clone(rec.Subscriptions)
		m.LastSeen = k.seen[id].UTC()
		k.written[id] = k.seen[id]
	}
	k.mu.Unlock()
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := k.store.put(ctx, m, create); err != nil {
		k.storeFailed()
		k.log.Warn("keeping an MCP session in the store (it lives on in this gateway only)", "session", id, "error", err)
	}
}

// storeRest is how long the store is left alone after it failed: a store that is down costs one
// request the timeout, not every initialize.
const storeRest = 30 * time.Second

// storeUp reports whether there is a store to use: one, and not failed in the last storeRest.
func (k *keySessions) storeUp() bool {
	if k.store == nil {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.storeDown.IsZero() || time.Since(k.storeDown) >= storeRest
}

// storeFailed notes that the store did not answer.
func (k *keySessions) storeFailed() {
	k.mu.Lock()
	k.storeDown = time.Now()
	k.mu.Unlock()
}

// change applies f to session id's record and writes it; sessions this gateway does not hold
// (a call session, a stateless request's) are left alone.
func (k *keySessions) change(id string, f func(rec *mongostore.MCPSession)) {
	if k == nil || id == "" {
		return
	}
	k.mu.Lock()
	rec, ok := k.recs[id]
	if ok {
		f(rec)
	}
	k.mu.Unlock()
	if ok {
		k.persist(id, false)
	}
}

// setLevel records the log level session id chose (logging/setLevel).
func (k *keySessions) setLevel(id string, level mcplib.LoggingLevel) {
	k.change(id, func(rec *mongostore.MCPSession) { rec.Level = string(level) })
}

// subscribed records that session id follows run (on) or no longer does.
func (k *keySessions) subscribed(id, run string, on bool) {
	k.change(id, func(rec *mongostore.MCPSession) {
		rec.Subscriptions = slices.DeleteFunc(rec.Subscriptions, func(r string) bool { return r == run })
		if on {
			rec.Subscriptions = append(rec.Subscriptions, run)
		}
	})
}

// elicits records that session id's client takes elicitation forms.
func (k *keySessions) elicits(id string) {
	k.change(id, func(rec *mongostore.MCPSession) { rec.Elicit = true })
}

// recall looks session id up in the store for a request of key: a session of key that has not
// been idle for the TTL is held again (its level, capabilities and subscriptions restored) and
// owned; another key's, an expired one or one the store does not hold is not.
func (k *keySessions) recall(id, key string) bool {
	if id == "" || strings.Contains(id, callMark) || !k.storeUp() {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	rec, found, err := k.store.get(ctx, id)
	if err != nil {
		k.storeFailed()
		k.log.Warn("looking an MCP session up in the store", "session", id, "error", err)
		return false
	}
	if !found || rec.Key != key {
		return false // unknown, or another key's: 404 as for an unknown id, and nothing restored
	}
	if time.Since(rec.LastSeen) > k.ttl+sessionSeenEvery {
		_ = k.store.remove(ctx, id) // it would have been ended for idleness
		return false
	}
	k.mu.Lock()
	if owner, held := k.owner[id]; held { // recalled meanwhile by another request
		k.mu.Unlock()
		return owner == key
	}
	k.owner[id], k.seen[id] = key, time.Now()
	r := rec
	k.recs[id] = &r
	if !k.sweeping {
		k.sweeping = true
		go k.sweep()
	}
	k.mu.Unlock()
	if k.restore != nil {
		k.restore(rec)
	}
	k.persist(id, false)
	k.log.Info("MCP session resumed from the store", "session", id, "key", key, "subscriptions", len(rec.Subscriptions))
	return true
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
	write := false
	if _, ok := k.owner[id]; ok {
		k.seen[id] = time.Now()
		write = k.store != nil && time.Since(k.written[id]) >= sessionSeenEvery
	}
	k.mu.Unlock()
	if write {
		k.persist(id, false)
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
		var streaming []string
		for id, key := range k.owner {
			switch {
			case k.open[id] > 0:
				streaming = append(streaming, id)
			case time.Since(k.seen[id]) > k.ttl:
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
		for _, id := range streaming {
			k.touch(id) // in use: its record must not look idle to a restarted gateway
		}
		k.prune()
	}
}

// prune removes from the store the sessions idle past the TTL that no gateway ended: those a
// stopped gateway held and nobody came back for.
func (k *keySessions) prune() {
	if !k.storeUp() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := k.store.prune(ctx, time.Now().Add(-k.ttl-sessionSeenEvery)); err != nil {
		k.storeFailed()
		k.log.Warn("removing idle MCP sessions from the store", "error", err)
	}
}

// drop forgets session id; k.mu held.
func (k *keySessions) drop(id string) {
	delete(k.owner, id)
	delete(k.seen, id)
	delete(k.askFree, id)
	delete(k.recs, id)
	delete(k.written, id)
}

// erase removes session id from the store: it ended (DELETE by its key, or idle), and a
// restarted gateway must not resume it.
func (k *keySessions) erase(id string) {
	if k.store == nil { // tried even while the store rests: an ended session must stay ended
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := k.store.remove(ctx, id); err != nil {
		k.storeFailed()
		k.log.Warn("removing an ended MCP session from the store", "session", id, "error", err)
	}
}

// ResolveSessionIdManager gives mcp-go a view of the sessions bound to the request's key.
func (k *keySessions) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	if r == nil {
		return &keyView{k: k, key: "\x00nobody"} // mcp-go's own sweeper (not enabled): terminates nothing
	}
	id, _ := auth.IdentityFrom(r.Context())
	return &keyView{k: k, key: id.Name}
}

// owns reports whether key opened session id: one this gateway holds, or (durable sessions) one
// the store holds for key, which is then recalled.
func (k *keySessions) owns(id, key string) bool {
	k.mu.Lock()
	owner, ok := k.owner[id]
	k.mu.Unlock()
	if ok {
		return owner == key
	}
	return k.recall(id, key)
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
	v.k.recs[id] = &mongostore.MCPSession{ID: id, Key: v.key}
	if !v.k.sweeping {
		v.k.sweeping = true
		go v.k.sweep()
	}
	v.k.mu.Unlock()
	v.k.persist(id, true) // before the client has the id: a restart after initialize finds it
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
	v.k.erase(id) // ended: a restarted gateway does not resume it
	if v.k.ended != nil {
		v.k.ended(id)
	}
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
