package mcp

import (
	"context"
	"fmt"
	"sync"

	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	weftclient "github.com/weftworks/weft/client"
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
		return next(ctx, req)
	}
}

// levels remembers the sessions that chose a log level (logging/setLevel): only those are sent
// log lines about runs. A session without an id (stateless HTTP, where every request is its own
// session) shares its level with every other such request, so it is never sent any.
type levels struct{ set sync.Map } // session id -> true

func (l *levels) afterSetLevel(ctx context.Context, _ any, _ *mcplib.SetLevelRequest, _ *mcplib.EmptyResult) {
	if s := server.ClientSessionFromContext(ctx); s != nil && s.SessionID() != "" {
		l.set.Store(s.SessionID(), true)
	}
}

func (l *levels) forget(_ context.Context, s server.ClientSession) { l.set.Delete(s.SessionID()) }

func (l *levels) chosen(ctx context.Context) bool {
	s := server.ClientSessionFromContext(ctx)
	if s == nil || s.SessionID() == "" {
		return false
	}
	_, ok := l.set.Load(s.SessionID())
	return ok
}

// reporter turns a run's events into progress notifications and log lines for one tool call.
type reporter struct {
	g     *Gateway
	ctx   context.Context
	token mcplib.ProgressToken // nil: no progress
	logs  bool
	total int
	ended int
}

// reporterFor returns the reporter of ctx's call, nil when the client asked for neither
// progress nor log lines.
func (g *Gateway) reporterFor(ctx context.Context, steps int) *reporter {
	token := ctx.Value(progressKey{})
	logs := g.levels.chosen(ctx)
	if token == nil && !logs {
		return nil
	}
	return &reporter{g: g, ctx: ctx, token: token, logs: logs, total: steps}
}

func (r *reporter) event(e weftclient.Event) {
	switch e.Type {
	case weftclient.EventStepCompleted, weftclient.EventStepSkipped, weftclient.EventStepFailed, weftclient.EventStepCancelled:
		if e.Step == "" || e.Key != "" && e.Key != e.Step {
			break // a forEach item's or a nested key's event: not one of the workflow's steps
		}
		r.ended++
		verb := map[string]string{weftclient.EventStepCompleted: "completed", weftclient.EventStepSkipped: "skipped",
			weftclient.EventStepFailed: "failed", weftclient.EventStepCancelled: "cancelled"}[e.Type]
		msg := fmt.Sprintf("step %s %s", e.Step, verb)
		r.progress(msg)
		level := mcplib.LoggingLevelInfo
		if e.Type == weftclient.EventStepFailed {
			level = mcplib.LoggingLevelError
			msg += ": " + e.Error
		}
		r.log(level, e, msg)
	case weftclient.EventStepStarted:
		r.log(mcplib.LoggingLevelDebug, e, "step "+e.Step+" started")
	case weftclient.EventReviewRequested:
		r.log(mcplib.LoggingLevelNotice, e, fmt.Sprintf("step %s waits for a review: decide it with weft_review (execution %s)", e.Step, e.Run))
	case weftclient.EventReviewDecided:
		r.log(mcplib.LoggingLevelInfo, e, fmt.Sprintf("review of step %s: %s by %s", e.Step, e.Decision, e.Reviewer))
	case weftclient.EventRunCompleted:
		r.log(mcplib.LoggingLevelInfo, e, "execution "+e.Run+" completed")
	case weftclient.EventRunFailed:
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
	_ = r.g.srv.SendNotificationToClient(r.ctx, string(mcplib.MethodNotificationProgress), params)
}

func (r *reporter) log(level mcplib.LoggingLevel, e weftclient.Event, msg string) {
	if !r.logs {
		return
	}
	data := map[string]any{"message": msg, "execution": e.Run, "event": e.Type}
	if e.Step != "" {
		data["step"] = e.Step
	}
	// SendLogMessageToClient drops what is below the session's level
	_ = r.g.srv.SendLogMessageToClient(r.ctx, mcplib.NewLoggingMessageNotification(level, "weft", data))
}
