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
// a connection left idle for longer than the idle limit is closed (checked at each use of the
// pool and every quarter of the limit), and CloseAll closes everything when the worker stops.
// A call on a connection opened again after a failure or the idle limit says so (Reopened).
type Sessions struct {
	idle time.Duration
	now  func() time.Time

	mu       sync.Mutex
	conns    map[sessionKey]*held
	sweeping bool
	stop     chan struct{}
}

type sessionKey struct{ session, server string }

// held is one server's connection in one session.
type held struct {
	mu     sync.Mutex // one connect at a time
	c      *client.Client
	used   time.Time
	broken bool // the connection failed or idled out: calls say the state is gone until one succeeds
	closed bool // the pool let go of this slot (the session was closed): a late caller takes a new one
}

// NewSessions returns an empty pool whose connections close after idle without a call
// (0: DefaultSessionIdle).
func NewSessions(idle time.Duration) *Sessions {
	if idle <= 0 {
		idle = DefaultSessionIdle
	}
	return &Sessions{idle: idle, now: time.Now, conns: map[sessionKey]*held{}, stop: make(chan struct{})}
}

// DefaultSessionIdle is how long a session's connection is kept without a call: a run that
// waits longer than this for a person finds its server started afresh (and is told so).
const DefaultSessionIdle = time.Hour

// forgetAfter is how long the slot of a connection closed for idleness is remembered (so that the
// next call says the state is gone) before it is dropped.
const forgetAfter = 24 * time.Hour

// SessionResult is a call's answer in a session. Reopened says the session's earlier connection
// had failed and this call ran on a fresh one: what the server held before is gone.
type SessionResult struct {
	Result
	Reopened bool `json:"reopened,omitempty"`
}

// Call calls one tool on the session's connection to s, opening it on first use.
func (p *Sessions) Call(ctx context.Context, session string, s Server, tool string, args map[string]any, getenv func(string) string) (*SessionResult, error) {
	var out *SessionResult
	err := p.with(ctx, session, s, getenv, func(c *client.Client, h *held) error {
		res, err := call(ctx, s, c, tool, args)
		if err == nil {
			h.mu.Lock()
			out = &SessionResult{Result: *res, Reopened: h.broken}
			h.broken = false // said once
			h.mu.Unlock()
		}
		return err
	})
	return out, err
}

// ListTools lists the server's tools on the session's connection (opening it: the process a
// stateful stdio server runs in starts with the listing and serves the calls after it).
func (p *Sessions) ListTools(ctx context.Context, session string, s Server, getenv func(string) string) ([]Tool, error) {
	var out []Tool
	err := p.with(ctx, session, s, getenv, func(c *client.Client, _ *held) error {
		var err error
		out, err = listTools(ctx, s, c)
		return err
	})
	return out, err
}

func (p *Sessions) with(ctx context.Context, session string, s Server, getenv func(string) string, use func(*client.Client, *held) error) error {
	if session == "" {
		return errors.New("mcpclient: a session call needs the session's id")
	}
	var h *held
	for {
		h = p.entry(sessionKey{session, s.Name})
		h.mu.Lock()
		if !h.closed {
			break
		}
		h.mu.Unlock() // closed between entry and here: take the slot that replaced it
	}
	if h.c == nil {
		c, err := connect(ctx, s, getenv)
		if err != nil {
			h.mu.Unlock()
			return err
		}
		h.c = c
	}
	c := h.c
	h.mu.Unlock()
	err := use(c, h)
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
	p.mu.Lock()
	if !p.sweeping {
		p.sweeping = true
		go p.sweepEvery(p.idle/4, p.stop)
	}
	h := p.conns[k]
	if h == nil {
		h = &held{}
		p.conns[k] = h
	}
	h.used = p.now()
	p.mu.Unlock()
	p.sweep()
	return h
}

func (p *Sessions) sweepEvery(d time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			p.sweep()
		}
	}
}

// sweep closes the connections idle for longer than the limit, keeping their slots marked
// broken so the next call says the state is gone, and forgets slots closed long ago.
func (p *Sessions) sweep() {
	now := p.now()
	p.mu.Lock()
	var stale, forgotten []*held
	for key, h := range p.conns {
		switch idle := now.Sub(h.used); {
		case idle > p.idle+forgetAfter:
			delete(p.conns, key)
			forgotten = append(forgotten, h) // closed as Close closes: a late caller takes a new slot
		case idle > p.idle:
			stale = append(stale, h)
		}
	}
	p.mu.Unlock()
	for _, h := range stale {
		h.mu.Lock()
		if h.c != nil {
			_ = h.c.Close()
			h.c, h.broken = nil, true
		}
		h.mu.Unlock()
	}
	closeAll(forgotten)
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

// CloseAll closes every connection and stops the idle sweep (the worker is stopping).
func (p *Sessions) CloseAll() {
	p.mu.Lock()
	hs := make([]*held, 0, len(p.conns))
	for _, h := range p.conns {
		hs = append(hs, h)
	}
	p.conns = map[sessionKey]*held{}
	if p.sweeping {
		close(p.stop)
		p.sweeping = false
		p.stop = make(chan struct{})
	}
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
		h.closed = true
		if h.c != nil {
			_ = h.c.Close()
			h.c = nil
			n++
		}
		h.mu.Unlock()
	}
	return n
}
