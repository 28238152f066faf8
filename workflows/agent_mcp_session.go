package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/events"
	"github.com/weftworks/weft/runwire"
)

// A server the file declares "stateful" keeps one connection (one process for a command) for
// the whole run or chat: its listing and calls run in a Temporal session, on the one worker that
// holds the connection (activities.Tools' session pool), reached through that worker's own task
// queue. The session is kept by a coroutine of its own (keepSession), because a Temporal session
// is created and completed on the context of one coroutine while the run's steps, and an agent's
// parallel tool calls, each run in theirs.
//
// When the worker that holds the session dies, Temporal fails the session (its heartbeat stops):
// the call that finds it out records events.MCPSessionLost and a warning on its step, and the
// session is replaced by a fresh one on a worker that is up, which starts the server afresh. A
// call that had not started yet runs in the fresh session; one that may have run on the lost
// worker runs again only when it changes nothing (a listing, a read-only tool): otherwise its
// error says it may or may not have run, and the model (or a person) decides.

const (
	// mcpSessionCreation bounds the wait for a worker to take a new session.
	mcpSessionCreation = time.Minute
	// mcpSessionHeartbeat is how soon Temporal notices the session's worker is gone.
	mcpSessionHeartbeat = 10 * time.Second
	// mcpSessionLife bounds a session; a run that outlives it gets a fresh one (and is told).
	mcpSessionLife = 7 * 24 * time.Hour
	// mcpSessionPickup is how long a call waits for the session's worker to take it: longer
	// and the worker is taken to be gone. A worker that dies is noticed by the heartbeat; this
	// bounds the wait where it is not, and is long enough for a busy worker's queue.
	mcpSessionPickup = 5 * time.Minute
)

// mcpSession is the run's session with one stateful server.
type mcpSession struct {
	server string
	ctx    workflow.Context // the session: activities scheduled on it run on its worker
	id     string
	err    error // the session could not be created
	ready  bool  // ctx and id (or err) are set
	renew  bool  // a call found the session lost: the keeper replaces it
	ended  bool  // the keeper has finished (the run closed its sessions)
}

// mcpSessionFor returns the run's open session with a stateful server, starting its keeper on
// first use and waiting for it.
func (r *run) mcpSessionFor(ctx workflow.Context, server string) (*mcpSession, error) {
	s := r.mcpSessions[server]
	if s == nil {
		if r.closingSessions {
			return nil, fmt.Errorf("MCP server %s: the run is closing its sessions", server)
		}
		s = &mcpSession{server: server}
		if r.mcpSessions == nil {
			r.mcpSessions = map[string]*mcpSession{}
		}
		r.mcpSessions[server] = s
		kctx, _ := workflow.NewDisconnectedContext(ctx)
		workflow.Go(kctx, func(ctx workflow.Context) { r.keepSession(ctx, s) })
	}
	if err := workflow.Await(ctx, func() bool { return s.ready || s.ended }); err != nil {
		return nil, err
	}
	if s.err != nil {
		return nil, s.err
	}
	if !s.ready {
		return nil, fmt.Errorf("MCP server %s: the run is closing its sessions", server)
	}
	return s, nil
}

// keepSession creates the session, replaces it when a call finds it lost, and closes it (the
// server's connection, then the Temporal session) when the run ends.
func (r *run) keepSession(ctx workflow.Context, s *mcpSession) {
	defer func() { s.ended = true }()
	for {
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: mcpSessionLife})
		sctx, err := workflow.CreateSession(actx, &workflow.SessionOptions{
			CreationTimeout: mcpSessionCreation, ExecutionTimeout: mcpSessionLife, HeartbeatTimeout: mcpSessionHeartbeat,
		})
		if err != nil {
			// The next call tries again; the callers waiting now see why this one failed.
			delete(r.mcpSessions, s.server)
			s.err = temporal.NewApplicationErrorWithOptions(fmt.Sprintf("MCP server %s is stateful, and no worker took its session within %s (%s): start a worker on this task queue", s.server, mcpSessionCreation, errorText(err)),
				toolspec.ErrMissingConfig, temporal.ApplicationErrorOptions{NonRetryable: true, Cause: err})
			s.ready = true
			return
		}
		s.ctx, s.id, s.ready, s.renew = sctx, workflow.GetSessionInfo(sctx).SessionID, true, false
		_ = workflow.Await(ctx, func() bool { return r.closingSessions || s.renew })
		// Closing, or lost: a session whose worker may still hold the server's connection (it
		// stopped taking calls, but Temporal still hears from it) closes it first.
		if workflow.GetSessionInfo(sctx).SessionState == workflow.SessionStateOpen {
			cctx := workflow.WithActivityOptions(sctx, workflow.ActivityOptions{
				ScheduleToStartTimeout: 30 * time.Second, StartToCloseTimeout: 30 * time.Second,
				RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 2}, Summary: "close MCP server " + s.server,
			})
			_ = workflow.ExecuteActivity(cctx, toolspec.ActivityMCPClose, map[string]any{"session": s.id}).Get(ctx, nil)
		}
		workflow.CompleteSession(sctx)
		if r.closingSessions {
			s.ready = false
			return
		}
	}
}

// closeMCPSessions ends the run's sessions (their servers' connections close) and waits for
// their keepers: the run is ending, cancelled or not.
func (r *run) closeMCPSessions(ctx workflow.Context) {
	if len(r.mcpSessions) == 0 {
		return
	}
	r.closingSessions = true
	_ = awaitDetached(ctx, func() bool {
		//workflowcheck:ignore the answer does not depend on map order
		for _, s := range r.mcpSessions {
			if !s.ended {
				return false
			}
		}
		return true
	})
}

// mcpActivity runs an MCP activity for server: for a stateful server in the run's session with
// it. When the session was lost with its worker, the call runs again in a fresh session if it
// never started, or if rerun (it changes nothing: a listing, a read-only tool).
func (r *run) mcpActivity(ctx workflow.Context, sr *stepRun, server, key, activity string, rerun bool, opts workflow.ActivityOptions, in map[string]any) (any, error) {
	if !r.wf.Def.MCPServers[server].Stateful {
		return r.runActivity(ctx, sr, activity, opts, in)
	}
	opts.ScheduleToStartTimeout = mcpSessionPickup
	// A call cancelled with its session ends as the server saw it: not started (then it is
	// safe to run again), completed, or timed out on a dead worker.
	opts.WaitForCancellation = true
	for attempt := 0; ; attempt++ {
		s, err := r.mcpSessionFor(ctx, server)
		if err != nil {
			return nil, err
		}
		if attempt > 0 && opts.ActivityID != "" {
			opts.ActivityID = r.activityID(sr, key) // a new activity, not the lost one again
		}
		id := s.id
		in["session"] = id
		out, err := r.runActivityOn(ctx, s.ctx, sr, activity, opts, in)
		if err == nil || ctx.Err() != nil || !sessionLost(s, err) {
			return out, err
		}
		if s.id == id && s.ready {
			s.ready, s.renew = false, true
			reason := fmt.Sprintf("the worker that held MCP server %s's session was lost (%s); a fresh session started on a worker that is up: what the server held before is gone", server, errorText(err))
			r.record(ctx, events.Event{Type: events.MCPSessionLost, Step: sr.cs.ID, Key: key, Server: server, Reason: reason})
			addWarnings(&sr.warnings, []string{reason})
		}
		if attempt > 0 || !(rerun || neverStarted(err)) {
			return nil, temporal.NewApplicationErrorWithOptions(fmt.Sprintf("MCP server %s's worker was lost during this call, which may or may not have run; the server was started afresh, without what it held: check before calling it again", server),
				runwire.ErrStepFailed, temporal.ApplicationErrorOptions{NonRetryable: true, Cause: err})
		}
	}
}

// sessionLost says whether a call's error means its session's worker is gone: Temporal failed the
// session or cancelled it, or nobody picked the call up.
func sessionLost(s *mcpSession, err error) bool {
	return errors.Is(err, workflow.ErrSessionFailed) || workflow.GetSessionInfo(s.ctx).SessionState == workflow.SessionStateFailed ||
		s.ctx.Err() != nil || pickupTimedOut(err)
}

// neverStarted says whether a call lost with its session certainly did not run: it was refused
// (the session had failed), nobody picked it up, or it was cancelled before a worker started it.
func neverStarted(err error) bool {
	if errors.Is(err, workflow.ErrSessionFailed) || pickupTimedOut(err) {
		return true
	}
	var ae *temporal.ActivityError
	var ce *temporal.CanceledError
	if !errors.As(err, &ce) {
		return false
	}
	// Cancelled before its command reached the server (no ActivityError), or on the server
	// before a worker started it.
	return !errors.As(err, &ae) || ae.StartedEventID() == 0
}

func pickupTimedOut(err error) bool {
	var te *temporal.TimeoutError
	return errors.As(err, &te) && te.TimeoutType() == enums.TIMEOUT_TYPE_SCHEDULE_TO_START
}
