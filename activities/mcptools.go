package activities

import (
	"context"
	"encoding/json"
	"errors"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/weftworks/weft/activities/mcpclient"
	"github.com/weftworks/weft/activities/provider"
	"github.com/weftworks/weft/activities/toolspec"
)

// Activity names of the external MCP operations agents use (declared in toolspec, which the
// interpreter shares).
const (
	ActivityMCPList  = toolspec.ActivityMCPList
	ActivityMCPCall  = toolspec.ActivityMCPCall
	ActivityMCPClose = toolspec.ActivityMCPClose
)

// mcpServer decodes the server declaration the workflow sends.
func mcpServer(v any) (mcpclient.Server, error) {
	var s mcpclient.Server
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, &s)
	}
	return s, err
}

func mcpError(err error) error {
	var pe *provider.Error
	var ie *InputError
	switch {
	case errors.As(err, &ie):
		// The private-address guard refused the server's address: no retry helps.
		return temporal.NewNonRetryableApplicationError(ie.Msg, toolspec.ErrMissingConfig, nil)
	case errors.Is(err, mcpclient.ErrConfig):
		return temporal.NewNonRetryableApplicationError(err.Error(), toolspec.ErrMissingConfig, nil)
	case errors.Is(err, mcpclient.ErrTooLarge):
		return temporal.NewNonRetryableApplicationError(err.Error(), toolspec.ErrInvalidInput, nil)
	case errors.As(err, &pe):
		return temporal.NewApplicationErrorWithOptions(pe.Error(), ErrProviderUnavailable, temporal.ApplicationErrorOptions{Cause: err})
	}
	return err
}

// reach resolves the server (resolveMCPServer) and, for a URL the operator did not declare, sets
// the guarded HTTP client.
func (t *Tools) reach(in map[string]any) (mcpclient.Server, bool, error) {
	s, trusted, operator, err := t.resolveMCPServer(in)
	if err != nil {
		return s, false, err
	}
	if s.URL != "" && !operator {
		s.HTTPClient = t.httpClient(toolspec.MCPTimeout)
	}
	return s, trusted, nil
}

// MCPList lists an external server's tools: {server, origin, trust} -> {tools: [...], trust}.
// trust is what decides whether the server's tools that change things wait for an approval.
func (t *Tools) MCPList(ctx context.Context, in map[string]any) (toolspec.Result, error) {
	s, trusted, err := t.reach(in)
	if err != nil {
		return toolspec.Result{}, mcpError(err)
	}
	var tools []mcpclient.Tool
	if session, _ := in["session"].(string); session != "" {
		tools, err = t.mcpSessions.ListTools(ctx, session, s, t.getenv)
	} else {
		tools, err = mcpclient.ListTools(ctx, s, t.getenv)
	}
	if err != nil {
		return toolspec.Result{}, mcpError(err)
	}
	var out any
	b, _ := json.Marshal(map[string]any{"tools": tools, "trust": trusted})
	_ = json.Unmarshal(b, &out)
	return toolspec.Result{Output: out, Attempt: activity.GetInfo(ctx).Attempt}, nil
}

// MCPCall calls one tool of an external server: {server, origin, tool, arguments, session} ->
// {text, structured, isError}. With a session (a stateful server) the call runs on the
// connection the session holds on this worker, and a warning says when that connection had
// failed and a fresh one, without the server's earlier state, answered.
func (t *Tools) MCPCall(ctx context.Context, in map[string]any) (toolspec.Result, error) {
	s, _, err := t.reach(in)
	if err != nil {
		return toolspec.Result{}, mcpError(err)
	}
	tool, _ := in["tool"].(string)
	args, _ := in["arguments"].(map[string]any)
	var res any
	var warnings []string
	if session, _ := in["session"].(string); session != "" {
		r, err := t.mcpSessions.Call(ctx, session, s, tool, args, t.getenv)
		if err != nil {
			return toolspec.Result{}, mcpError(err)
		}
		if r.Reopened {
			warnings = append(warnings, "MCP server "+s.Name+"'s connection failed and was opened again: what the server held before this call is gone")
		}
		res = r.Result
	} else {
		r, err := mcpclient.Call(ctx, s, tool, args, t.getenv)
		if err != nil {
			return toolspec.Result{}, mcpError(err)
		}
		res = r
	}
	var out any
	b, _ := json.Marshal(res)
	_ = json.Unmarshal(b, &out)
	return toolspec.Result{Output: out, Attempt: activity.GetInfo(ctx).Attempt, Warnings: warnings}, nil
}

// MCPClose ends a run's session with its stateful servers on this worker: {session} ->
// {closed: N}, the connections closed (a stdio server's process exits). Closing a session that
// holds nothing here (already closed, or the worker restarted) closes nothing.
func (t *Tools) MCPClose(ctx context.Context, in map[string]any) (toolspec.Result, error) {
	session, _ := in["session"].(string)
	if session == "" {
		return toolspec.Result{}, temporal.NewNonRetryableApplicationError("weft.mcp.close needs {\"session\": ID}", toolspec.ErrInvalidInput, nil)
	}
	n := t.mcpSessions.Close(session)
	return toolspec.Result{Output: map[string]any{"closed": float64(n)}, Attempt: activity.GetInfo(ctx).Attempt}, nil
}

// CloseMCPSessions closes every stateful server's connection this worker holds: the worker calls
// it when it stops.
func (t *Tools) CloseMCPSessions() { t.mcpSessions.CloseAll() }
