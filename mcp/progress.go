package mcp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/weftworks/weft/events"
)

// Progress and log lines of a run a tool call waits for.
//
// When the client sent a progressToken with a tools/call (a wf_ tool, weft_run_workflow with
// wait, a knowledge tool that runs as an execution), the gateway follows the run through
// client.Stream while it waits and sends notifications/progress for each step that ends
// (progress = steps ended so far, total = the workflow's steps). When the client chose a level
// with logging/setLevel, it also sends notifications/message lines (logger "weft") for the run's
// steps, reviews and end, at or above that level. Without either, the call waits on the result
// alone, as before.

type progressKey struct{}

// withProgressToken is a tool middleware that carries the call's progressToken in its context.
func withProgressToken(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
		if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
			ctx = context.WithValue(ctx, progressKey{}, req.Params.Meta.ProgressToken)
		}
		res, err := next(ctx, req)
		if w := wireOf(ctx); w != nil && (w.always || server.IsModernRequest(ctx)) {
			w.settle(ctx) // see wire
		}
		return res, err
	}
}

// levels remembers the level each session chose (logging/setLevel): only those sessions are sent
// log lines about runs. A session without an id (stateless HTTP, where every request is its own
// session) would share its level with every other such request, so it is never sent any.
type levels struct{ set sync.Map } // session id -> mcplib.LoggingLevel

func (l *levels) afterSetLevel(ctx context.Context, _ any, req *mcplib.SetLevelRequest, _ *mcplib.EmptyResult) {
	if s := server.ClientSessionFromContext(ctx); s != nil && s.SessionID() != "" {
		l.set.Store(s.SessionID(), req.Params.Level)
	}
}

func (l *levels) forget(_ context.Context, s server.ClientSession) { l.set.Delete(s.SessionID()) }

// chosen is the level of ctx's request (protocol 2026-07-28 sets it per request) or of its
// session, if it chose one.
func (l *levels) chosen(ctx context.Context) (mcplib.LoggingLevel, bool) {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return info.LogLevel, info.LogLevel != ""
	}
	id := callSession(ctx)
	if id == "" {
		if s := server.ClientSessionFromContext(ctx); s != nil {
			id = s.SessionID()
		}
	}
	if id == "" {
		return "", false
	}
	v, ok := l.set.Load(id)
	if !ok {
		return "", false
	}
	return v.(mcplib.LoggingLevel), true
}

type callSessionKey struct{}

// withCallSession marks a tools/call that HTTPHandler serves on a session of its own although it
// belongs to session id (see hygiene): mcp-go's sessions share one notification queue among all
// their requests, and a request that ends first drops what it took from it, so a call's progress
// could be lost to a concurrent request; on its own session it reaches that call's stream only.
func withCallSession(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callSessionKey{}, id)
}

func callSession(ctx context.Context) string {
	id, _ := ctx.Value(callSessionKey{}).(string)
	return id
}

// reporter turns a run's events into progress notifications and log lines for one tool call.
type reporter struct {
	g     *Gateway
	ctx   context.Context
	token mcplib.ProgressToken // nil: no progress
	logs  bool
	level mcplib.LoggingLevel // the session's
	total int
	ended int
}

// reporterFor returns the reporter of ctx's call, nil when the client asked for neither
// progress nor log lines.
func (g *Gateway) reporterFor(ctx context.Context, steps int) *reporter {
	token := ctx.Value(progressKey{})
	level, logs := g.levels.chosen(ctx)
	if token == nil && !logs {
		return nil
	}
	return &reporter{g: g, ctx: ctx, token: token, logs: logs, level: level, total: steps}
}

func (r *reporter) event(e events.Event) {
	switch e.Type {
	case events.StepCompleted, events.StepSkipped, events.StepFailed, events.StepCancelled:
		if e.Step == "" || e.Key != "" && e.Key != e.Step {
			break // a forEach item's or a nested key's event: not one of the workflow's steps
		}
		r.ended++
		verb := map[string]string{events.StepCompleted: "completed", events.StepSkipped: "skipped",
			events.StepFailed: "failed", events.StepCancelled: "cancelled"}[e.Type]
		msg := fmt.Sprintf("step %s %s", e.Step, verb)
		r.progress(msg)
		level := mcplib.LoggingLevelInfo
		if e.Type == events.StepFailed {
			level = mcplib.LoggingLevelError
			msg += ": " + e.Error
		}
		r.log(level, e, msg)
	case events.StepStarted:
		r.log(mcplib.LoggingLevelDebug, e, "step "+e.Step+" started")
	case events.ReviewRequested:
		r.log(mcplib.LoggingLevelNotice, e, fmt.Sprintf("step %s waits for a review: decide it with weft_review (execution %s)", e.Step, e.Run))
	case events.ReviewDecided:
		r.log(mcplib.LoggingLevelInfo, e, fmt.Sprintf("review of step %s: %s by %s", e.Step, e.Decision, e.Reviewer))
	case events.RunCompleted:
		r.log(mcplib.LoggingLevelInfo, e, "execution "+e.Run+" completed")
	case events.RunFailed:
		r.log(mcplib.LoggingLevelError, e, "execution "+e.Run+" failed: "+e.Error)
	}
}

func (r *reporter) progress(msg string) {
	if r.token == nil {
		return
	}
	params := map[string]any{"progressToken": r.token, "progress": r.ended, "message": msg}
	if r.total >= r.ended {
		params["total"] = r.total
	}
	r.notify(mcplib.MethodNotificationProgress, params)
}

func (r *reporter) log(level mcplib.LoggingLevel, e events.Event, msg string) {
	if !r.logs || !level.ShouldSendTo(r.level) {
		return
	}
	data := map[string]any{"message": msg, "execution": e.Run, "event": e.Type}
	if e.Step != "" {
		data["step"] = e.Step
	}
	// sent as a plain notification: the call may be served on a session of its own, whose level
	// is not the one the client chose (withCallSession)
	r.notify(mcplib.MethodNotificationMessage, map[string]any{"level": level, "logger": "weft", "data": data})
}

// notify sends a notification to the call's client, counted for settle (see wire).
func (r *reporter) notify(method mcplib.MCPMethod, params map[string]any) {
	if r.g.srv.SendNotificationToClient(r.ctx, string(method), params) == nil {
		wireOf(r.ctx).handed()
	}
}

// A call's notifications reach its client before its result.
//
// mcp-go v1.2.1 writes a call's notifications from another goroutine than its result, and two
// of its transports let the result overtake them:
//   - Protocol 2026-07-28's session-less HTTP requests: an ephemeral session's forwarder takes
//     notifications off the session's channel (server/streamable_http.go:819) and writes them to
//     the POST's stream under a mutex. When the handler returns (:906), the request's goroutine
//     takes that mutex, drains the channel (:934) and closes done (:972) before letting go; a
//     notification the forwarder had already taken off the channel but not yet written then
//     finds done closed and is dropped (:828-834: only a resumable request, which a 2026-07-28
//     one never is, :741, still records it).
//   - stdio, every protocol: notifications are written by handleNotifications (server/stdio.go:
//     400-410), the result by the tool call's worker (:464-468), each whenever it gets there, so
//     the last progress of a call often came after its result (a client then drops it: the
//     request it belongs to is over).
//
// So the gateway counts the notifications a call's reporter handed to mcp-go and those written
// to the call's output (hygiene wraps a POST's response writer, ServeStdio stdout), and such a
// call returns only once all it handed were written.

// wire counts the progress and log notifications handed to mcp-go for one output (a POST's
// response, stdout) and those written to it.
type wire struct {
	mu      sync.Mutex
	written int           // notifications written to the output
	sent    int           // notifications handed to mcp-go for it
	change  chan struct{} // closed (and replaced) when written changes
	// always: settle on every protocol (stdio), not only on 2026-07-28's requests
	always bool
}

type wireKey struct{}

func newWire() *wire { return &wire{change: make(chan struct{})} }

func wireOf(ctx context.Context) *wire {
	w, _ := ctx.Value(wireKey{}).(*wire)
	return w
}

// handed records a notification handed to mcp-go for this request's stream.
func (w *wire) handed() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.sent++
	w.mu.Unlock()
}

// write writes p to out, the output w counts for, and counts the notifications written
// (wireWriter, stdioWriter).
func (w *wire) write(out io.Writer, p []byte) (int, error) {
	n, err := out.Write(p)
	if events := notifications(p[:n]); events > 0 {
		w.mu.Lock()
		w.written += events
		close(w.change)
		w.change = make(chan struct{})
		w.mu.Unlock()
	}
	return n, err
}

// settleTimeout bounds how long a call waits for its notifications to be written (a client
// that stopped reading holds the writer; the result then goes out without waiting longer).
const settleTimeout = 5 * time.Second

// settle waits until every notification handed to mcp-go for this output so far was written
// to it (mcp-go writes them in the order they were handed), for at most settleTimeout or until
// ctx ends. It reports whether they all were.
func (w *wire) settle(ctx context.Context) bool {
	if w == nil {
		return true
	}
	w.mu.Lock()
	target := w.sent
	w.mu.Unlock()
	timer := time.NewTimer(settleTimeout)
	defer timer.Stop()
	for {
		w.mu.Lock()
		done, change := w.written >= target, w.change
		w.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-change:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// wireWriter counts the notifications written through it to a POST's response.
type wireWriter struct {
	http.ResponseWriter
	w *wire
}

func (ww wireWriter) Write(p []byte) (int, error) { return ww.w.write(ww.ResponseWriter, p) }

func (ww wireWriter) Flush() {
	if f, ok := ww.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.NewResponseController reach the connection.
func (ww wireWriter) Unwrap() http.ResponseWriter { return ww.ResponseWriter }

// stdioWriter counts the notifications written through it to stdout.
type stdioWriter struct {
	io.Writer
	w *wire
}

func (sw stdioWriter) Write(p []byte) (int, error) { return sw.w.write(sw.Writer, p) }

// notifications counts the progress and log notifications in p. mcp-go writes each message with
// one Write, as one line of JSON on stdio or as an "event: message\ndata: …" event over HTTP, and
// a notification's line begins with its method (JSONRPCNotification's first fields). Only a line
// that begins so counts: a result holding the same words in its data (a tool's output) does not.
func notifications(p []byte) int {
	n := 0
	for line := range bytes.Lines(p) {
		line = bytes.TrimPrefix(line, []byte("data: "))
		if bytes.HasPrefix(line, progressLine) || bytes.HasPrefix(line, messageLine) {
			n++
		}
	}
	return n
}

var (
	progressLine = []byte(`{"jsonrpc":"2.0","method":"` + mcplib.MethodNotificationProgress + `"`)
	messageLine  = []byte(`{"jsonrpc":"2.0","method":"` + mcplib.MethodNotificationMessage + `"`)
)
