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
	ActivityMCPList = toolspec.ActivityMCPList
	ActivityMCPCall = toolspec.ActivityMCPCall
)

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
	switch {
	case errors.Is(err, mcpclient.ErrConfig):
		return temporal.NewNonRetryableApplicationError(err.Error(), toolspec.ErrMissingConfig, nil)
	case errors.Is(err, mcpclient.ErrTooLarge):
		return temporal.NewNonRetryableApplicationError(err.Error(), toolspec.ErrInvalidInput, nil)
	case errors.As(err, &pe):
		return temporal.NewApplicationErrorWithOptions(pe.Error(), ErrProviderUnavailable, temporal.ApplicationErrorOptions{Cause: err})
	}
	return err
}

// MCPList lists an external server's tools: {server} -> {tools: [...]}.
func (t *Tools) MCPList(ctx context.Context, in map[string]any) (toolspec.Result, error) {
	s, err := mcpServer(in["server"])
	if err != nil {
		return toolspec.Result{}, temporal.NewNonRetryableApplicationError("mcp server: "+err.Error(), toolspec.ErrInvalidInput, nil)
	}
	tools, err := mcpclient.ListTools(ctx, s, t.getenv)
	if err != nil {
		return toolspec.Result{}, mcpError(err)
	}
	var out any
	b, _ := json.Marshal(map[string]any{"tools": tools})
	_ = json.Unmarshal(b, &out)
	return toolspec.Result{Output: out, Attempt: activity.GetInfo(ctx).Attempt}, nil
}

// MCPCall calls one tool of an external server: {server, tool, arguments} -> {text, structured,
// isError}.
func (t *Tools) MCPCall(ctx context.Context, in map[string]any) (toolspec.Result, error) {
	s, err := mcpServer(in["server"])
	if err != nil {
		return toolspec.Result{}, temporal.NewNonRetryableApplicationError("mcp server: "+err.Error(), toolspec.ErrInvalidInput, nil)
	}
	tool, _ := in["tool"].(string)
	args, _ := in["arguments"].(map[string]any)
	res, err := mcpclient.Call(ctx, s, tool, args, t.getenv)
	if err != nil {
		return toolspec.Result{}, mcpError(err)
	}
	var out any
	b, _ := json.Marshal(res)
	_ = json.Unmarshal(b, &out)
	return toolspec.Result{Output: out, Attempt: activity.GetInfo(ctx).Attempt}, nil
}
