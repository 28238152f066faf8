package mcp

import (
	"context"
	"strings"

	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
)

// What a key may do. Over HTTP every request carries its key's identity (auth.WithIdentity in
// HTTPHandler); over stdio nobody authenticated: that is the operator, who may do everything.
//
//   - reader: the read-only tools (annotations readOnlyHint) and the resources;
//   - reviewer: reader + weft_review;
//   - runner: reader + every other tool (starting runs, wf_ tools, cancel, retry, chat, the
//     knowledge tools that write, schedules);
//   - admin: everything.
//
// A role says which tools a key may call, not on whose runs: a key reads the runs the read rule
// allows (weftclient.CheckRead) and cancels or retries only those it started
// (weftclient.CheckAct, in the client op, from the identity the request's context carries).

// toolRole is the role a tool needs.
func toolRole(t mcplib.Tool) string {
	switch {
	case t.Name == "weft_review":
		return auth.RoleReviewer
	case strings.HasPrefix(t.Name, "wf_"):
		return auth.RoleRunner // starting any run needs runner
	case t.Annotations.ReadOnlyHint != nil && *t.Annotations.ReadOnlyHint:
		return auth.RoleReader
	}
	return auth.RoleRunner
}

// permitted reports whether ctx's caller may use a tool that needs role.
func permitted(ctx context.Context, role string) (auth.Identity, bool) {
	id, authenticated := auth.IdentityFrom(ctx)
	return id, !authenticated || id.Has(role)
}

// visibleTools drops from a tools/list answer the tools the caller's roles do not allow. It is
// an after-list hook rather than server.WithToolFilter because mcp-go applies filters to calls
// too, answering a refused call with "tool not found"; authorize answers it instead, saying which
// role is needed.
func visibleTools(ctx context.Context, _ any, _ *mcplib.ListToolsRequest, res *mcplib.ListToolsResult) {
	if res == nil {
		return
	}
	if _, authenticated := auth.IdentityFrom(ctx); !authenticated {
		return
	}
	kept := res.Tools[:0:0]
	for _, t := range res.Tools {
		if _, ok := permitted(ctx, toolRole(t)); ok {
			kept = append(kept, t)
		}
	}
	res.Tools = kept
}

// authorize refuses a call the caller's roles do not allow, as a tool error that names the role
// and how the operator grants it.
func (g *Gateway) authorize(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
		role := auth.RoleRunner
		if st := g.srv.GetTool(req.Params.Name); st != nil {
			role = toolRole(st.Tool)
		}
		if id, ok := permitted(ctx, role); !ok {
			g.o.Log.Warn("tool call refused", "tool", req.Params.Name, "identity", id.Name, "roles", id.Roles, "needs", role)
			return mcplib.NewToolResultError(id.Refusal(req.Params.Name, role)), nil
		}
		return next(ctx, req)
	}
}

// needRole is the same check for the resources.
func needRole(ctx context.Context, what, role string) error {
	if id, ok := permitted(ctx, role); !ok {
		return &weftclient.RefusedError{Msg: id.Refusal(what, role)}
	}
	return nil
}

type originKey struct{}

// clientDefinition marks ctx as starting a definition the caller sent (RunRequest.origin client).
func clientDefinition(ctx context.Context) context.Context {
	return context.WithValue(ctx, originKey{}, weftclient.OriginClient)
}

// startedBy is what a start records: who started it and where its definition came from. An
// authenticated caller's own definition is OriginClient; the catalog's (a name, a wf_ tool, a
// knowledge tool the gateway wraps) is the operator's.
func startedBy(ctx context.Context) (origin, by string) {
	origin, _ = ctx.Value(originKey{}).(string)
	if id, ok := auth.IdentityFrom(ctx); ok {
		by = id.Name
	}
	return origin, by
}
