package client

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weftworks/weft/activities/toolspec"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
)

// Recording is what a completed run recorded, which a replay (ReplayRecording) runs again: its
// start request (definition, inputs), its own definition compiled, and its state (each step's
// output, each agent tool call's result).
type Recording struct {
	ID       string
	Request  *weftv1.RunRequest
	Workflow *dsl.Workflow
	State    *weftv1.ExecutionState
}

// Recording reads what run id recorded, for a replay: its start request and its steps as its
// result holds them (its history; the state query when the result has none). Only a run that
// completed is a record: a failed or running one lacks the outputs a replay takes. Who may read
// the run reads it (CheckRead).
func (c *Client) Recording(ctx context.Context, id string) (*Recording, error) {
	if err := c.CheckRead(ctx, "run "+id, id, Caller(ctx)); err != nil {
		return nil, err
	}
	d, err := c.Describe(ctx, id)
	if err != nil {
		return nil, err
	}
	if d.Status != RunCompleted {
		return nil, &InvalidError{Err: fmt.Errorf("run %s %s: a replay takes its outputs and tool results from a run that completed; pick one that did (weft runs --status completed)", id, pastTense(d.Status))}
	}
	req, err := c.startRequest(ctx, id)
	if err != nil {
		return nil, err
	}
	// The run's result holds its steps as they ended (outputs, tool calls): read from its
	// history, no worker needs to answer a query for it.
	st := &weftv1.ExecutionState{}
	if res, rerr := c.Result(ctx, id); rerr == nil && len(res.GetSteps()) > 0 {
		st.Workflow, st.Steps, st.Status = res.GetWorkflow(), res.GetSteps(), RunCompleted
	} else if st, err = c.ownState(ctx, id); err != nil {
		return nil, fmt.Errorf("reading the recorded outputs of %s (a worker must be running to answer for a closed run): %w", id, err)
	}
	w, err := runwire.RequestWorkflow(req)
	if err != nil {
		return nil, fmt.Errorf("run %s: its own definition: %w", id, err)
	}
	return &Recording{ID: id, Request: req, Workflow: w, State: st}, nil
}

// runSpec is the declaration of the tool step cs runs: a loop's step's, else its own.
func runSpec(cs *dsl.CompiledStep) *toolspec.Spec {
	if ns := cs.Nested(); ns != nil && ns.Spec != nil {
		return ns.Spec
	}
	return cs.Spec
}

// ModelStep says whether a replay runs step cs for real against the model: a tool of the
// generate domain (llm, generate, an agent: its model turns; its tool calls come from the
// record), or a loop over one.
func ModelStep(cs *dsl.CompiledStep) bool {
	spec := runSpec(cs)
	return spec != nil && (spec.Domain == "generate" || spec.ModelCall || spec.Kind == toolspec.KindAgent)
}

// agentStep says whether step cs is an agent, or a loop over one.
func agentStep(cs *dsl.CompiledStep) bool {
	spec := runSpec(cs)
	return spec != nil && spec.Kind == toolspec.KindAgent
}

// computedStep says whether step cs's output is a function of its inputs alone (an inline
// tool: merge, filter, transform, template...; a pure one: chunk, estimate): a replay computes
// it again, so the steps after a model step see the new answer.
func computedStep(cs *dsl.CompiledStep) bool {
	spec := runSpec(cs)
	return spec != nil && (spec.Kind == toolspec.KindInline || spec.Pure)
}

// ReplayOptions say what a replay changes.
type ReplayOptions struct {
	// Workflow is the definition to replay (a changed prompt; nil: the recorded run's own). Its
	// steps are matched with the record's by id.
	Workflow *dsl.Workflow
	// Model, when set, is the model of every llm and agent step (a loop's too).
	Model string
	// ID of the new run (default: the recorded id + "-replay-" + random); Origin and StartedBy
	// as in RetryOptions.
	ID        string
	Origin    string
	StartedBy string
}

// ReplayStep is where a replay takes one step from.
type ReplayStep struct {
	ID string `json:"id"`
	// Live: the step runs (false: its recorded output is taken).
	Live bool `json:"live"`
	// Why it runs: a model step, computed from its inputs, its definition changed, the record
	// has no output for it.
	Why string `json:"why,omitempty"`
	// Above are the model steps a step taken from the record depends on, directly or not
	// (sorted): when one of them answers differently, the recorded output may be stale.
	Above []string `json:"above,omitempty"`
}

// Why a replay runs a step.
const (
	ReplayModel      = "a model step"
	ReplayComputed   = "computed from its inputs"
	ReplayChanged    = "its definition changed"
	ReplayUnrecorded = "the record has no output for it"
)

// ReplayPlan says what a replay runs and what it takes from the record.
type ReplayPlan struct {
	From  string       `json:"from"`
	Model string       `json:"model,omitempty"`
	Steps []ReplayStep `json:"steps"`
	// Calls is how many recorded agent tool calls the replay may answer from.
	Calls int `json:"calls"`
}

// ReplayRecording starts a new run of rec's definition (or o.Workflow) with rec's inputs in
// which the model steps run for real (with o.Model) and everything else comes from the record:
// every other step's recorded output (steps computed from their inputs alone are computed again),
// and every agent tool call's recorded result, by tool and canonical arguments
// (RunRequest.recorded_calls). A tool call the record does not hold is not run: it fails as
// runwire.ToolDrift, which the model reads as the tool's error. A step the record has no output
// for (skipped then, new) runs live, and the plan says so. Only who may act on the run replays it.
func (c *Client) ReplayRecording(ctx context.Context, rec *Recording, o ReplayOptions) (*Run, *ReplayPlan, error) {
	if err := c.CheckAct(ctx, "replay", "run "+rec.ID, rec.ID); err != nil {
		return nil, nil, err
	}
	w := o.Workflow
	if w == nil {
		w = rec.Workflow
	}
	if o.Model != "" {
		var err error
		if w, err = withModel(w, o.Model); err != nil {
			return nil, nil, err
		}
	}
	plan, reuse, calls := replayPlan(rec, w)
	plan.Model = o.Model
	run, err := c.startAgain(ctx, rec.ID, rec.Request, w, reuse, restart{ID: o.ID, Origin: o.Origin, StartedBy: o.StartedBy, Suffix: "replay", Recorded: calls})
	if err != nil {
		return nil, nil, err
	}
	return run, plan, nil
}

// replayPlan is where a replay of rec with w takes each step from: the outputs it reuses, and
// the recorded tool calls of each model step (an agent's; every model step has an entry).
func replayPlan(rec *Recording, w *dsl.Workflow) (plan *ReplayPlan, reuse map[string]*structpb.Value, calls map[string]*weftv1.RecordedCalls) {
	completed := completedOutputs(rec.State)
	recordedSteps := map[string]dsl.Step{}
	for _, cs := range rec.Workflow.Steps {
		recordedSteps[cs.ID] = *cs.Step
	}
	above := map[string]map[string]bool{} // the model steps each step depends on
	for _, id := range w.Order {
		cs, _ := w.Step(id)
		above[id] = map[string]bool{}
		for _, d := range cs.Deps {
			for m := range above[d] {
				above[id][m] = true
			}
			if dc, ok := w.Step(d); ok && ModelStep(dc) {
				above[id][d] = true
			}
		}
	}
	plan = &ReplayPlan{From: rec.ID, Steps: []ReplayStep{}}
	reuse, calls = map[string]*structpb.Value{}, map[string]*weftv1.RecordedCalls{}
	for _, cs := range w.Steps {
		step := ReplayStep{ID: cs.ID, Live: true}
		prev, existed := recordedSteps[cs.ID]
		switch {
		case ModelStep(cs):
			step.Why = ReplayModel
			if agentStep(cs) {
				// every agent of the replay answers its calls from the record (none: all drift)
				calls[cs.ID] = recordedCalls(rec.State, cs.ID)
				plan.Calls += len(calls[cs.ID].Calls)
			}
		case computedStep(cs):
			step.Why = ReplayComputed
		case completed[cs.ID] == nil || !existed:
			step.Why = ReplayUnrecorded
		case !reflect.DeepEqual(canonicalStep(prev), canonicalStep(*cs.Step)):
			step.Why = ReplayChanged
		default:
			step.Live = false
			reuse[cs.ID] = completed[cs.ID]
			if len(above[cs.ID]) > 0 {
				step.Above = slices.Sorted(maps.Keys(above[cs.ID]))
			}
		}
		plan.Steps = append(plan.Steps, step)
	}
	return plan, reuse, calls
}

// recordedCalls are the tool calls agent step id made in a recorded run: from its output when it
// holds them (the text the model read, whole), else from the state (the text capped).
func recordedCalls(st *weftv1.ExecutionState, id string) *weftv1.RecordedCalls {
	out := &weftv1.RecordedCalls{Calls: []*weftv1.ToolCall{}}
	for _, s := range st.GetSteps() {
		if s.GetId() != id {
			continue
		}
		if m, _ := s.GetOutput().AsInterface().(map[string]any); m != nil {
			if list, ok := m["toolCalls"].([]any); ok {
				for _, c := range list {
					cm, _ := c.(map[string]any)
					if cm == nil || cm["status"] == runwire.StatusSkipped {
						continue
					}
					tc := &weftv1.ToolCall{}
					tc.Tool, _ = cm["tool"].(string)
					tc.Error, _ = cm["error"].(string)
					tc.Arguments, _ = structpb.NewValue(cm["arguments"])
					tc.Result, _ = structpb.NewValue(cm["result"])
					out.Calls = append(out.Calls, tc)
				}
				return out
			}
		}
		for _, c := range s.GetToolCalls() {
			if c.GetStatus() != runwire.StatusSkipped {
				out.Calls = append(out.Calls, &weftv1.ToolCall{Tool: c.GetTool(), Arguments: c.GetArguments(), Result: c.GetResult(), Error: c.GetError()})
			}
		}
	}
	return out
}

// withModel is w with model as the model of every llm and agent step (and of a loop over one).
func withModel(w *dsl.Workflow, model string) (*dsl.Workflow, error) {
	var doc map[string]any
	if err := json.Unmarshal(mustJSON(w.Def), &doc); err != nil {
		return nil, fmt.Errorf("the definition: %w", err)
	}
	steps, _ := doc["steps"].([]any)
	for _, e := range steps {
		s, _ := e.(map[string]any)
		id, _ := s["id"].(string)
		cs, ok := w.Step(id)
		if !ok || !ModelStep(cs) {
			continue
		}
		in, _ := s["inputs"].(map[string]any)
		if in == nil {
			in = map[string]any{}
			s["inputs"] = in
		}
		if cs.Nested() != nil {
			if nested, _ := in["step"].(map[string]any); nested != nil {
				if in, _ = nested["inputs"].(map[string]any); in == nil {
					in = map[string]any{}
					nested["inputs"] = in
				}
			}
		}
		in["model"] = model
	}
	out, err := dsl.Load(w.Def.Name, mustJSON(doc))
	if err != nil {
		return nil, fmt.Errorf("the definition with model %q: %w", model, err)
	}
	return out, nil
}
