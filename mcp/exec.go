package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	mcplib "github.com/mark3labs/mcp-go/mcp"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"

	"github.com/weftworks/weft/workflows/dsl"
)

func tool(name, title, description, schema string, a toolspec.Annotations) mcplib.Tool {
	t := mcplib.NewToolWithRawSchema(name, description, json.RawMessage(schema))
	t.Annotations = annotations(title, a)
	return t
}

// asJSON converts a proto message to plain JSON values.
func asJSON(b []byte) any {
	var v any
	_ = json.Unmarshal(b, &v)
	return v
}

func (g *Gateway) addExecutionTools() {
	ro := toolspec.Annotations{ReadOnly: true, Idempotent: true}
	g.srv.AddTool(tool("weft_workflows", "List workflows", "List the workflows this gateway can run (built-in templates and files from its workflows directory) with their inputs.",
		`{"type":"object","additionalProperties":false,"properties":{}}`, ro), g.listWorkflows)
	g.srv.AddTool(tool("weft_validate_workflow", "Validate a workflow", "Validate a workflow definition (JSON object or text) and return every problem as FILE:LINE:COL: where: what (hint).",
		`{"type":"object","required":["definition"],"additionalProperties":false,"properties":{"definition":{"type":["object","string"],"description":"The workflow JSON"}}}`, ro), g.validate)
	g.srv.AddTool(tool("weft_run_workflow", "Run a workflow", "Start a durable execution of a workflow by name or inline definition. Returns the execution id; with wait (seconds) it returns the result when the run ends in time.",
		`{"type":"object","additionalProperties":false,"properties":{"name":{"type":"string"},"definition":{"type":"object"},"inputs":{"type":"object"},"wait":{"type":"integer","minimum":0,"maximum":300}}}`,
		toolspec.Annotations{OpenWorld: true}), g.run)
	g.srv.AddTool(tool("weft_execution", "Execution state", "The state of an execution: per-step status, pending reviews and, once done, the output.",
		`{"type":"object","required":["id"],"additionalProperties":false,"properties":{"id":{"type":"string"}}}`, ro), g.execution)
	g.srv.AddTool(tool("weft_review", "Decide a review", "Approve, edit (with data) or reject a review an execution is waiting on: a review step, one forEach item, or an agent's tool call.",
		`{"type":"object","required":["id","decision"],"additionalProperties":false,"properties":{"id":{"type":"string","description":"the execution id"},"review":{"type":"string","description":"the review's id from weft_execution's pendingReviews (optional when one is pending)"},"step":{"type":"string"},"decision":{"enum":["approve","edit","reject"]},"data":{},"reviewer":{"type":"string","description":"a label, used only when nobody authenticated (stdio); over HTTP the key's name is recorded"},"comment":{"type":"string"},"digest":{"type":"string","description":"the digest of the pending review from weft_execution (pendingReviews[].digest): pass it so the decision is refused if the data changed since you read it"}}}`,
		toolspec.Annotations{}), g.review)
	g.srv.AddTool(tool("weft_cancel", "Cancel an execution", "Cancel a running execution you started (an admin key: any); steps in flight are cancelled, finished steps keep their results.",
		`{"type":"object","required":["id"],"additionalProperties":false,"properties":{"id":{"type":"string"}}}`, toolspec.Annotations{Destructive: true, Idempotent: true}), g.cancel)
	g.srv.AddTool(tool("weft_retry", "Resume a failed run", "Start a new run that reuses the outputs of the steps a failed or cancelled execution you started (an admin key: any) completed and runs the rest; from runs that step and what follows again.",
		`{"type":"object","required":["id"],"additionalProperties":false,"properties":{"id":{"type":"string"},"from":{"type":"string"},"definition":{"type":"object","description":"a corrected definition"}}}`,
		toolspec.Annotations{OpenWorld: true}), g.retry)
	g.srv.AddTool(tool("weft_schedules", "Schedules", "The schedules of weft workflows: next times, recent runs, paused or not.",
		`{"type":"object","additionalProperties":false,"properties":{}}`, ro), g.schedules)
	g.srv.AddTool(tool("weft_schedule", "Change a schedule", "Pause, unpause, trigger (run now) or delete a schedule (schedules are the operator's: an admin key).",
		`{"type":"object","required":["id","action"],"additionalProperties":false,"properties":{"id":{"type":"string"},"action":{"enum":["pause","unpause","trigger","delete"]},"note":{"type":"string"}}}`,
		toolspec.Annotations{Destructive: true}), g.schedule)
	g.srv.AddTool(tool("weft_chat_start", "Start a chat session", "Start a durable chat session (or resume one by id): an agent with weft's tools whose conversation survives anything. Returns the session id.",
		`{"type":"object","additionalProperties":false,"properties":{"session":{"type":"string"},"tools":{"type":"array","items":{"type":"string"}},"collection":{"type":"string"},"db":{"type":"string"},"model":{"type":"string"},"memory":{"type":"string","description":"long-term memory scope (adds remember and recall)"}}}`,
		toolspec.Annotations{OpenWorld: true}), g.chatStart)
	g.srv.AddTool(tool("weft_chat_send", "Send a chat message", "Send one message to a chat session and get the answer with the tool calls made for it.",
		`{"type":"object","required":["session","text"],"additionalProperties":false,"properties":{"session":{"type":"string"},"text":{"type":"string","minLength":1}}}`,
		toolspec.Annotations{OpenWorld: true}), g.chatSend)
	g.srv.AddTool(tool("weft_chat_read", "Read a chat session", "The turns (questions, answers, tool calls) and usage of a chat session.",
		`{"type":"object","required":["session"],"additionalProperties":false,"properties":{"session":{"type":"string"}}}`, ro), g.chatRead)
	g.srv.AddTool(tool("weft_executions", "Recent executions", "Recent executions with their status, newest first, a page at a time (nextCursor, when there are more, reads the next page as cursor); awaitingReview lists only those waiting for a decision (runs, their child runs, chat sessions) and their pending reviews.",
		`{"type":"object","additionalProperties":false,"properties":{"awaitingReview":{"type":"boolean"},"limit":{"type":"integer","minimum":1,"maximum":100,"description":"executions a page (default 20); with awaitingReview, how many of the newest waiting executions to read (cut says when more wait)"},"search":{"type":"string","description":"keep executions whose id, workflow, status or starter contain every word"},"cursor":{"type":"string","description":"the nextCursor of the previous page: list the executions after it (executions started meanwhile do not shift pages)"}}}`, ro), g.executions)
}

func (g *Gateway) listWorkflows(ctx context.Context, req mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
	wfs, fromDir, problems := g.workflowSources()
	toolNames, clashes := exposedTools(wfs, fromDir)
	problems = append(problems, clashes...)
	names := make([]string, 0, len(wfs))
	for n := range wfs {
		names = append(names, n)
	}
	sort.Strings(names)
	var list []any
	for _, n := range names {
		w := wfs[n]
		entry := map[string]any{"name": n, "description": w.Def.Description, "inputs": w.Def.Inputs, "steps": len(w.Steps)}
		if t, ok := toolNames[n]; ok {
			entry["tool"] = t // the wf_ tool that runs it
		}
		list = append(list, entry)
	}
	return result(map[string]any{"workflows": list, "problems": problems}), nil
}

func (g *Gateway) validate(ctx context.Context, req mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
	var data []byte
	args := req.GetArguments()
	switch d := args["definition"].(type) {
	case string:
		data = []byte(d)
	case map[string]any:
		data, _ = json.MarshalIndent(d, "", "  ")
	case nil:
		var got []string
		for k := range args {
			got = append(got, k)
		}
		sort.Strings(got)
		return mcplib.NewToolResultError(fmt.Sprintf("weft_validate_workflow takes the argument \"definition\" (the workflow as a JSON object or text); got %v", got)), nil
	default:
		return mcplib.NewToolResultError(fmt.Sprintf("\"definition\" is a %T: give the workflow as a JSON object or as text", d)), nil
	}
	w, err := dsl.Load("definition.json", data)
	if err != nil {
		var ds dsl.Diagnostics
		if errors.As(err, &ds) {
			msgs := make([]string, len(ds))
			for i, d := range ds {
				msgs[i] = d.String()
			}
			return result(map[string]any{"valid": false, "errors": len(ds.Errors()), "diagnostics": msgs}), nil
		}
		return mcplib.NewToolResultError(err.Error()), nil
	}
	var warnings []string
	for _, d := range w.Warnings {
		warnings = append(warnings, d.String())
	}
	return result(map[string]any{"valid": true, "steps": len(w.Steps), "warnings": warnings}), nil
}

func (g *Gateway) run(ctx context.Context, req mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
	args := req.GetArguments()
	inputs, _ := args["inputs"].(map[string]any)
	var w *dsl.Workflow
	source := ""
	if d, ok := args["definition"].(map[string]any); ok {
		data, _ := json.Marshal(d)
		var err error
		if w, err = dsl.Load("definition.json", data); err != nil {
			return mcplib.NewToolResultError("invalid definition:\n" + err.Error()), nil
		}
		source = "mcp:inline"
		ctx = clientDefinition(ctx) // the caller's own definition: origin client
	} else if name, _ := args["name"].(string); name != "" {
		wfs, _ := g.workflowFiles()
		found, ok := wfs[name]
		if !ok {
			return mcplib.NewToolResultError(fmt.Sprintf("no workflow %q: call weft_workflows for the list", name)), nil
		}
		w, source = found, "mcp:"+name
	} else {
		return mcplib.NewToolResultError("give the workflow's name or an inline definition"), nil
	}
	wait := time.Duration(0)
	if f, ok := args["wait"].(float64); ok {
		wait = time.Duration(f) * time.Second
	}
	res, id, err := g.start(ctx, w, source, inputs, wait)
	if err != nil {
		return mcplib.NewToolResultError(err.Error()), nil
	}
	if res == nil {
		return result(g.stillGoing(ctx, id)), nil
	}
	return result(map[string]any{"executionId": id, "status": "completed", "output": res.Output.AsInterface(), "durationMs": res.DurationMs}), nil
}

// caller is the authenticated identity of ctx, nil for the operator (stdio): what
// weftclient.MayRead and CheckRead take (weftclient.Caller).
func caller(ctx context.Context) *auth.Identity { return weftclient.Caller(ctx) }

// state reads a run's state for the caller: a key reads only what weftclient.CheckRead allows.
func (g *Gateway) state(ctx context.Context, id string) (*weftv1.ExecutionState, error) {
	c, err := g.temporal(ctx)
	if err != nil {
		return nil, err
	}
	if err := c.CheckRead(ctx, "execution "+id, id, caller(ctx)); err != nil {
		return nil, err
	}
	// the run as every surface shows it (weftclient.Resolve): status, steps' outcomes
	e, err := c.Execution(ctx, id)
	if err != nil {
		return nil, err
	}
	if e.State == nil {
		return nil, errors.New(e.StateErr)
	}
	return e.State, nil
}

func (g *Gateway) execution(ctx context.Context, req mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
	id, _ := req.GetArguments()["id"].(string)
	st, err := g.state(ctx, id)
	if err != nil {
		return mcplib.NewToolResultError(err.Error()), nil
	}
	b, _ := protojson.Marshal(st)
	return result(asJSON(b)), nil
}

func (g *Gateway) review(ctx context.Context, req mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
	args := req.GetArguments()
	id, _ := args["id"].(string)
	str := func(k string) string { s, _ := args[k].(string); return s }
	d := weftclient.Decision{ID: str("review"), Step: str("step"), Decision: str("decision"), Data: args["data"], Reviewer: str("reviewer"), Comment: str("comment"), Digest: str("digest")}
	if who, ok := auth.IdentityFrom(ctx); ok {
		d.By = &who // the key decides: its name and roles are recorded, the typed reviewer is ignored
	}
	c, err := g.temporal(ctx)
	if err != nil {
		return mcplib.NewToolResultError(err.Error()), nil
	}
	res, err := c.Review(ctx, id, d)
	if err != nil {
		return mcplib.NewToolResultError(err.Error()), nil
	}
	return result(map[string]any{"executionId": id, "review": res.Id, "step": res.Step, "decision": res.Decision, "reviewer": res.Reviewer, "authenticated": res.Authenticated, "recorded": true}), nil
}

func (g *Gateway) cancel(ctx context.Context, req mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
	id, _ := req.GetArguments()["id"].(string)
	c, err := g.temporal(ctx)
	if err != nil {
		return mcplib.NewToolResultError(err.Error()), nil
	}
	_, by := startedBy(ctx)
	terminated, err := c.CancelRun(ctx, id, by+" (MCP key)", false)
	if err != nil {
		return mcplib.NewToolResultError(err.Error()), nil
	}
	g.o.Log.Info("cancel requested", "execution", id, "by", by, "terminated", terminated != "")
	out := map[string]any{"executionId": id, "cancelRequested": true}
	if terminated != "" {
		// a stuck run (its workflow task kept failing) cannot take a cancel: it was terminated
		out["terminated"], out["reason"] = true, terminated
	}
	return result(out), nil
}

// maxExecutionsLimit is the largest limit weft_executions takes (its schema's maximum).
const maxExecutionsLimit = 100

func (g *Gateway) executions(ctx context.Context, req mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
	args := req.GetArguments()
	o := weftclient.ListOptions{Limit: 20}
	if v, ok := args["limit"]; ok && v != nil {
		// the schema's range: a limit out of it is refused, not read as the client's default (0)
		// or passed on unchecked
		f, ok := v.(float64)
		if !ok || f != math.Trunc(f) || f < 1 || f > maxExecutionsLimit {
			return mcplib.NewToolResultError(fmt.Sprintf("limit %v: give a whole number of executions from 1 to %d", v, maxExecutionsLimit)), nil
		}
		o.Limit = int(f)
	}
	o.AwaitingReview, _ = args["awaitingReview"].(bool)
	o.After, _ = args["cursor"].(string)
	o.Search, _ = args["search"].(string)
	if o.AwaitingReview && (o.After != "" || o.Search != "") {
		return mcplib.NewToolResultError("cursor and search page and filter the listing of executions, not awaitingReview's (it reads the limit newest executions waiting, and its cut says when more wait): leave them out"), nil
	}
	if err := weftclient.CheckPageToken(o.After); err != nil {
		return mcplib.NewToolResultError("cursor: " + err.Error()), nil
	}
	c, err := g.temporal(ctx)
	if err != nil {
		return mcplib.NewToolResultError(err.Error()), nil
	}
	if o.AwaitingReview {
		return g.awaiting(ctx, c, o.Limit)
	}
	page, err := c.ListPage(ctx, o)
	if err != nil {
		return mcplib.NewToolResultError(err.Error()), nil
	}
	out := map[string]any{"executions": c.Readable(ctx, caller(ctx), page.Runs)}
	if page.Next != "" {
		out["nextCursor"] = page.Next
	}
	return result(out), nil
}

// awaiting lists the executions that wait for a decision (client.ListPendingReviews: runs,
// their child runs and chat sessions) among the limit newest waiting, the longest waiting first,
// with their pending reviews: decide one with weft_review and the execution's id. When more
// executions wait than were read, "cut" says so.
func (g *Gateway) awaiting(ctx context.Context, c *weftclient.Client, limit int) (*mcplib.CallToolResult, error) {
	l, err := c.ListPendingReviews(ctx, weftclient.ListOptions{Limit: limit})
	if err != nil {
		return mcplib.NewToolResultError(err.Error()), nil
	}
	reviews := weftclient.ReadableReviews(caller(ctx), l.Reviews)
	runs := []weftclient.RunSummary{}
	seen := map[string]bool{}
	for _, r := range reviews {
		if !seen[r.In.ID] {
			seen[r.In.ID] = true
			runs = append(runs, r.In)
		}
	}
	out := map[string]any{"executions": runs, "reviews": reviews}
	if cut := l.Cut(len(reviews), readMoreReviews(limit)); cut != "" {
		out["cut"] = cut
	}
	return result(out), nil
}

// readMoreReviews is how an agent reads more of the reviews waiting than the limit newest
// executions waiting (client.PendingReviewList.Cut's more): "" at the highest limit, where Cut
// says when the older ones are listed.
func readMoreReviews(limit int) string {
	if limit >= maxExecutionsLimit {
		return ""
	}
	return fmt.Sprintf("weft_executions with awaitingReview and limit %d reads more.", maxExecutionsLimit)
}

func (g *Gateway) chatStart(ctx context.Context, req mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
	args := req.GetArguments()
	str := func(k string) string { s, _ := args[k].(string); return s }
	o := weftclient.ChatOptions{Tools: []string{toolspec.Search.Name, toolspec.Query.Name, toolspec.Collections.Name}, Collection: str("collection"), DB: str("db"), Model: str("model"), MemoryScope: str("memory")}
	if list, ok := args["tools"].([]any); ok {
		o.Tools = nil
		for _, t := range list {
			if s, ok := t.(string); ok {
				o.Tools = append(o.Tools, s)
			}
		}
	}
	if o.MemoryScope != "" {
		o.Tools = append(o.Tools, toolspec.Remember.Name, toolspec.Recall.Name)
	}
	if who, ok := auth.IdentityFrom(ctx); ok {
		o.Origin, o.StartedBy = weftclient.OriginClient, who.Name
	}
	c, err := g.temporal(ctx)
	if err != nil {
		return mcplib.NewToolResultError(err.Error()), nil
	}
	id, resumed, err := c.StartChat(ctx, str("session"), o)
	if err != nil {
		return mcplib.NewToolResultError(err.Error()), nil
	}
	return result(map[string]any{"session": id, "resumed": resumed}), nil
}

func (g *Gateway) chatSend(ctx context.Context, req mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
	args := req.GetArguments()
	id, _ := args["session"].(string)
	text, _ := args["text"].(string)
	c, err := g.temporal(ctx)
	if err != nil {
		return mcplib.NewToolResultError(err.Error()), nil
	}
	_, by := startedBy(ctx)
	turn, err := c.Send(ctx, id, text, by)
	if err != nil {
		return mcplib.NewToolResultError(err.Error()), nil
	}
	return result(turn), nil
}

func (g *Gateway) chatRead(ctx context.Context, req mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
	id, _ := req.GetArguments()["session"].(string)
	c, err := g.temporal(ctx)
	if err != nil {
		return mcplib.NewToolResultError(err.Error()), nil
	}
	if err := c.CheckRead(ctx, "chat session "+id, id, caller(ctx)); err != nil {
		return mcplib.NewToolResultError(err.Error()), nil
	}
	s, err := c.ChatSession(ctx, id)
	if err != nil {
		return mcplib.NewToolResultError(err.Error()), nil
	}
	return result(map[string]any{"session": id, "turns": s.Turns, "usage": s.Usage, "continued": s.Continued}), nil
}

func (g *Gateway) retry(ctx context.Context, req mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
	args := req.GetArguments()
	id, _ := args["id"].(string)
	from, _ := args["from"].(string)
	o := weftclient.RetryOptions{From: from}
	if d, ok := args["definition"].(map[string]any); ok {
		data, _ := json.Marshal(d)
		w, err := dsl.Load("definition.json", data)
		if err != nil {
			return mcplib.NewToolResultError("invalid definition:\n" + err.Error()), nil
		}
		o.Workflow = w
		ctx = clientDefinition(ctx) // a corrected definition from the caller: origin client
	}
	o.Origin, o.StartedBy = startedBy(ctx)
	c, err := g.temporal(ctx)
	if err != nil {
		return mcplib.NewToolResultError(err.Error()), nil
	}
	// a key retries only the runs it started (Retry: weftclient.CheckAct, from ctx's identity)
	run, plan, err := c.Retry(ctx, id, o)
	if err != nil {
		return mcplib.NewToolResultError(err.Error()), nil
	}
	return result(map[string]any{"executionId": run.ID, "resumedFrom": id, "reused": plan.Reused, "rerun": plan.Rerun}), nil
}

func (g *Gateway) schedules(ctx context.Context, req mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
	c, err := g.temporal(ctx)
	if err != nil {
		return mcplib.NewToolResultError(err.Error()), nil
	}
	list, err := c.ListSchedules(ctx)
	if err != nil {
		return mcplib.NewToolResultError(err.Error()), nil
	}
	return result(map[string]any{"schedules": list}), nil
}

func (g *Gateway) schedule(ctx context.Context, req mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
	args := req.GetArguments()
	id, _ := args["id"].(string)
	action, _ := args["action"].(string)
	note, _ := args["note"].(string)
	c, err := g.temporal(ctx)
	if err != nil {
		return mcplib.NewToolResultError(err.Error()), nil
	}
	if err := c.DoSchedule(ctx, id, weftclient.ScheduleAction(action), note); err != nil {
		return mcplib.NewToolResultError(err.Error()), nil
	}
	return result(map[string]any{"schedule": id, "done": action}), nil
}
