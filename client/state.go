package client

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/weftworks/weft/internal/fuzzy"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// State asks a run for its ExecutionState. Pending reviews of the run's child workflows
// (workflow steps, agents' workflow tools) are listed with it, each naming its execution_id.
func (c *Client) State(ctx context.Context, id string) (*weftv1.ExecutionState, error) {
	st, err := c.ownState(ctx, id)
	if err != nil {
		return nil, err
	}
	c.addChildReviews(ctx, st, 0)
	return st, nil
}

func (c *Client) ownState(ctx context.Context, id string) (*weftv1.ExecutionState, error) {
	v, err := c.query(ctx, id, runwire.QueryState)
	if err != nil {
		if isNotFound(err) {
			return nil, c.notFound(ctx, id)
		}
		return nil, c.noAnswer(ctx, id, err)
	}
	var st weftv1.ExecutionState
	if err := v.Get(&st); err != nil {
		return nil, decodeError(id, "its state", err)
	}
	for _, r := range st.PendingReviews {
		if r.ExecutionId == "" {
			r.ExecutionId = id
		}
	}
	return &st, nil
}

// addChildReviews lists the pending reviews of running child workflows under the parent.
func (c *Client) addChildReviews(ctx context.Context, st *weftv1.ExecutionState, depth int) {
	if depth > 4 {
		return
	}
	for _, s := range st.Steps {
		if s.ChildId == "" || (s.Status != runwire.StatusRunning && s.Status != runwire.StatusAwaitingReview) {
			continue
		}
		child, err := c.ownState(ctx, s.ChildId)
		if err != nil {
			continue
		}
		c.addChildReviews(ctx, child, depth+1)
		st.PendingReviews = append(st.PendingReviews, child.PendingReviews...)
		if len(child.PendingReviews) > 0 && st.Status == runwire.StatusRunning {
			st.Status = runwire.StatusAwaitingReview
		}
	}
}

// Description is what Temporal knows of a run without asking its workflow code.
type Description struct {
	ID       string
	Workflow string
	Status   string // running, completed, failed, cancelled, terminated, timed_out, ...
	Weft     string // WeftStatus
	Started  time.Time
	Closed   time.Time
	// Ended says why a terminated or timed-out run ended (nil otherwise).
	Ended *EndedError
	// CancelledBy is the identity that asked a cancelled run to stop, when history records one.
	CancelledBy string
	// Pending are the activities in flight; LLMText picks the partial text of running llm
	// activities (their heartbeat details) out of them.
	Pending []PendingActivity
	// TaskAttempt is the attempt of the run's pending workflow task (0: none pending); over 1,
	// the tasks before it failed or timed out.
	TaskAttempt int32
	// TaskQueue is the queue the run is on; Program the Go program it needs (MemoProgram), "" for
	// a run any weft worker runs.
	TaskQueue, Program string
}

// PendingActivity is an activity in flight.
type PendingActivity struct {
	ActivityID string
	Type       string
	Attempt    int32
	Details    string // the last heartbeat details (llm: the text so far)
}

// Describe returns a run's Temporal status.
func (c *Client) Describe(ctx context.Context, id string) (*Description, error) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	d, err := c.t.DescribeWorkflowExecution(dctx, id, "")
	if err != nil {
		if isNotFound(err) {
			return nil, c.notFound(ctx, id)
		}
		return nil, fmt.Errorf("describing %s: %w", id, err)
	}
	info := d.GetWorkflowExecutionInfo()
	out := &Description{ID: id, Status: StatusName(info.GetStatus()), Started: info.GetStartTime().AsTime()}
	if info.GetCloseTime() != nil {
		out.Closed = info.GetCloseTime().AsTime()
	}
	if p, ok := info.GetMemo().GetFields()[runwire.MemoWorkflow]; ok {
		_ = c.converter().FromPayload(p, &out.Workflow)
	}
	if p, ok := info.GetMemo().GetFields()[MemoProgram]; ok {
		_ = c.converter().FromPayload(p, &out.Program)
	}
	out.TaskQueue = d.GetExecutionConfig().GetTaskQueue().GetName()
	// Memos and heartbeat details go through the connection's codec; search attributes never do
	// (the server indexes them), so they are read with the default converter.
	if p, ok := info.GetSearchAttributes().GetIndexedFields()[runwire.StatusAttribute.GetName()]; ok {
		_ = converter.GetDefaultDataConverter().FromPayload(p, &out.Weft)
	}
	if out.Status == "terminated" || out.Status == "timed_out" {
		out.Ended = c.ended(ctx, id)
	}
	if out.Status == "cancelled" {
		out.CancelledBy = c.CancelledBy(ctx, id)
	}
	out.TaskAttempt = d.GetPendingWorkflowTask().GetAttempt()
	for _, pa := range d.GetPendingActivities() {
		a := PendingActivity{ActivityID: pa.GetActivityId(), Type: pa.GetActivityType().GetName(), Attempt: pa.GetAttempt()}
		if hd := pa.GetHeartbeatDetails(); hd != nil && len(hd.GetPayloads()) > 0 {
			_ = c.converter().FromPayload(hd.GetPayloads()[0], &a.Details)
		}
		out.Pending = append(out.Pending, a)
	}
	return out, nil
}

// CancelledBy returns who asked run id to stop (the client identity recorded with the
// cancellation request, or the parent run's id when a parent cancelled it); "" when unknown.
func (c *Client) CancelledBy(ctx context.Context, id string) string {
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	it := c.t.GetWorkflowHistory(hctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return ""
		}
		if a := ev.GetWorkflowExecutionCancelRequestedEventAttributes(); a != nil {
			if a.GetIdentity() != "" {
				return a.GetIdentity()
			}
			if p := a.GetExternalWorkflowExecution().GetWorkflowId(); p != "" {
				return "run " + p
			}
			return ""
		}
	}
	return ""
}

// StatusName turns WORKFLOW_EXECUTION_STATUS_COMPLETED into "completed".
func StatusName(s enums.WorkflowExecutionStatus) string {
	n := strings.ToLower(strings.TrimPrefix(s.String(), "WORKFLOW_EXECUTION_STATUS_"))
	if n == "canceled" {
		return "cancelled"
	}
	return n
}

// notFound builds a NotFoundError naming recent runs whose id looks like id, among those ctx's
// caller may read (Caller, Readable): a near miss never names another identity's run.
func (c *Client) notFound(ctx context.Context, id string) error {
	e := &NotFoundError{ID: id}
	if ctx.Value(suggestingKey{}) != nil {
		return e // Readable asking a listed run that has gone since: no suggestions of suggestions
	}
	ctx = context.WithValue(ctx, suggestingKey{}, true)
	runs, err := c.List(ctx, ListOptions{Limit: 200})
	if err != nil {
		return e
	}
	type cand struct {
		r RunSummary
		d int
	}
	var cands []cand
	for _, r := range runs {
		d := fuzzy.Distance(strings.ToLower(id), strings.ToLower(r.ID))
		if strings.Contains(r.ID, id) || strings.Contains(id, r.ID) || d <= max(2, len(id)/4) {
			cands = append(cands, cand{r, d})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].d < cands[j].d })
	near := make([]RunSummary, len(cands))
	for i, cd := range cands {
		near[i] = cd.r
	}
	for _, r := range c.Readable(ctx, Caller(ctx), near) {
		if len(e.Near) == 3 {
			break
		}
		e.Near = append(e.Near, r.ID)
	}
	return e
}

type suggestingKey struct{}

// RunSummary is one line of a run listing.
type RunSummary struct {
	ID       string    `json:"id"`
	Workflow string    `json:"workflow"`
	Status   string    `json:"status"`
	Weft     string    `json:"weftStatus,omitempty"`
	Started  time.Time `json:"started"`
	Closed   time.Time `json:"closed,omitzero"`
	// StartedBy is the identity that started the run (its memo; "" : nobody authenticated, or a
	// run started before weft recorded it, or a child run: see Client.Readable).
	StartedBy string `json:"startedBy,omitempty"`
	parent    string // a child run's parent (memo)
}

// ListOptions filter a listing.
type ListOptions struct {
	// AwaitingReview keeps running runs waiting for a decision.
	AwaitingReview bool
	// Status keeps runs in this state: running, completed, failed, cancelled, terminated,
	// timed_out, or awaiting_review (the same as AwaitingReview).
	Status string
	// Workflow keeps runs of the named workflow.
	Workflow string
	// Limit (default 20, at most 1000).
	Limit int
	// Search keeps runs whose id, workflow, status or starter contain every word of it (any case).
	Search string
	// After is a page token (ListPage's Next, PageToken): list the runs after that one.
	After string

	cursor *pageCursor // After, decoded
}

// temporalStatus maps weft's status names to the ExecutionStatus values of visibility queries.
var temporalStatus = map[string]string{
	"running": "Running", "completed": "Completed", "failed": "Failed", "cancelled": "Canceled",
	"terminated": "Terminated", "timed_out": "TimedOut", "continued_as_new": "ContinuedAsNew",
}

// List lists weft runs, newest start time first, whatever their status.
//
// Visibility lists running runs first and closed runs by close time, so the newest runs are not
// simply the first page: List reads the running runs and the closed runs separately and merges
// them. Closed runs come newest close first; a run closes after it starts, so once a closed run
// closed before the Limit-th newest start seen so far, no later one can make the cut.
func (c *Client) List(ctx context.Context, o ListOptions) ([]RunSummary, error) {
	if o.Limit <= 0 {
		o.Limit = 20
	}
	o.Limit = min(o.Limit, 1000)
	q := fmt.Sprintf("WorkflowType = %q", runwire.WorkflowType)
	if o.Status == runwire.StatusAwaitingReview {
		o.AwaitingReview = true
	} else if o.Status != "" {
		ts, ok := temporalStatus[o.Status]
		if !ok {
			return nil, &InvalidError{Err: fmt.Errorf("status %q: use one of running, awaiting_review, completed, failed, cancelled, terminated, timed_out", o.Status)}
		}
		q += fmt.Sprintf(" AND ExecutionStatus = %q", ts)
	}
	if o.AwaitingReview {
		q += fmt.Sprintf(` AND ExecutionStatus = "Running" AND %s = %q`, runwire.StatusAttribute.GetName(), runwire.StatusAwaitingReview)
	}
	cur, err := parsePageToken(o.After)
	if err != nil {
		return nil, err
	}
	if o.cursor = cur; cur != nil {
		q += cur.query()
	}
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var out []RunSummary
	switch {
	case o.Status == "running" || o.AwaitingReview:
		// Running runs are listed newest start first.
		runs, err := c.listQuery(lctx, q, o, false, nil)
		if err != nil {
			return nil, err
		}
		out = runs
	case o.Status != "":
		runs, err := c.listQuery(lctx, q, o, true, nil)
		if err != nil {
			return nil, err
		}
		out = runs
	default:
		running, err := c.listQuery(lctx, q+` AND ExecutionStatus = "Running"`, o, false, nil)
		if err != nil {
			return nil, err
		}
		closed, err := c.listQuery(lctx, q+` AND ExecutionStatus != "Running"`, o, true, running)
		if err != nil {
			return nil, err
		}
		out = append(running, closed...)
	}
	sortNewestFirst(out)
	if len(out) > o.Limit {
		out = out[:o.Limit]
	}
	if out == nil {
		out = []RunSummary{}
	}
	return out, nil
}

// sortNewestFirst orders runs by start time, newest first (ties: by id, for a stable listing).
func sortNewestFirst(runs []RunSummary) {
	sort.SliceStable(runs, func(i, j int) bool {
		if !runs[i].Started.Equal(runs[j].Started) {
			return runs[i].Started.After(runs[j].Started)
		}
		return runs[i].ID < runs[j].ID
	})
}

// listQuery reads the runs q matches. Without closed, it reads at most o.Limit of them. With
// closed, q lists closed runs (newest close first) and reading stops as soon as no further run can
// be among the o.Limit newest starts of others and the runs read so far.
func (c *Client) listQuery(ctx context.Context, q string, o ListOptions, closed bool, others []RunSummary) ([]RunSummary, error) {
	var out []RunSummary
	var token []byte
	merging := closed
	// cutoff is the Limit-th newest start among others and out (zero while there are fewer).
	cutoff := func() time.Time {
		all := append(append([]RunSummary(nil), others...), out...)
		if len(all) < o.Limit {
			return time.Time{}
		}
		sortNewestFirst(all)
		return all[o.Limit-1].Started
	}
	for {
		resp, err := c.t.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q, PageSize: int32(min(o.Limit, 100)), NextPageToken: token})
		if err != nil {
			return nil, fmt.Errorf("listing runs (%s): %w", q, err)
		}
		for _, e := range resp.GetExecutions() {
			r := c.summary(e)
			if merging {
				if cut := cutoff(); !cut.IsZero() && !r.Closed.IsZero() && r.Closed.Before(cut) {
					return out, nil
				}
			}
			if !o.matches(r, o.cursor) {
				continue
			}
			out = append(out, r)
			if !merging && len(out) >= o.Limit {
				return out, nil
			}
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			return out, nil
		}
	}
}

// summary reads one line of a listing out of what Temporal knows of an execution.
func (c *Client) summary(e *workflowpb.WorkflowExecutionInfo) RunSummary {
	r := RunSummary{ID: e.GetExecution().GetWorkflowId(), Status: StatusName(e.GetStatus()), Started: e.GetStartTime().AsTime()}
	if e.GetCloseTime() != nil {
		r.Closed = e.GetCloseTime().AsTime()
	}
	if p, ok := e.GetMemo().GetFields()[runwire.MemoWorkflow]; ok {
		_ = c.converter().FromPayload(p, &r.Workflow)
	}
	c.readMemo(e, &r)
	// Search attributes are never encoded by the codec (the server indexes them).
	if p, ok := e.GetSearchAttributes().GetIndexedFields()[runwire.StatusAttribute.GetName()]; ok {
		_ = converter.GetDefaultDataConverter().FromPayload(p, &r.Weft)
	}
	return r
}

// readMemo reads who started a run and its parent out of its memo.
func (c *Client) readMemo(e *workflowpb.WorkflowExecutionInfo, r *RunSummary) {
	if p, ok := e.GetMemo().GetFields()[MemoStartedBy]; ok {
		_ = c.converter().FromPayload(p, &r.StartedBy)
	}
	if p, ok := e.GetMemo().GetFields()[runwire.MemoParent]; ok {
		_ = c.converter().FromPayload(p, &r.parent)
	}
}

// StuckTaskAttempts is the attempt of a run's workflow task from which Cancel takes the run for
// stuck: its tasks failed (or timed out) that many times in a row less one, so a cancel, which
// only a workflow task can deliver, would never be. A worker restarted mid-task costs one attempt.
const StuckTaskAttempts = 3

// Cancel asks a running run to stop: steps in flight are cancelled, finished steps keep their
// results. by names who asks (an MCP key's or console login's name, the CLI's user): history
// records it and weft status shows it. A run that has already ended gives *FinishedError; one
// ctx's caller may not act on (CheckAct) gives *RefusedError. A run whose workflow task keeps
// failing is terminated (CancelRun).
func (c *Client) Cancel(ctx context.Context, id, by string) error {
	_, err := c.CancelRun(ctx, id, by, false)
	return err
}

// CancelRun is Cancel that says how the run was stopped: when its workflow task has reached
// StuckTaskAttempts, or with force, the cancellation is recorded and the run is then terminated
// (it ends at once; nothing of its own cleanup runs), and terminated is the reason history
// records. "" when only a cancellation was requested.
func (c *Client) CancelRun(ctx context.Context, id, by string, force bool) (terminated string, err error) {
	if err := c.CheckAct(ctx, "cancel", "run "+id, id); err != nil {
		return "", err
	}
	d, err := c.Describe(ctx, id)
	if err != nil {
		return "", err
	}
	if d.Status != "running" {
		return "", &FinishedError{ID: id, Status: d.Status, What: "cancel"}
	}
	// With a known namespace the request goes to the service directly so that history records
	// who asked (the SDK's CancelWorkflow sends the process's identity, pid@host): weft status
	// and the Web UI show it.
	direct := c.namespace != "" && by != ""
	if !direct {
		err = c.t.CancelWorkflow(ctx, id, "")
	} else {
		_, err = c.t.WorkflowService().RequestCancelWorkflowExecution(ctx, &workflowservice.RequestCancelWorkflowExecutionRequest{
			Namespace:         c.namespace,
			WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: id},
			Identity:          by,
			RequestId:         uuid.NewString(),
			Reason:            "cancel requested by " + by,
		})
	}
	if err != nil {
		return "", fmt.Errorf("cancelling %s: %w", id, err)
	}
	switch {
	case force:
		terminated = "cancel forced by " + by
	case d.TaskAttempt >= StuckTaskAttempts:
		terminated = fmt.Sprintf("cancelled by %s, terminated: its workflow task has failed %d times in a row, so the cancel could not be delivered (the worker's log says why)", by, d.TaskAttempt-1)
	default:
		return "", nil
	}
	if !direct {
		err = c.t.TerminateWorkflow(ctx, id, "", terminated)
	} else {
		_, err = c.t.WorkflowService().TerminateWorkflowExecution(ctx, &workflowservice.TerminateWorkflowExecutionRequest{
			Namespace:         c.namespace,
			WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: id},
			Identity:          by,
			Reason:            terminated,
		})
	}
	if err != nil {
		return "", fmt.Errorf("terminating %s (%s): %w", id, terminated, err)
	}
	return terminated, nil
}

// noAnswer says why run id did not answer its state query (err): no worker polls its task queue.
// A run that needs a Go program's own tools says which program, which queue, and what to do.
func (c *Client) noAnswer(ctx context.Context, id string, err error) error {
	queue, program := c.taskQueue, ""
	if d, derr := c.Describe(ctx, id); derr == nil {
		if d.TaskQueue != "" {
			queue = d.TaskQueue
		}
		program = d.Program
	}
	if program != "" {
		return fmt.Errorf("run %s: the state query failed: the run uses the Go tools of the program %s, which only that program's worker runs (task queue %s); it waits until %s runs again (weft.Start): %w", id, program, queue, program, err)
	}
	return fmt.Errorf("run %s: the state query failed (is a weft worker running on task queue %s?): %w", id, queue, err)
}
