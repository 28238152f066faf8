package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/weftworks/weft/auth"
)

// BodyReadTimeout is the longest one request body may take to arrive once its handler starts
// reading it: a body sent slowly (with a valid key) is cut then instead of holding a connection
// and a goroutine for minutes. The server's ReadHeaderTimeout bounds the headers.
const BodyReadTimeout = 30 * time.Second

// bodyReadTimeout is BodyReadTimeout, shortened by tests.
var bodyReadTimeout = BodyReadTimeout

// withHygiene wraps the streamable HTTP transport (after the key check and the 413 Content-Length
// check) with what the MCP transport asks of a server beyond the library:
//   - Origin is validated (the spec's MUST, against DNS rebinding and cross-site pages): a request
//     with an Origin whose host is not one of allowedHosts is refused 403; no Origin (a
//     non-browser client) is fine.
//   - GET /mcp opens an event stream only for a session of the request's key (Mcp-Session-Id);
//     without one it answers 405 with Allow: POST (the library would open a stream for no session
//     that is never closed).
//   - The body is read here, under a read deadline (bodyReadTimeout), then handed on; the
//     deadline is lifted once it is read, so a long tool call is not cut.
//   - A JSON-RPC batch (a JSON array) gets a clear error: the 2025-06-18 revision removed them.
func withHygiene(allowedHosts []string, next http.Handler) *hygiene {
	return &hygiene{hosts: allowedHosts, next: next, timeout: bodyReadTimeout}
}

type hygiene struct {
	hosts   []string
	next    http.Handler
	timeout time.Duration
	// sessions: the keys' sessions (nil: no GET stream at all)
	sessions *keySessions
}

func (h *hygiene) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if origin := r.Header.Get("Origin"); origin != "" {
		if host, ok := originAllowed(origin, h.hosts); !ok {
			hint := "start weft mcp with --allowed-host " + host + " to let pages from that host call it"
			if host == "" {
				hint = "only pages from an allowed host (--allowed-host) may call it; non-browser clients send no Origin"
			}
			writeJSON(w, http.StatusForbidden, fmt.Sprintf(`{"error":"forbidden origin","message":%s}`,
				jsonString(fmt.Sprintf("requests from pages at origin %q are refused (the gateway checks Origin against DNS rebinding and cross-site pages): %s", origin, hint))))
			return
		}
	}
	switch r.Method {
	case http.MethodGet:
		if sid := r.Header.Get("Mcp-Session-Id"); sid != "" && h.sessions != nil {
			id, _ := auth.IdentityFrom(r.Context())
			if h.sessions.owns(sid, id.Name) {
				defer h.sessions.streaming(sid)()
				h.next.ServeHTTP(w, r) // the session's event stream
				return
			}
			writeJSON(w, http.StatusNotFound, rpcError(-32001, "GET /mcp: "+errUnknownSession.Error()))
			return
		}
		w.Header().Set("Allow", http.MethodPost)
		writeJSON(w, http.StatusMethodNotAllowed, rpcError(-32000,
			"GET /mcp: an event stream needs a session (the Mcp-Session-Id header initialize returned); without one, send each JSON-RPC request with POST /mcp"))
		return
	case http.MethodPost:
	default:
		h.next.ServeHTTP(w, r)
		return
	}
	body, err := h.readBody(w, r)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		refuseTooLarge(w, "the request (sent without a length) is over the limit")
		return
	case isTimeout(err):
		w.Header().Set("Connection", "close")
		writeJSON(w, http.StatusRequestTimeout, rpcError(-32600, fmt.Sprintf(
			"the request body did not arrive within %s: send the whole request at once (the gateway cuts slow bodies)", h.timeout)))
		return
	case err != nil:
		writeJSON(w, http.StatusBadRequest, rpcError(-32700, fmt.Sprintf("reading the request body: %v", err)))
		return
	}
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
		writeJSON(w, http.StatusBadRequest, rpcError(-32600,
			"JSON-RPC batches (a JSON array of messages) are not supported: MCP 2025-06-18 removed them; send each request as its own POST /mcp"))
		return
	}
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" && h.sessions != nil {
		h.sessions.touch(sid)
		switch messageKind(body) {
		case toolCall:
			// a tool call of a session is served on a session of its own (withCallSession)
			id, _ := auth.IdentityFrom(r.Context())
			if !h.sessions.owns(sid, id.Name) {
				writeJSON(w, http.StatusNotFound, rpcError(-32001, errUnknownSession.Error()))
				return
			}
			r = r.WithContext(withCallSession(r.Context(), sid))
			r.Header.Set("Mcp-Session-Id", h.sessions.callID(sid)) // its own session, named after the session
		case response:
			// the client's answer to a question a call asked (elicit.go) goes to that call's session
			if call := h.sessions.answerTo(sid); call != "" {
				r.Header.Set("Mcp-Session-Id", call)
			}
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	// what reaches this POST's stream is counted for the call it serves (wire, progress.go)
	wr := newWire()
	h.next.ServeHTTP(wireWriter{ResponseWriter: w, w: wr}, r.WithContext(context.WithValue(r.Context(), wireKey{}, wr)))
}

// The kinds of JSON-RPC message a session's POST is routed by.
const (
	toolCall = "tools/call" // a tools/call request
	response = "response"   // a response: a client's answer to a server request
)

// messageKind reads body once and says whether it is a toolCall or a response ("" : anything
// else, or not JSON).
func messageKind(body []byte) string {
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	switch {
	case json.Unmarshal(body, &m) != nil:
		return ""
	case m.Method == toolCall:
		return toolCall
	case m.Method == "" && len(m.ID) > 0:
		return response
	}
	return ""
}

// readBody reads the whole body under a read deadline on the connection, and lifts the deadline
// after: the server's background read would otherwise hit it during a long tool call and cancel
// the request's context.
func (h *hygiene) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(h.timeout)); err == nil {
		defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	}
	return io.ReadAll(r.Body)
}

// originAllowed reports whether origin's host is one of allowed ("*" allows any), as the Host
// guard does for Host; host is origin's host ("" for "null" or one that does not parse).
func originAllowed(origin string, allowed []string) (host string, ok bool) {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return "", false
	}
	host = u.Hostname()
	for _, a := range allowed {
		if a == "*" || strings.EqualFold(a, host) {
			return host, true
		}
	}
	return host, false
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// refuseTooLarge answers 413 naming the limit; what says how large the request is.
func refuseTooLarge(w http.ResponseWriter, what string) {
	writeJSON(w, http.StatusRequestEntityTooLarge, rpcError(-32600, fmt.Sprintf(
		"%s; the gateway accepts at most %d MB per request: ingest large documents in parts, or pass a collection name instead of the data",
		what, MaxBodyBytes>>20)))
}

func rpcError(code int, message string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":%s}}`, code, jsonString(message))
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// Unwrap lets http.NewResponseController reach the connection (the body's read deadline).
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
