package mcpclient

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
)

// Sessions holds the connections of stateful servers between calls: one connection (one process
// for stdio, one MCP session for HTTP) per session id and server, so that a server keeps what it
// was told (a browser's page, a memory server's graph, a database session) for as long as the
// session lasts. The caller sees to it that a session's calls reach the process that holds it
// (weft pins them to one worker with a Temporal session) and closes the session when it ends;
// a connection left idle for longer than the idle limit is closed at the next use of the pool,
// and CloseAll closes everything when the worker stops.
type Sessions struct {
	idle time.Duration
	now  func() time.Time

	mu    sync.Mutex
	conns map[sessionKey]*held
}

type sessionKey struct{ session, server string }

// held is one server's connection in one session.
type held struct {
	mu     sync.Mutex // one connect at a time
	c      *client.Client
	used   time.Time
	broken bool // the connection failed and was closed: the next one starts without the state
}

// NewSessions returns an empty pool whose connections close after idle without a call
// (0: DefaultSessionIdle).
func NewSessions(idle time.Duration) *Sessions {
	if idle <= 0 {
		idle = DefaultSessionIdle
	}
	return &Sessions{idle: idle, now: time.Now, conns: map[sessionKey]*held{}}
}

// DefaultSessionIdle is how long a session's connection is kept without a call: a run that
// waits longer than this for a person finds its server started afresh (and is told so).
const DefaultSessionIdle = time.Hour

// SessionResult is a call's answer in a session. Reopened says the session's earlier connection
// had failed and this call ran on a fresh one: what the server held before is gone.
type SessionResult struct {
	Result
	Reopened bool `json:"reopened,omitempty"`
}

// Call calls one tool on the session's connection to s, opening it on first use.
func (p *Sessions) Call(ctx context.Context, session string, s Server, tool string, args map[string]any, getenv func(string) string) (*SessionResult, error) {
	var out *SessionResult
	err := p.with(ctx, session, s, getenv, func(c *client.Client, reopened bool) error {
		res, err := call(ctx, s, c, tool, args)
		if err == nil {
			out = &SessionResult{Result: *res, Reopened: reopened}
		}
		return err
	})
	return out, err
}

// ListTools lists the server's tools on the session's connection (opening it: the process a
// stateful stdio server runs in starts with the listing and serves the calls after it).
func (p *Sessions) ListTools(ctx context.Context, session string, s Server, getenv func(string) string) ([]Tool, error) {
	var out []Tool
	err := p.with(ctx, session, s, getenv, func(c *client.Client, _ bool) error {
		var err error
		out, err = listTools(ctx, s, c)
		return err
	})
	return out, err
}

func (p *Sessions) with(ctx context.Context, session string, s Server, getenv func(string) string, use func(*client.Client, bool) error) error {
	if session == "" {
		return errors.New("mcpclient: a session call needs the session's id")
	}
	h := p.entry(sessionKey{session, s.Name})
	h.mu.Lock()
	reopened := false
	if h.c == nil {
		c, err := connect(ctx, s, getenv)
		if err != nil {
			h.mu.Unlock()
			return err
		}
		h.c, reopened, h.broken = c, h.broken, false
	}
	c := h.c
	h.mu.Unlock()
	err := use(c, reopened)
	if te := (*transport.Error)(nil); errors.As(err, &te) {
		// The connection is gone (the process exited, the server dropped the session, the call
		// timed out): close it, so the retry opens a fresh one and says so.
		h.mu.Lock()
		if h.c == c {
			h.c, h.broken = nil, true
		}
		h.mu.Unlock()
		_ = c.Close()
	}
	return err
}

// entry returns the session's slot for a server, closing the connections idle for too long.
func (p *Sessions) entry(k sessionKey) *held {
	now := p.now()
	p.mu.Lock()
	var stale []*held
	for key, h := range p.conns {
		if key != k && now.Sub(h.used) > p.idle {
			stale = append(stale, h)
			delete(p.conns, key)
		}
	}
	h := p.conns[k]
	if h == nil {
		h = &held{}
		p.conns[k] = h
	}
	h.used = now
	p.mu.Unlock()
	closeAll(stale)
	return h
}

// Close closes the session's connections (a stdio server's process exits) and says how many.
func (p *Sessions) Close(session string) int {
	p.mu.Lock()
	var hs []*held
	for key, h := range p.conns {
		if key.session == session {
			hs = append(hs, h)
			delete(p.conns, key)
		}
	}
	p.mu.Unlock()
	return closeAll(hs)
}

// CloseAll closes every connection (the worker is stopping).
func (p *Sessions) CloseAll() {
	p.mu.Lock()
	hs := make([]*held, 0, len(p.conns))
	for _, h := range p.conns {
		hs = append(hs, h)
	}
	p.conns = map[sessionKey]*held{}
	p.mu.Unlock()
	closeAll(hs)
}

// Open lists the sessions with a connection, sorted (for tests and diagnostics).
func (p *Sessions) Open() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for k, h := range p.conns {
		h.mu.Lock()
		open := h.c != nil
		h.mu.Unlock()
		if open && !seen[k.session] {
			seen[k.session] = true
			out = append(out, k.session)
		}
	}
	sort.Strings(out)
	return out
}

func closeAll(hs []*held) int {
	n := 0
	for _, h := range hs {
		h.mu.Lock()
		if h.c != nil {
			_ = h.c.Close()
			h.c = nil
			n++
		}
		h.mu.Unlock()
	}
	return n
}
