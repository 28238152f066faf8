package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/workflows/dsl"
)

func (g *Gateway) addResources() {
	g.srv.AddResourceTemplate(mcplib.NewResourceTemplate("weft://workflows/{name}", "workflow definition", mcplib.WithTemplateMIMEType("application/json")),
		func(ctx context.Context, req mcplib.ReadResourceRequest) ([]mcplib.ResourceContents, error) {
			if err := needRole(ctx, "reading "+req.Params.URI, auth.RoleReader); err != nil {
				return nil, err
			}
			name := strings.TrimPrefix(req.Params.URI, "weft://workflows/")
			wfs, _ := g.workflowFiles()
			w, ok := wfs[name]
			if !ok {
				return nil, fmt.Errorf("no workflow %q", name)
			}
			b, _ := json.MarshalIndent(w.Def, "", "  ")
			return []mcplib.ResourceContents{mcplib.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}, nil
		})
	g.srv.AddResourceTemplate(mcplib.NewResourceTemplate("weft://executions/{id}", "execution state", mcplib.WithTemplateMIMEType("application/json")),
		func(ctx context.Context, req mcplib.ReadResourceRequest) ([]mcplib.ResourceContents, error) {
			if err := needRole(ctx, "reading "+req.Params.URI, auth.RoleReader); err != nil {
				return nil, err
			}
			id := strings.TrimPrefix(req.Params.URI, "weft://executions/")
			st, err := g.state(ctx, id)
			if err != nil {
				return nil, err
			}
			b, _ := weftclient.ProtoJSON(st)
			return []mcplib.ResourceContents{mcplib.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}, nil
		})
}

// WatchWorkflows re-reads the workflows directory every interval until ctx ends and updates the
// wf_ tools when a file appears, changes or goes away; mcp-go then notifies clients with
// notifications/tools/list_changed.
func (g *Gateway) WatchWorkflows(ctx context.Context, interval time.Duration) {
	if g.o.WorkflowsDir == "" {
		return
	}
	last := "" // the first tick re-reads, so nothing written before the watcher started is missed
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if now := dirStamp(g.o.WorkflowsDir); now != last {
				last = now
				g.refreshWorkflowTools()
			}
		}
	}
}

// dirStamp summarises the names, sizes and modification times of the directory's JSON files.
func dirStamp(dir string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	sort.Strings(files)
	var b strings.Builder
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			fmt.Fprintf(&b, "%s|%d|%d;", f, st.Size(), st.ModTime().UnixNano())
		}
	}
	return b.String()
}

// refreshWorkflowTools offers every exposed workflow as wf_<its name> (exposedTools says which
// and under what name); the built-ins are exposed unless NoBuiltins. Only new or changed tools are (re)registered, all in one batch, and tools that
// disappeared are removed, so clients get one tools/list_changed per real change and none when
// nothing changed.
func (g *Gateway) refreshWorkflowTools() {
	g.mu.Lock()
	defer g.mu.Unlock()
	wfs, fromDir, _ := g.workflowSources()
	toolNames, _ := exposedTools(wfs, fromDir)
	want := map[string]string{}
	names := map[string]string{} // tool name -> catalog name
	var changed []server.ServerTool
	order := make([]string, 0, len(wfs))
	for n := range wfs {
		order = append(order, n)
	}
	sort.Strings(order)
	for _, n := range order {
		w := wfs[n]
		toolName, ok := toolNames[n]
		if !ok {
			continue // not exposed, or its name taken by another workflow
		}
		def := w.Def
		defJSON, _ := json.Marshal(def)
		want[toolName] = string(defJSON)
		names[toolName] = n
		if g.wfTools[toolName] == want[toolName] {
			continue // unchanged: no notification
		}
		t := workflowTool(toolName, n, w)
		changed = append(changed, server.ServerTool{Tool: t,
			Handler: func(ctx context.Context, req mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
				res, id, err := g.start(ctx, w, "mcp:"+n, req.GetArguments(), g.o.Wait)
				if err != nil {
					return mcplib.NewToolResultError(err.Error()), nil
				}
				if res == nil {
					return result(g.stillGoing(ctx, id)), nil
				}
				return result(runAnswer{ExecutionID: id, Output: res.Output.AsInterface()}), nil
			}})
	}
	if len(changed) > 0 {
		g.srv.AddTools(changed...)
	}
	var stale []string
	for name := range g.wfTools {
		if _, ok := want[name]; !ok {
			stale = append(stale, name)
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		g.srv.DeleteTools(stale...)
	}
	g.wfTools = want
	g.wfNames = names
	g.refreshPrompts(want, names, wfs)
}

// workflowTool is the MCP tool that runs catalog workflow n (w) as toolName: its inputs' schema,
// its description (mcp.description when the file sets one) and the run's answer.
func workflowTool(toolName, n string, w *dsl.Workflow) mcplib.Tool {
	schema, _ := json.Marshal(dsl.InputSchema(w.Def))
	desc := w.Def.Description
	if w.Def.MCP != nil && w.Def.MCP.Description != "" {
		desc = w.Def.MCP.Description
	}
	title := w.Def.Name
	if title == "" {
		title = n
	}
	t := tool(toolName, title, desc+" (runs as a durable weft execution)", string(schema), toolspec.Annotations{OpenWorld: true})
	t.RawOutputSchema = runAnswerSchema
	return t
}

// WorkflowTools is the MCP tool definitions (as tools/list gives them, JSON) that the catalog
// workflow name is offered as: none when its file does not ask to be offered (mcp.expose) or
// another workflow's name gives the same tool. found is false when the catalog has no such
// workflow. GET /v1/workflows/{name}/tools answers it.
func (g *Gateway) WorkflowTools(name string) (tools json.RawMessage, found bool) {
	wfs, fromDir, _ := g.workflowSources()
	w, ok := wfs[name]
	if !ok {
		return nil, false
	}
	out := []mcplib.Tool{}
	toolNames, _ := exposedTools(wfs, fromDir)
	if toolName, ok := toolNames[name]; ok {
		out = append(out, workflowTool(toolName, name, w))
	}
	b, _ := json.Marshal(out)
	return b, true
}
