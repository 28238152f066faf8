package client

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/types/known/structpb"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
)

// RetryOptions say how to resume a run.
type RetryOptions struct {
	// From runs this step and everything after it again, even when it had completed.
	From string
	// Workflow is a corrected definition (nil: the run's own). Steps whose definition changed run
	// again, with everything downstream of them.
	Workflow *dsl.Workflow
	// ID of the new run (default: the old id + "-retry-" + random).
	ID string
	// Origin of the corrected Workflow (OriginClient when a client sent it) and the authenticated
	// identity retrying. The new run keeps the old run's origin when that was a client's: a retry
	// never makes a client's definition the operator's.
	Origin    string
	StartedBy string
}

// downstream adds to again every step that depends, directly or not, on one in it.
func downstream(w *dsl.Workflow, again map[string]bool) {
	for changed := true; changed; {
		changed = false
		for _, cs := range w.Steps {
			if again[cs.ID] {
				continue
			}
			for _, dep := range cs.Deps {
				if again[dep] {
					again[cs.ID], changed = true, true
					break
				}
			}
		}
	}
}

// leadsTo reports whether a step in set depends, directly or not, on step id.
func leadsTo(w *dsl.Workflow, id string, set map[string]bool) bool {
	after := map[string]bool{id: true}
	downstream(w, after)
	for s := range after {
		if s != id && set[s] {
			return true
		}
	}
	return false
}

// RetryPlan says what a retry reuses and what it runs again.
type RetryPlan struct {
	Reused []string `json:"reused"`
	Rerun  []string `json:"rerun"`
}

// Retryable reports whether Retry resumes a run in status (RunInfo.Status): one that ended
// failed, cancelled, terminated or timed out.
func Retryable(status string) bool {
	switch status {
	case "failed", "cancelled", "terminated", "timed_out":
		return true
	}
	return false
}

// Retry starts a new run that takes over the outputs of the steps a failed or cancelled run
// completed and runs the rest: the failed step, the steps after it, and those a corrected
// definition changes. The new run records which run it resumes. Temporal's own reset remains
// available for those who prefer replaying the same execution. Only who may act on the run
// retries it (CheckAct: its starter, an admin, the operator).
func (c *Client) Retry(ctx context.Context, runID string, o RetryOptions) (*Run, *RetryPlan, error) {
	if err := c.CheckAct(ctx, "retry", "run "+runID, runID); err != nil {
		return nil, nil, err
	}
	d, err := c.Describe(ctx, runID)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case Retryable(d.Status):
	case d.Status == "running":
		return nil, nil, &InvalidError{Err: fmt.Errorf("run %s is still running: cancel it first (weft cancel %s), or wait for it to fail", runID, runID)}
	default:
		return nil, nil, &InvalidError{Err: fmt.Errorf("run %s %s: there is nothing to resume; start a new one with weft run", runID, pastTense(d.Status))}
	}
	old, err := c.startRequest(ctx, runID)
	if err != nil {
		return nil, nil, err
	}
	st, err := c.ownState(ctx, runID)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the outputs of %s (a worker must be running to answer for a closed run): %w", runID, err)
	}
	oldW, err := runwire.RequestWorkflow(old)
	if err != nil {
		return nil, nil, fmt.Errorf("the run's own definition: %w", err)
	}
	oldDef := oldW.Def
	w := o.Workflow
	if w == nil {
		w = oldW
	}
	if o.From != "" {
		if _, ok := w.Step(o.From); !ok {
			return nil, nil, &InvalidError{Err: fmt.Errorf("--from %q: the workflow has no such step", o.From)}
		}
	}
	completed := completedOutputs(st)
	oldSteps := map[string]dsl.Step{}
	for _, s := range oldDef.Steps {
		oldSteps[s.ID] = s
	}
	// Steps that must run again: not completed, changed, --from; then everything downstream.
	again := map[string]bool{}
	for _, cs := range w.Steps {
		prev, existed := oldSteps[cs.ID]
		if completed[cs.ID] == nil || !existed || !reflect.DeepEqual(canonicalStep(prev), canonicalStep(*cs.Step)) || cs.ID == o.From {
			again[cs.ID] = true
		}
	}
	downstream(w, again)
	if o.Workflow != nil {
		// An approval is bound to what it let through: under a corrected definition, a review
		// (or an agent's approved tool calls) with a changed step after it is asked again.
		for _, cs := range w.Steps {
			if !again[cs.ID] && cs.MayWait() && leadsTo(w, cs.ID, again) {
				again[cs.ID] = true
			}
		}
		downstream(w, again)
	}
	plan := &RetryPlan{}
	var reuse map[string]*structpb.Value
	plan.Reused, plan.Rerun, reuse = splitPlan(w, again, completed)
	run, err := c.startAgain(ctx, runID, old, w, reuse, restart{ID: o.ID, Origin: o.Origin, StartedBy: o.StartedBy, Suffix: "retry"})
	if err != nil {
		return nil, nil, err
	}
	return run, plan, nil
}

// completedOutputs are the outputs a run recorded whole, by step: what a restart may reuse.
func completedOutputs(st *weftv1.ExecutionState) map[string]*structpb.Value {
	out := map[string]*structpb.Value{}
	for _, s := range st.Steps {
		if s.Status == runwire.StatusCompleted && !s.OutputTruncated && s.Output != nil {
			out[s.Id] = s.Output
		}
	}
	return out
}

// splitPlan divides w's steps for a restart: those in again, or with no completed output, run;
// the others are reused with their outputs (reused sorted, rerun in the file's order).
func splitPlan(w *dsl.Workflow, again map[string]bool, completed map[string]*structpb.Value) (reused, rerun []string, reuse map[string]*structpb.Value) {
	reused, rerun, reuse = []string{}, []string{}, map[string]*structpb.Value{}
	for _, cs := range w.Steps {
		if again[cs.ID] || completed[cs.ID] == nil {
			rerun = append(rerun, cs.ID)
			continue
		}
		reused = append(reused, cs.ID)
		reuse[cs.ID] = completed[cs.ID]
	}
	sort.Strings(reused)
	return reused, rerun, reuse
}

// restart is who starts a run again from an old one (weft retry, weft fork), and its id.
type restart struct {
	ID, Origin, StartedBy string
	// Suffix names the kind of restart in the default id: RUN-SUFFIX-RANDOM.
	Suffix string
	// Recorded are a replay's recorded agent tool calls (RunRequest.recorded_calls).
	Recorded map[string]*weftv1.RecordedCalls
}

// startAgain starts w as a new run of the old run's request: its inputs, defaults, workflows,
// the reused outputs. The new run keeps the old run's origin unless a client restarts it (a
// restart never makes a client's definition the operator's), and a client-origin definition is
// checked as any client's is (no processes, no addresses: CheckClientDefinition, CheckClientNotify).
func (c *Client) startAgain(ctx context.Context, runID string, old *weftv1.RunRequest, w *dsl.Workflow, reuse map[string]*structpb.Value, o restart) (*Run, error) {
	req, err := runwire.NewRequest(w, old.Source, old.GetInputs().AsMap(), old.GetDefaults().AsMap())
	if err != nil {
		return nil, &InvalidError{Err: err}
	}
	req.Workflows, req.WorkflowFiles, req.Reuse, req.ResumedFrom = old.Workflows, old.WorkflowFiles, reuse, runID
	req.RecordedCalls = o.Recorded
	req.Origin, req.StartedBy = old.GetOrigin(), o.StartedBy
	if o.Origin != OriginOperator {
		req.Origin = o.Origin
	}
	if req.Origin == OriginClient {
		if err := dsl.CheckClientDefinition(w.Def); err != nil {
			return nil, &InvalidError{Err: err}
		}
		if err := dsl.CheckClientNotify(w.Def); err != nil {
			return nil, &InvalidError{Err: err}
		}
	}
	id := o.ID
	if id == "" {
		id = fmt.Sprintf("%s-%s-%s", runID, o.Suffix, NewRunID("x")[len("weft-x-"):])
	} else if err := CheckID(id); err != nil {
		return nil, err
	}
	return c.StartRequest(ctx, w.Def.Name, id, req)
}

// startRequest reads the RunRequest a run was started with, from its first history event.
func (c *Client) startRequest(ctx context.Context, runID string) (*weftv1.RunRequest, error) {
	a, found, err := c.startEvent(ctx, runID)
	if !found {
		return nil, fmt.Errorf("run %s has no history", runID)
	}
	if err != nil {
		if isNotFound(err) {
			return nil, c.notFound(ctx, runID)
		}
		return nil, fmt.Errorf("reading the history of %s: %w", runID, err)
	}
	if a == nil || len(a.GetInput().GetPayloads()) == 0 {
		return nil, fmt.Errorf("run %s: no start request in its history", runID)
	}
	if a.GetWorkflowType().GetName() != runwire.WorkflowType {
		return nil, &InvalidError{Err: fmt.Errorf("run %s is a %s, not a weft workflow run", runID, a.GetWorkflowType().GetName())}
	}
	var req weftv1.RunRequest
	if err := c.converter().FromPayload(a.GetInput().GetPayloads()[0], &req); err != nil {
		return nil, fmt.Errorf("run %s: reading its start request: %w", runID, err)
	}
	return &req, nil
}

// startEvent is the first event of run id's history, which holds its start request; found is
// false when the history has no events.
func (c *Client) startEvent(ctx context.Context, id string) (a *historypb.WorkflowExecutionStartedEventAttributes, found bool, err error) {
	it := c.t.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	if !it.HasNext() {
		return nil, false, nil
	}
	ev, err := it.Next()
	if err != nil {
		return nil, true, err
	}
	return ev.GetWorkflowExecutionStartedEventAttributes(), true, nil
}

// canonicalStep is a step as JSON values, for comparing definitions.
func canonicalStep(s dsl.Step) any {
	b, _ := json.Marshal(s)
	var v any
	_ = json.Unmarshal(b, &v)
	return v
}
