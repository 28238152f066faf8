package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"time"

	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/weftworks/weft/activities/mongostore"
	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
)

// MaxBodyBytes limits one HTTP request body (auth.MaxBodyBytes: /v1 has the same).
const MaxBodyBytes = auth.MaxBodyBytes

// Health is the body of GET /health.
type Health struct {
	Status   string `json:"status"`
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Uptime   string `json:"uptime"`
	Temporal string `json:"temporal"`
	MongoDB  string `json:"mongodb"`
}

func (g *Gateway) health(ctx context.Context) Health {
	h := Health{Status: "ok", Version: g.o.Version, Revision: g.o.Revision, Modified: g.o.Modified, Uptime: time.Since(g.started).Round(time.Second).String(), Temporal: "unreachable", MongoDB: "unreachable"}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	check := weftclient.HealthCheck{Timeout: 2 * time.Second}
	if c, err := g.temporal(ctx); err == nil {
		check.Client = c
	}
	if g.o.Config.MongoDBURI != "" {
		// A ping, not a listing: listing every collection took 6 s with 19 of them, and the
		// store answering slowly is not the store being unreachable.
		check.Store = g.storePing
	}
	found := weftclient.CheckHealth(ctx, check)
	if found.Temporal == nil {
		h.Temporal = "ok"
	}
	switch {
	case errors.Is(found.Store, weftclient.ErrNotChecked):
		h.MongoDB = "not configured"
	case found.Store == nil:
		h.MongoDB = "ok"
	}
	if h.Temporal != "ok" || h.MongoDB == "unreachable" {
		h.Status = "degraded"
	}
	return h
}

// HTTPHandler serves /mcp (streamable HTTP, bearer keys; sessions bound to their key for the
// clients that keep the Mcp-Session-Id, stateless requests for the others: sessions.go) and GET
// /health. allowedHosts guards against DNS rebinding: requests whose Host is not listed are refused.
func (g *Gateway) HTTPHandler(keys *auth.Keys, allowedHosts []string, log *slog.Logger) http.Handler {
	return g.HTTPHandlerWith(auth.NewGate(keys), allowedHosts, log)
}

// Mount is a handler served beside /mcp (the HTTP API's /v1/): behind the same host guard, on
// the same server; it authenticates with the same auth.Gate as /mcp.
type Mount struct {
	Pattern string
	Handler http.Handler
}

// HTTPHandlerWith is HTTPHandler with the Gate the keys are checked by (shared with the mounts)
// and the handlers mounted beside /mcp.
func (g *Gateway) HTTPHandlerWith(gate *auth.Gate, allowedHosts []string, log *slog.Logger, mounts ...Mount) http.Handler {
	sessions := newKeySessions()
	sessions.log, sessions.restore, sessions.ended = log, g.restoreSession, g.sessionEnded
	if g.o.Config.MongoDBURI != "" {
		sessions.store = knowledgeStoreSessions{g} // durable: a restarted gateway resumes them
	}
	g.sessions = sessions
	hooks := g.srv.GetHooks()
	hooks.AddOnUnregisterSession(sessions.forget)
	hooks.AddAfterSetLevel(func(ctx context.Context, _ any, req *mcplib.SetLevelRequest, _ *mcplib.EmptyResult) {
		if s := server.ClientSessionFromContext(ctx); s != nil {
			sessions.setLevel(s.SessionID(), req.Params.Level)
		}
	})
	hooks.AddAfterInitialize(func(ctx context.Context, _ any, req *mcplib.InitializeRequest, _ *mcplib.InitializeResult) {
		if s := server.ClientSessionFromContext(ctx); s != nil && formElicitation(req.Params.Capabilities.Elicitation) {
			sessions.elicits(s.SessionID())
		}
	})
	mcpHandler := server.NewStreamableHTTPServer(g.srv, server.WithSessionIdManagerResolver(sessions), server.WithEventStore(newEventLog()),
		server.WithHeartbeatInterval(25*time.Second), server.WithEndpointPath("/mcp"))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		// A load balancer or weft ping --http reads the status code: 503 when what the gateway
		// needs (Temporal, the store when configured) does not answer.
		h := g.health(r.Context())
		w.Header().Set("Content-Type", "application/json")
		if h.Status != "ok" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(h)
	})
	hygienic := withHygiene(allowedHosts, mcpHandler)
	hygienic.sessions = sessions
	sessions.end = func(id, key string) { // as its key would: DELETE /mcp
		r, _ := http.NewRequestWithContext(auth.WithIdentity(context.Background(), auth.Identity{Name: key}), http.MethodDelete, "/mcp", nil)
		r.Header.Set("Mcp-Session-Id", id)
		r.Header.Set("MCP-Protocol-Version", "2025-06-18")
		mcpHandler.ServeHTTP(discard{header: http.Header{}}, r)
	}
	if o := gate.OAuth(); o != nil {
		// RFC 9728: where a client learns which authorization server issues tokens for this
		// gateway; the 401s' WWW-Authenticate names it. No key is needed to read it.
		for _, p := range o.MetadataPaths() {
			mux.Handle("GET "+p, o.MetadataHandler())
		}
	}
	for _, m := range mounts {
		mux.Handle(m.Pattern, m.Handler)
	}
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: 200}
		who := ""
		defer func() {
			log.Info("mcp request", "method", r.Method, "status", rec.status, "duration", time.Since(start).Round(time.Microsecond), "client", r.RemoteAddr, "key", who)
		}()
		id, refused := gate.Check(r)
		if refused != nil {
			rec.Header().Set("Content-Type", "application/json")
			if refused.Status == http.StatusTooManyRequests {
				rec.Header().Set("Retry-After", strconv.Itoa(refused.RetryAfterSeconds()))
			} else {
				rec.Header().Set("WWW-Authenticate", refused.Challenge)
			}
			rec.WriteHeader(refused.Status)
			b, _ := json.Marshal(map[string]string{"error": refused.Code, "message": refused.Message})
			_, _ = rec.Write(b)
			return
		}
		if r.ContentLength > MaxBodyBytes {
			// refused before reading a byte of it
			refuseTooLarge(rec, fmt.Sprintf("the request is %.1f MB", float64(r.ContentLength)/(1<<20)))
			return
		}
		r.Body = http.MaxBytesReader(rec, r.Body, MaxBodyBytes)
		who = id.Name
		// The key's identity rides in the context to the tool filter, the role check and the
		// records of starts, cancels and decisions.
		hygienic.ServeHTTP(rec, r.WithContext(auth.WithIdentity(r.Context(), id)))
	})
	return auth.HostGuard(allowedHosts, "--allowed-host", mux)
}

// discard is a ResponseWriter for answers nobody reads.
type discard struct{ header http.Header }

func (d discard) Header() http.Header         { return d.header }
func (d discard) Write(b []byte) (int, error) { return len(b), nil }
func (d discard) WriteHeader(int)             {}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// ServeStdio serves MCP over standard input and output until ctx ends.
func (g *Gateway) ServeStdio(ctx context.Context) error {
	return g.serveStdio(ctx, os.Stdin, os.Stdout)
}

// serveStdio serves MCP over in and out; a call returns its result only after the notifications
// it sent were written to out (wire, progress.go).
func (g *Gateway) serveStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	wr := newWire()
	wr.always = true
	return server.NewStdioServer(g.srv).Listen(context.WithValue(ctx, wireKey{}, wr), in, stdioWriter{Writer: out, w: wr})
}

// restoreSession gives a session recalled from the store (a gateway restarted on the same store)
// what the gateway keeps for it: its log level, its client's elicitation capability and its
// subscriptions (followed again; updates reach it once it opens GET /mcp).
func (g *Gateway) restoreSession(rec mongostore.MCPSession) {
	if rec.Level != "" {
		g.levels.set.Store(rec.ID, mcplib.LoggingLevel(rec.Level))
	}
	if rec.Elicit {
		g.caps.elicit.Store(rec.ID, true)
	}
	for _, run := range rec.Subscriptions {
		g.subs.add(run, rec.ID, g.subs.tell(rec.ID))
	}
}

// sessionEnded forgets what the gateway keeps for session id, which ended.
func (g *Gateway) sessionEnded(id string) {
	g.subs.removeSession(id)
	g.levels.set.Delete(id)
	g.caps.elicit.Delete(id)
}
