package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"sync"
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
// scripts work unchanged. Sessions idle for sessionIdleTTL are reclaimed.

// sessionIdleTTL is how long a session lives without a request or an open stream.
var sessionIdleTTL = 30 * time.Minute

// keySessions records which key opened which session.
type keySessions struct {
	mu    sync.Mutex
	owner map[string]string // session id -> key name
}

func newKeySessions() *keySessions { return &keySessions{owner: map[string]string{}} }

// ResolveSessionIdManager gives mcp-go a view of the sessions bound to the request's key.
func (k *keySessions) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
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
	delete(k.owner, s.SessionID())
}

// size is the number of live sessions (tests).
func (k *keySessions) size() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.owner)
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
	v.k.mu.Unlock()
	return id
}

func (v *keyView) Validate(id string) (bool, error) {
	if id == "" {
		return false, nil // no session asked for: served statelessly
	}
	if !v.k.owns(id, v.key) {
		return false, errUnknownSession
	}
	return false, nil
}

func (v *keyView) Terminate(id string) (bool, error) {
	if !v.k.owns(id, v.key) {
		return true, nil // not this key's: not allowed
	}
	v.k.mu.Lock()
	delete(v.k.owner, id)
	v.k.mu.Unlock()
	return false, nil
}
