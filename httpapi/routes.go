package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/events"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/workflows/dsl"
)

// MaxListLimit is the most runs or reviews one listing answers.
const MaxListLimit = 100

// routes is the API: one declaration per operation. The OpenAPI document is generated from it.
func routes() []route {
	nf, cf := http.StatusNotFound, http.StatusConflict
	start := op(http.MethodPost, "/v1/runs", auth.RoleRunner, "startRun", "runs", "Start a run",
		"Starts a run of the operator's workflow named by `workflow`, or of the caller's own `definition` (a client's definition: it names only what the operator declared, never commands, URLs or environment names). With an `id`, the same request twice is one run: the second answers 200 with the run the first started.",
		[]int{http.StatusBadRequest, cf}, startRun)
	start.Status = http.StatusCreated
	return append([]route{
		op(http.MethodGet, "/v1/openapi.json", "", "openapi", "meta", "This document",
			"The OpenAPI 3.1 document of this API, generated from the routes it serves. Needs no key.", nil,
			func(c *call, _ struct{}) (json.RawMessage, error) { return c.api.doc, nil }),
		start,
		op(http.MethodGet, "/v1/runs", auth.RoleReader, "listRuns", "runs", "List runs",
			"The runs the caller may read, newest first, a page at a time: pass `next` as `cursor` for the next page.",
			[]int{http.StatusBadRequest}, listRuns),
		op(http.MethodGet, "/v1/runs/{id}", auth.RoleReader, "getRun", "runs", "Read a run",
			"A run as every surface shows it (the CLI's `weft status --json` is its `state`, MCP's weft_execution too): its status, usage and, per step, status, attempts, output (or its reference), usage, tool calls, durations and errors.",
			[]int{nf}, getRun),
		op(http.MethodGet, "/v1/runs/{id}/steps/{step}/inputs", auth.RoleReader, "stepInputs", "runs", "Read a step's resolved inputs",
			"The inputs the step's tool calls were made with, resolved (templates filled in), as the run's history recorded them: one per call (forEach items, agent iterations), the first `limit` of them.",
			[]int{http.StatusBadRequest, nf}, stepInputs),
		stream[runIn, events.Event]("/v1/runs/{id}/events", auth.RoleReader, "runEvents", "runs", "Follow a run's events",
			"The run's events as server-sent events, in order, from the first (or after `since`, or after the Last-Event-ID a reconnecting client sends) until the run ends. Each event's `id` is its sequence number, its `event` its type, its `data` the event as JSON. Model text (llm_delta) has no id of its own.",
			[]int{http.StatusBadRequest, nf}, runEvents),
		op(http.MethodPost, "/v1/runs/{id}/cancel", auth.RoleRunner, "cancelRun", "runs", "Cancel a run",
			"Asks the run to stop (its steps in flight are cancelled); with `force`, terminates it. Only who started the run (or an admin key) may.",
			[]int{nf, cf}, cancelRun),
		op(http.MethodPost, "/v1/runs/{id}/retry", auth.RoleRunner, "retryRun", "runs", "Retry a run",
			"Starts a new run that reuses the outputs of the steps that completed and runs the others again (from `from`, or with a corrected `definition`). Only who started the run (or an admin key) may.",
			[]int{http.StatusBadRequest, nf, cf}, retryRun),
		op(http.MethodPost, "/v1/runs/{id}/fork", auth.RoleRunner, "forkRun", "runs", "Fork a run at an agent's iteration",
			"Starts a new run that keeps what the run recorded up to `iteration` of agent step `step` and goes on from there, with `message` as the agent's next user message. Only who started the run (or an admin key) may.",
			[]int{http.StatusBadRequest, nf, cf}, forkRun),
		op(http.MethodGet, "/v1/reviews", auth.RoleReviewer, "listReviews", "reviews", "List the reviews the caller may decide",
			"The review gates waiting for a decision that the caller may decide, the longest waiting first, each with the digest to send with the decision.",
			[]int{http.StatusBadRequest}, listReviews),
		hook(),
		op(http.MethodPost, "/v1/runs/{id}/reviews", auth.RoleReviewer, "decideReview", "reviews", "Decide a review",
			"Decides one of the run's pending reviews (`review`, or `step` when that step has one, or neither when the run has one). `digest` is the digest of the review as it was shown: a decision on data that changed since is refused (409).",
			[]int{http.StatusBadRequest, nf, cf}, decideReview),
	}, append(append(workflowRoutes(), versionRoutes()...), memoryRoutes()...)...)
}

// hook is POST /v1/hooks/{name}: no key, the signature says who sent it; its body is the
// workflow's inputs as they were signed.
func hook() route {
	rt := op(http.MethodPost, "/v1/hooks/{name}", "", "startHook", "hooks", "Start the workflow bound to a hook",
		"Starts the workflow the operator bound to the hook's name, with the body (a JSON object) as its inputs, when the request is signed: X-Weft-Timestamp (Unix seconds, within 5 minutes of now) and X-Weft-Signature (sha256= and the hex HMAC-SHA256, keyed with the hook's secret, of the timestamp, \".\" and the body), as weft's own webhooks sign. The same signed request twice is refused (409). Needs no key.",
		[]int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusServiceUnavailable}, startHook)
	rt.Status, rt.RawBody = http.StatusCreated, true
	return rt
}

// runIn names a run.
type runIn struct {
	ID string `path:"id" json:"-" jsonschema:"the run's id"`
	// Since: runEvents only.
	Since int64 `query:"since" json:"-" jsonschema:"start after the event with this sequence number (a Last-Event-ID header wins over it)"`
	// Run: runEvents only.
	Run string `query:"run" json:"-" jsonschema:"the Temporal run id since counts in (a continued_as_new event's runId), for a run that continues as new"`
}

// StartRunIn starts a run.
type StartRunIn struct {
	Workflow   string         `json:"workflow,omitempty" jsonschema:"the name of one of the operator's workflows (its catalog: the workflows directory and the built-ins)"`
	Definition map[string]any `json:"definition,omitempty" jsonschema:"a workflow definition of the caller's own, instead of workflow"`
	Inputs     map[string]any `json:"inputs,omitempty" jsonschema:"the workflow's inputs, by name"`
	ID         string         `json:"id,omitempty" jsonschema:"the run's id (default: made up); the same id twice is one run"`
}

// StartRunOut is the run started (or, with an id that names one, the run that has it).
type StartRunOut struct {
	ID       string `json:"id" jsonschema:"the run's id: read it with GET /v1/runs/{id}"`
	Workflow string `json:"workflow" jsonschema:"the workflow's name"`
	Created  bool   `json:"created" jsonschema:"false when a run with the requested id existed already: this is that run"`
}

func startRun(c *call, in StartRunIn) (StartRunOut, error) {
	var w *dsl.Workflow
	source, origin := "", weftclient.OriginOperator
	switch {
	case in.Workflow != "" && in.Definition != nil:
		return StartRunOut{}, invalid("/definition", "send workflow (a name) or definition (a workflow of your own), not both")
	case in.Definition != nil:
		data, _ := json.Marshal(in.Definition)
		var err error
		if w, err = dsl.Load("definition.json", data); err != nil {
			return StartRunOut{}, definitionProblem("/definition", err)
		}
		source, origin = "http:inline", weftclient.OriginClient
	case in.Workflow != "":
		for _, e := range weftclient.Catalog(c.api.o.WorkflowsDir, !c.api.o.NoBuiltins) {
			if e.Name == in.Workflow && e.Err == nil {
				w, source = e.Workflow, "http:"+e.Name
			}
		}
		if w == nil {
			return StartRunOut{}, &Problem{Type: ProblemBase + kindNotFound.slug, Title: kindNotFound.title, Status: http.StatusNotFound,
				Detail: fmt.Sprintf("no workflow %q in the operator's catalog: ask the operator for its name (weft list)", in.Workflow),
				Errors: []FieldError{{Pointer: "/workflow", Detail: "send the name of one of the operator's workflows"}}}
		}
	default:
		return StartRunOut{}, invalid("/workflow", "send workflow (the name of one of the operator's workflows) or definition (a workflow of your own)")
	}
	if in.ID != "" {
		if err := weftclient.CheckID(in.ID); err != nil {
			return StartRunOut{}, invalid("/id", err.Error())
		}
	}
	wc, err := c.client()
	if err != nil {
		return StartRunOut{}, err
	}
	if in.ID != "" {
		if out, found, err := existing(c, wc, in.ID, w.Def.Name); found || err != nil {
			return out, err
		}
	}
	run, err := wc.Start(c.ctx, w, weftclient.StartOptions{ID: in.ID, Source: source, Inputs: in.Inputs, Origin: origin,
		StartedBy: c.starter(), Resolver: weftclient.FileResolver(c.api.o.WorkflowsDir)})
	var ar *weftclient.AlreadyRunningError
	if errors.As(err, &ar) {
		// started by a request with the same id a moment ago
		if out, found, err := existing(c, wc, in.ID, w.Def.Name); found || err != nil {
			return out, err
		}
	}
	if err != nil {
		var ie *weftclient.InvalidError
		if errors.As(err, &ie) {
			// the inputs (dsl.ResolveInputs: "input ..."), or what a client's definition may not say
			pointer := ""
			switch {
			case strings.Contains(err.Error(), "input"):
				pointer = "/inputs"
			case in.Definition != nil:
				pointer = "/definition"
			}
			return StartRunOut{}, invalid(pointer, err.Error())
		}
		return StartRunOut{}, err
	}
	c.status = http.StatusCreated
	return StartRunOut{ID: run.ID, Workflow: w.Def.Name, Created: true}, nil
}

// existing is the run with id when there is one: the caller must be able to read it, and it must
// be a run of the same workflow.
func existing(c *call, wc *weftclient.Client, id, workflow string) (StartRunOut, bool, error) {
	d, err := wc.Describe(c.ctx, id)
	var nf *weftclient.NotFoundError
	if errors.As(err, &nf) {
		return StartRunOut{}, false, nil
	}
	if err != nil {
		return StartRunOut{}, false, err
	}
	if err := wc.CheckRead(c.ctx, "run "+id, id, c.caller()); err != nil {
		return StartRunOut{}, true, err
	}
	if d.Workflow != "" && d.Workflow != workflow {
		return StartRunOut{}, true, kindConflict.problem(fmt.Sprintf("the id %q is a run of workflow %q, not %q: choose another id", id, d.Workflow, workflow),
			FieldError{Pointer: "/id", Detail: "choose an id no run of another workflow has"})
	}
	return StartRunOut{ID: id, Workflow: workflow, Created: false}, true, nil
}

// definitionProblem is a definition that does not load, one field error per diagnostic.
func definitionProblem(pointer string, err error) *Problem {
	var ds dsl.Diagnostics
	if !errors.As(err, &ds) {
		return invalid(pointer, "the definition does not load: "+err.Error())
	}
	p := kindInvalid.problem(fmt.Sprintf("the definition does not load (%d errors): fix what each error says", len(ds.Errors())))
	for _, d := range ds {
		p.Errors = append(p.Errors, FieldError{Pointer: pointer, Detail: d.String()})
	}
	return p
}

// ListRunsIn filters and pages a listing.
type ListRunsIn struct {
	Status   string `query:"status" json:"-" jsonschema:"running, awaiting_review, completed, failed, cancelled, terminated or timed_out"`
	Workflow string `query:"workflow" json:"-" jsonschema:"runs of this workflow"`
	Search   string `query:"search" json:"-" jsonschema:"runs whose id, workflow, status or starter contain every word of it"`
	Limit    int    `query:"limit" json:"-" jsonschema:"how many runs (default 20, at most 100)"`
	Cursor   string `query:"cursor" json:"-" jsonschema:"the next of the page before"`
}

// RunList is a page of runs.
type RunList struct {
	Runs []weftclient.RunSummary `json:"runs"`
	Next string                  `json:"next,omitempty" jsonschema:"pass it as cursor for the next page; absent on the last"`
}

func listRuns(c *call, in ListRunsIn) (RunList, error) {
	if in.Limit < 0 || in.Limit > MaxListLimit {
		return RunList{}, invalid("?limit", fmt.Sprintf("limit %d: send 1 to %d", in.Limit, MaxListLimit))
	}
	if err := weftclient.CheckPageToken(in.Cursor); err != nil {
		return RunList{}, invalid("?cursor", "cursor: "+err.Error())
	}
	wc, err := c.client()
	if err != nil {
		return RunList{}, err
	}
	page, err := wc.ListPage(c.ctx, weftclient.ListOptions{Status: in.Status, Workflow: in.Workflow, Search: in.Search, Limit: in.Limit, After: in.Cursor})
	if err != nil {
		if weftclient.IsInvalid(err) {
			return RunList{}, invalid("?status", err.Error())
		}
		return RunList{}, err
	}
	runs := wc.Readable(c.ctx, c.caller(), page.Runs)
	if runs == nil {
		runs = []weftclient.RunSummary{}
	}
	return RunList{Runs: runs, Next: page.Next}, nil
}

// RunView is a run as every surface shows it: weftclient.Execution, with its state as proto JSON.
type RunView struct {
	weftclient.Execution
	State *weftv1.ExecutionState `json:"state,omitempty" jsonschema:"the run's state: its plan, steps, pending reviews and output"`
}

// MarshalJSON writes the Execution as it marshals and the state as weftclient.ProtoJSON writes it
// (what `weft status --json` and MCP's weft_execution print).
func (v RunView) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(v.Execution)
	if err != nil || v.State == nil {
		return b, err
	}
	st, err := weftclient.ProtoJSON(v.State)
	if err != nil {
		return nil, err
	}
	return append(append(append(b[:len(b)-1], `,"state":`...), st...), '}'), nil
}

func getRun(c *call, in runIn) (RunView, error) {
	wc, err := c.client()
	if err != nil {
		return RunView{}, err
	}
	if err := wc.CheckRead(c.ctx, "run "+in.ID, in.ID, c.caller()); err != nil {
		return RunView{}, err
	}
	e, err := wc.Execution(c.ctx, in.ID)
	if err != nil {
		return RunView{}, err
	}
	return RunView{Execution: *e, State: e.State}, nil
}

// StepInputsIn names a step of a run.
type StepInputsIn struct {
	Run   string `path:"id" json:"-" jsonschema:"the run's id"`
	Step  string `path:"step" json:"-" jsonschema:"the step's id"`
	Limit int    `query:"limit" json:"-" jsonschema:"how many calls' inputs (default 20, at most 100)"`
}

func stepInputs(c *call, in StepInputsIn) (*weftclient.StepCalls, error) {
	if in.Limit < 0 || in.Limit > MaxListLimit {
		return nil, invalid("?limit", fmt.Sprintf("limit %d: send 1 to %d", in.Limit, MaxListLimit))
	}
	if in.Limit == 0 {
		in.Limit = 20
	}
	wc, err := c.client()
	if err != nil {
		return nil, err
	}
	if err := wc.CheckRead(c.ctx, "run "+in.Run, in.Run, c.caller()); err != nil {
		return nil, err
	}
	return wc.StepInputs(c.ctx, in.Run, in.Step, in.Limit)
}

// CancelIn cancels a run.
type CancelIn struct {
	ID    string `path:"id" json:"-" jsonschema:"the run's id"`
	Force bool   `json:"force,omitempty" jsonschema:"terminate the run after asking it to stop (it ends at once, without its own cleanup)"`
}

// CancelOut says what was done.
type CancelOut struct {
	ID              string `json:"id"`
	CancelRequested bool   `json:"cancelRequested"`
	Terminated      bool   `json:"terminated" jsonschema:"the run was terminated (force, or its workflow task kept failing)"`
	Reason          string `json:"reason,omitempty" jsonschema:"why it was terminated"`
}

func cancelRun(c *call, in CancelIn) (CancelOut, error) {
	wc, err := c.client()
	if err != nil {
		return CancelOut{}, err
	}
	terminated, err := wc.CancelRun(c.ctx, in.ID, c.who.Name+" ("+c.api.o.Surface+")", in.Force)
	if err != nil {
		return CancelOut{}, err
	}
	return CancelOut{ID: in.ID, CancelRequested: true, Terminated: terminated != "", Reason: terminated}, nil
}

// RetryIn retries a run.
type RetryIn struct {
	Run        string         `path:"id" json:"-" jsonschema:"the run to retry"`
	From       string         `json:"from,omitempty" jsonschema:"run this step and everything after it again, even when it completed"`
	Definition map[string]any `json:"definition,omitempty" jsonschema:"a corrected definition: steps whose definition changed run again"`
	ID         string         `json:"id,omitempty" jsonschema:"the new run's id (default: the run's id + -retry- + random)"`
}

// RetryOut is the new run.
type RetryOut struct {
	ID          string   `json:"id" jsonschema:"the new run"`
	ResumedFrom string   `json:"resumedFrom"`
	Reused      []string `json:"reused" jsonschema:"the steps whose outputs were reused"`
	Rerun       []string `json:"rerun" jsonschema:"the steps that run again"`
}

func retryRun(c *call, in RetryIn) (RetryOut, error) {
	o := weftclient.RetryOptions{From: in.From, ID: in.ID, StartedBy: c.starter()}
	if in.ID != "" {
		if err := weftclient.CheckID(in.ID); err != nil {
			return RetryOut{}, invalid("/id", err.Error())
		}
	}
	if in.Definition != nil {
		data, _ := json.Marshal(in.Definition)
		w, err := dsl.Load("definition.json", data)
		if err != nil {
			return RetryOut{}, definitionProblem("/definition", err)
		}
		o.Workflow, o.Origin = w, weftclient.OriginClient
	}
	wc, err := c.client()
	if err != nil {
		return RetryOut{}, err
	}
	run, plan, err := wc.Retry(c.ctx, in.Run, o)
	if err != nil {
		return RetryOut{}, err
	}
	return RetryOut{ID: run.ID, ResumedFrom: in.Run, Reused: nonNil(plan.Reused), Rerun: nonNil(plan.Rerun)}, nil
}

// ForkIn forks a run at an agent's iteration.
type ForkIn struct {
	Run       string `path:"id" json:"-" jsonschema:"the run to fork"`
	Step      string `json:"step" jsonschema:"the agent step to fork"`
	Iteration int    `json:"iteration,omitempty" jsonschema:"keep this many of the agent's model calls and go on with the next (0: from the start, the prompt replaced by message)"`
	Message   string `json:"message,omitempty" jsonschema:"a user message the agent reads next"`
	ID        string `json:"id,omitempty" jsonschema:"the new run's id (default: the run's id + -fork- + random)"`
}

// ForkOut is the new run and what it reuses.
type ForkOut struct {
	ID         string               `json:"id" jsonschema:"the new run"`
	ForkedFrom string               `json:"forkedFrom"`
	Plan       *weftclient.ForkPlan `json:"plan"`
}

func forkRun(c *call, in ForkIn) (ForkOut, error) {
	if in.Step == "" {
		return ForkOut{}, invalid("/step", "send the id of the agent step to fork")
	}
	if in.ID != "" {
		if err := weftclient.CheckID(in.ID); err != nil {
			return ForkOut{}, invalid("/id", err.Error())
		}
	}
	wc, err := c.client()
	if err != nil {
		return ForkOut{}, err
	}
	run, plan, err := wc.Fork(c.ctx, in.Run, weftclient.ForkOptions{Step: in.Step, Iteration: in.Iteration, Message: in.Message, ID: in.ID, StartedBy: c.starter()})
	if err != nil {
		return ForkOut{}, err
	}
	return ForkOut{ID: run.ID, ForkedFrom: in.Run, Plan: plan}, nil
}

// ReviewsIn bounds the listing of reviews.
type ReviewsIn struct {
	Limit int `query:"limit" json:"-" jsonschema:"read the reviews of this many executions waiting, the newest (default 100)"`
}

// ReviewList is the reviews waiting that the caller may decide.
type ReviewList struct {
	Reviews []weftclient.PendingReview `json:"reviews"`
	Cut     string                     `json:"cut,omitempty" jsonschema:"set when more executions wait than were read: how to read the others"`
}

func listReviews(c *call, in ReviewsIn) (ReviewList, error) {
	if in.Limit < 0 || in.Limit > weftclient.MaxReviewRuns {
		return ReviewList{}, invalid("?limit", fmt.Sprintf("limit %d: send 1 to %d", in.Limit, weftclient.MaxReviewRuns))
	}
	wc, err := c.client()
	if err != nil {
		return ReviewList{}, err
	}
	l, err := wc.ListPendingReviews(c.ctx, weftclient.ListOptions{Limit: in.Limit})
	if err != nil {
		return ReviewList{}, err
	}
	out := ReviewList{Reviews: []weftclient.PendingReview{}}
	for _, r := range weftclient.ReadableReviews(c.caller(), l.Reviews) {
		if weftclient.MayDecide(c.caller(), r.Review) {
			out.Reviews = append(out.Reviews, r)
		}
	}
	out.Cut = l.Cut(len(out.Reviews), "")
	return out, nil
}

// DecideIn decides a review.
type DecideIn struct {
	Run      string `path:"id" json:"-" jsonschema:"the run the review waits in (a review's in.id)"`
	Review   string `json:"review,omitempty" jsonschema:"the review's id (review.id); may be left out when the step, or the run, has one pending"`
	Step     string `json:"step,omitempty" jsonschema:"the review's step, instead of review"`
	Decision string `json:"decision" jsonschema:"approve, edit (with data) or reject"`
	Data     any    `json:"data,omitempty" jsonschema:"edit: what replaces the proposal"`
	Comment  string `json:"comment,omitempty" jsonschema:"why, for the run's record"`
	Digest   string `json:"digest" jsonschema:"the review's digest as it was shown (review.digest): refused when its data changed since"`
	Scope    string `json:"scope,omitempty" jsonschema:"run: an approve or reject of an agent's tool call that also decides the later calls of that tool in the run, without waiting (approve always, reject always)" weft:"enum=run"`
	Reviewer string `json:"reviewer,omitempty" jsonschema:"a name recorded as who decided, for the operator on this machine (a console without login); ignored for a key or a login, whose name is recorded"`
}

func decideReview(c *call, in DecideIn) (*weftv1.ReviewDecision, error) {
	var errs []FieldError
	if in.Decision == "" {
		errs = append(errs, FieldError{Pointer: "/decision", Detail: "send approve, edit (with data) or reject"})
	}
	if in.Digest == "" {
		errs = append(errs, FieldError{Pointer: "/digest", Detail: "send the digest of the review as you showed it (review.digest in GET /v1/reviews or the run's state.pendingReviews)"})
	}
	if len(errs) > 0 {
		return nil, kindInvalid.problem("the decision is missing fields: see errors", errs...)
	}
	d := weftclient.Decision{ID: in.Review, Step: in.Step, Decision: in.Decision, Data: in.Data, Comment: in.Comment, Digest: in.Digest, Scope: in.Scope, By: c.caller()}
	if !c.authed {
		d.Reviewer = c.who.Name // the operator: a label, as weft review --reviewer
		if r := strings.TrimSpace(in.Reviewer); r != "" {
			d.Reviewer = r
		}
	}
	if err := d.Check(); err != nil {
		return nil, invalid("/decision", err.Error())
	}
	wc, err := c.client()
	if err != nil {
		return nil, err
	}
	if err := wc.CheckRead(c.ctx, "run "+in.Run, in.Run, c.caller()); err != nil {
		return nil, err
	}
	return wc.Review(c.ctx, in.Run, d)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
