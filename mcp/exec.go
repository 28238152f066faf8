package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	mcplib "github.com/mark3labs/mcp-go/mcp"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"

	"github.com/weftworks/weft/runwire"
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

func (g *Gateway) listWorkflows(ctx context.Context, _ noArgs) (workflowsOut, error) {
	wfs, fromDir, problems := g.workflowSources()
	toolNames, clashes := exposedTools(wfs, fromDir)
	problems = append(problems, clashes...)
	names := make([]string, 0, len(wfs))
	for n := range wfs {
		names = append(names, n)
	}
	sort.Strings(names)
	out := workflowsOut{Workflows: []workflowEntry{}, Problems: problems}
	for _, n := range names {
		w := wfs[n]
		out.Workflows = append(out.Workflows, workflowEntry{Name: n, Description: w.Def.Description, Inputs: w.Def.Inputs, Steps: len(w.Steps), Tool: toolNames[n]})
	}
	return out, nil
}

func (g *Gateway) validate(ctx context.Context, in validateIn) (validateOut, error) {
	var data []byte
	switch d := in.Definition.(type) {
	case string:
		data = []byte(d)
	default: // an object (checkArgs)
		data, _ = json.MarshalIndent(d, "", "  ")
	}
	// as weft validate checks a file, the workflows it calls found as a run of it finds them
	v := weftclient.Validate("definition.json", data, weftclient.FileResolver(g.o.WorkflowsDir))
	if !v.Valid {
		msgs := make([]string, len(v.Diagnostics))
		for i, d := range v.Diagnostics {
			msgs[i] = d.String()
		}
		return validateOut{Valid: false, Errors: v.Errors, Diagnostics: msgs}, nil
	}
	out := validateOut{Valid: true, Steps: v.Steps}
	for _, d := range v.Diagnostics {
		out.Warnings = append(out.Warnings, d.String())
	}
	return out, nil
}

func (g *Gateway) run(ctx context.Context, in runIn) (runAnswer, error) {
	var w *dsl.Workflow
	source := ""
	switch {
	case in.Definition != nil:
		data, _ := json.Marshal(in.Definition)
		var err error
		if w, err = dsl.Load("definition.json", data); err != nil {
			return runAnswer{}, fmt.Errorf("invalid definition:\n%w", err)
		}
		source = "mcp:inline"
		ctx = clientDefinition(ctx) // the caller's own definition: origin client
	case in.Name != "":
		wfs, _ := g.workflowFiles()
		found, ok := wfs[in.Name]
		if !ok {
			return runAnswer{}, fmt.Errorf("no workflow %q: call weft_workflows for the list", in.Name)
		}
		w, source = found, "mcp:"+in.Name
	default:
		return runAnswer{}, errors.New("give the workflow's name or an inline definition")
	}
	res, id, err := g.start(ctx, w, source, in.Inputs, time.Duration(in.Wait)*time.Second)
	if err != nil {
		return runAnswer{}, err
	}
	if res == nil {
		return g.stillGoing(ctx, id), nil
	}
	return runAnswer{ExecutionID: id, Status: "completed", Output: res.Output.AsInterface(), DurationMs: res.DurationMs}, nil
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

func (g *Gateway) execution(ctx context.Context, in idIn) (executionState, error) {
	st, err := g.state(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	b, err := weftclient.ProtoJSON(st) // as every surface writes it
	if err != nil {
		return nil, fmt.Errorf("execution %s: writing its state: %w", in.ID, err)
	}
	out, _ := asJSON(b).(map[string]any)
	return out, nil
}

func (g *Gateway) review(ctx context.Context, in reviewIn) (reviewOut, error) {
	d := weftclient.Decision{ID: in.Review, Step: in.Step, Decision: in.Decision, Data: in.Data, Reviewer: in.Reviewer, Comment: in.Comment, Digest: in.Digest, Scope: in.Scope}
	if who, ok := auth.IdentityFrom(ctx); ok {
		d.By = &who // the key decides: its name and roles are recorded, the typed reviewer is ignored
	}
	c, err := g.temporal(ctx)
	if err != nil {
		return reviewOut{}, err
	}
	res, err := c.Review(ctx, in.ID, d)
	if err != nil {
		return reviewOut{}, err
	}
	return reviewOut{ExecutionID: in.ID, Review: res.Id, Step: res.Step, Decision: res.Decision, Reviewer: res.Reviewer, Authenticated: res.Authenticated, Recorded: true, Scope: res.Scope}, nil
}

func (g *Gateway) cancel(ctx context.Context, in idIn) (cancelOut, error) {
	c, err := g.temporal(ctx)
	if err != nil {
		return cancelOut{}, err
	}
	_, by := startedBy(ctx)
	terminated, err := c.CancelRun(ctx, in.ID, by+" (MCP key)", false)
	if err != nil {
		return cancelOut{}, err
	}
	g.o.Log.Info("cancel requested", "execution", in.ID, "by", by, "terminated", terminated != "")
	// a stuck run (its workflow task kept failing) cannot take a cancel: it was terminated
	return cancelOut{ExecutionID: in.ID, CancelRequested: true, Terminated: terminated != "", Reason: terminated}, nil
}

// maxExecutionsLimit is the largest limit weft_executions takes (its schema's maximum).
const maxExecutionsLimit = 100

func (g *Gateway) executions(ctx context.Context, in executionsIn) (executionsOut, error) {
	o := weftclient.ListOptions{Limit: in.Limit, AwaitingReview: in.AwaitingReview, After: in.Cursor, Search: in.Search}
	if o.Limit == 0 {
		o.Limit = 20
	}
	if o.AwaitingReview && (o.After != "" || o.Search != "") {
		return executionsOut{}, errors.New("cursor and search page and filter the listing of executions, not awaitingReview's (it reads the limit newest executions waiting, and its cut says when more wait): leave them out")
	}
	if err := weftclient.CheckPageToken(o.After); err != nil {
		return executionsOut{}, fmt.Errorf("cursor: %w", err)
	}
	c, err := g.temporal(ctx)
	if err != nil {
		return executionsOut{}, err
	}
	if o.AwaitingReview {
		return g.awaiting(ctx, c, o.Limit)
	}
	page, err := c.ListPage(ctx, o)
	if err != nil {
		return executionsOut{}, err
	}
	return executionsOut{Executions: c.Readable(ctx, caller(ctx), page.Runs), NextCursor: page.Next}, nil
}

// awaiting lists the executions that wait for a decision (client.ListPendingReviews: runs,
// their child runs and chat sessions) among the limit newest waiting, the longest waiting first,
// with their pending reviews: decide one with weft_review and the execution's id. When more
// executions wait than were read, "cut" says so.
func (g *Gateway) awaiting(ctx context.Context, c *weftclient.Client, limit int) (executionsOut, error) {
	l, err := c.ListPendingReviews(ctx, weftclient.ListOptions{Limit: limit})
	if err != nil {
		return executionsOut{}, err
	}
	reviews := weftclient.ReadableReviews(caller(ctx), l.Reviews)
	if reviews == nil {
		reviews = []weftclient.PendingReview{}
	}
	runs := []weftclient.RunSummary{}
	seen := map[string]bool{}
	for _, r := range reviews {
		if !seen[r.In.ID] {
			seen[r.In.ID] = true
			runs = append(runs, r.In)
		}
	}
	return executionsOut{Executions: runs, Reviews: reviews, Cut: l.Cut(len(reviews), readMoreReviews(limit))}, nil
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

func (g *Gateway) chatStart(ctx context.Context, in chatStartIn) (chatStartOut, error) {
	o := weftclient.ChatOptions{Tools: []string{toolspec.Search.Name, toolspec.Query.Name, toolspec.Collections.Name}, Collection: in.Collection, DB: in.DB, Model: in.Model, MemoryScope: in.Memory}
	if in.Tools != nil {
		o.Tools = in.Tools
	}
	if o.MemoryScope != "" {
		o.Tools = append(o.Tools, toolspec.Remember.Name, toolspec.Recall.Name)
	}
	if who, ok := auth.IdentityFrom(ctx); ok {
		o.Origin, o.StartedBy = weftclient.OriginClient, who.Name
	}
	c, err := g.temporal(ctx)
	if err != nil {
		return chatStartOut{}, err
	}
	id, resumed, err := c.StartChat(ctx, in.Session, o)
	if err != nil {
		return chatStartOut{}, err
	}
	return chatStartOut{Session: id, Resumed: resumed}, nil
}

func (g *Gateway) chatSend(ctx context.Context, in chatSendIn) (runwire.ChatTurn, error) {
	c, err := g.temporal(ctx)
	if err != nil {
		return runwire.ChatTurn{}, err
	}
	_, by := startedBy(ctx)
	turn, err := c.Send(ctx, in.Session, in.Text, by)
	if err != nil {
		return runwire.ChatTurn{}, err
	}
	return *turn, nil
}

func (g *Gateway) chatRead(ctx context.Context, in sessionIn) (chatReadOut, error) {
	c, err := g.temporal(ctx)
	if err != nil {
		return chatReadOut{}, err
	}
	if err := c.CheckRead(ctx, "chat session "+in.Session, in.Session, caller(ctx)); err != nil {
		return chatReadOut{}, err
	}
	s, err := c.ChatSession(ctx, in.Session)
	if err != nil {
		return chatReadOut{}, err
	}
	return chatReadOut{Session: in.Session, Turns: s.Turns, Usage: s.Usage, Continued: s.Continued}, nil
}

func (g *Gateway) retry(ctx context.Context, in retryIn) (retryOut, error) {
	o := weftclient.RetryOptions{From: in.From}
	if in.Definition != nil {
		data, _ := json.Marshal(in.Definition)
		w, err := dsl.Load("definition.json", data)
		if err != nil {
			return retryOut{}, fmt.Errorf("invalid definition:\n%w", err)
		}
		o.Workflow = w
		ctx = clientDefinition(ctx) // a corrected definition from the caller: origin client
	}
	o.Origin, o.StartedBy = startedBy(ctx)
	c, err := g.temporal(ctx)
	if err != nil {
		return retryOut{}, err
	}
	// a key retries only the runs it started (Retry: weftclient.CheckAct, from ctx's identity)
	run, plan, err := c.Retry(ctx, in.ID, o)
	if err != nil {
		return retryOut{}, err
	}
	return retryOut{ExecutionID: run.ID, ResumedFrom: in.ID, Reused: plan.Reused, Rerun: plan.Rerun}, nil
}

func (g *Gateway) schedules(ctx context.Context, _ noArgs) (schedulesOut, error) {
	c, err := g.temporal(ctx)
	if err != nil {
		return schedulesOut{}, err
	}
	list, err := c.ListSchedules(ctx)
	if err != nil {
		return schedulesOut{}, err
	}
	return schedulesOut{Schedules: list}, nil
}

func (g *Gateway) schedule(ctx context.Context, in scheduleIn) (scheduleOut, error) {
	c, err := g.temporal(ctx)
	if err != nil {
		return scheduleOut{}, err
	}
	if err := c.DoSchedule(ctx, in.ID, weftclient.ScheduleAction(in.Action), in.Note); err != nil {
		return scheduleOut{}, err
	}
	return scheduleOut{Schedule: in.ID, Done: in.Action}, nil
}
