package eval

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/eval/report"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// A replay case ({"replay": RUN}) re-runs a recorded run: its inputs, its model steps (llm,
// generate, agents' model turns) for real with the eval's model (Options.Model) or definition,
// every other step's output and every agent tool call's result from the record
// (weftclient.ReplayRecording). A tool call the record does not hold is not run: the model is
// told "tool drift: not in the record" as the tool's error, and the case's report lists it. So a
// change of the model's answers (report.Replay.Changed) is told apart from tool drift
// (report.Replay.Drift). The case's graders grade the replay as any run.

// ReplayCases are replay cases of the runs ids (weft eval --replay-runs), each named after its
// run, with no grader: the run completing passes, and the report says what changed.
func ReplayCases(ids []string) []Case {
	cases := make([]Case, 0, len(ids))
	for _, id := range ids {
		cases = append(cases, Case{Name: id, Replay: id})
	}
	return cases
}

// ReplaySince lists the runs of workflow that completed and started since (newest first, at
// most limit) as replay cases (weft eval --replay-since). Replays of earlier evals (ids with
// "-replay-") are left out: their record is a replay's.
func ReplaySince(ctx context.Context, c *weftclient.Client, workflow string, since time.Time, limit int) ([]Case, error) {
	runs, err := c.List(ctx, weftclient.ListOptions{Workflow: workflow, Status: weftclient.RunCompleted, Limit: 1000})
	if err != nil {
		return nil, fmt.Errorf("listing the completed runs of %s: %w", workflow, err)
	}
	var ids []string
	for _, r := range runs {
		if r.Started.Before(since) || strings.Contains(r.ID, "-replay-") {
			continue
		}
		if ids = append(ids, r.ID); len(ids) == limit {
			break
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("no run of %s completed that started since %s: run it first, or reach further back with --replay-since", workflow, since.Format(time.RFC3339))
	}
	return ReplayCases(ids), nil
}

// startReplay reads the case's recorded run and starts its replay.
func (r *runner) startReplay(ctx context.Context, cs Case) (*weftclient.Recording, *weftclient.Run, *weftclient.ReplayPlan, error) {
	rec, err := r.c.Recording(ctx, cs.Replay)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("replay %s: %w", cs.Replay, err)
	}
	run, plan, err := r.c.ReplayRecording(ctx, rec, weftclient.ReplayOptions{Workflow: r.w, Model: r.o.Model, Origin: weftclient.OriginOperator})
	if err != nil {
		return rec, nil, nil, fmt.Errorf("replay %s: %w", cs.Replay, err)
	}
	return rec, run, plan, nil
}

// replayReport says what a replay (plan, of rec) did: e is the replay as it ended (nil: not read).
func replayReport(rec *weftclient.Recording, plan *weftclient.ReplayPlan, e *weftclient.Execution) *report.Replay {
	rep := &report.Replay{From: plan.From, Model: plan.Model, Reused: []string{}, Live: []report.ReplayStep{},
		RecordedCalls: plan.Calls, Changed: []report.ModelChange{}, Drift: []report.Drift{}}
	for _, s := range plan.Steps {
		if s.Live {
			rep.Live = append(rep.Live, report.ReplayStep{ID: s.ID, Why: s.Why})
		} else {
			rep.Reused = append(rep.Reused, s.ID)
		}
	}
	if e == nil || e.State == nil {
		return rep
	}
	was := map[string]*weftv1.StepState{}
	for _, s := range rec.State.GetSteps() {
		was[s.GetId()] = s
	}
	now := map[string]*weftv1.StepState{}
	for _, s := range e.State.GetSteps() {
		now[s.GetId()] = s
	}
	for _, s := range plan.Steps {
		cur := now[s.ID]
		if cur == nil {
			continue
		}
		switch s.Why {
		case weftclient.ReplayModel:
			if ch, changed := modelChange(was[s.ID], cur); changed {
				rep.Changed = append(rep.Changed, ch)
			}
			for _, c := range cur.GetToolCalls() {
				switch {
				case strings.HasPrefix(c.GetError(), runwire.ToolDrift):
					rep.Drift = append(rep.Drift, report.Drift{Step: s.ID, Tool: c.GetTool(), Arguments: c.GetArguments().AsInterface(), Why: runwire.ToolDrift})
				case c.GetStatus() != runwire.StatusSkipped && !strings.HasPrefix(c.GetTool(), runwire.HandoffToolPrefix):
					rep.FromRecord++
				}
			}
		case weftclient.ReplayUnrecorded:
			if st := cur.GetStatus(); st == runwire.StatusCompleted || st == runwire.StatusFailed {
				rep.Drift = append(rep.Drift, report.Drift{Step: s.ID, Why: "ran live: " + weftclient.ReplayUnrecorded})
			}
		}
	}
	changed := map[string]bool{}
	for _, ch := range rep.Changed {
		changed[ch.Step] = true
	}
	for _, s := range plan.Steps {
		var above []string
		for _, m := range s.Above {
			if changed[m] {
				above = append(above, m)
			}
		}
		if len(above) > 0 {
			rep.Stale = append(rep.Stale, report.Stale{Step: s.ID, Changed: above})
		}
	}
	return rep
}

// modelChange compares a model step's recorded answer (was; nil: the record has no such step)
// with the replay's (now): the text or JSON it answered, and an agent's tools in order.
func modelChange(was, now *weftv1.StepState) (report.ModelChange, bool) {
	ch := report.ModelChange{Step: now.GetId(), Now: answerText(now), NowTools: calledTools(now)}
	if was != nil {
		ch.Was, ch.WasTools = answerText(was), calledTools(was)
	}
	return ch, was == nil || ch.Was != ch.Now || !slices.Equal(ch.WasTools, ch.NowTools)
}

// answerText is what a model step answered: an output's json when it has one, else its text,
// a list's items one by one (a forEach, a loop), anything else as JSON; an error as itself.
func answerText(s *weftv1.StepState) string {
	if s.GetStatus() != runwire.StatusCompleted {
		return s.GetStatus() + cond(s.GetError() == "", "", ": "+s.GetError())
	}
	return shorten(outputAnswer(s.GetOutput().AsInterface()), 400)
}

func outputAnswer(v any) string {
	switch x := v.(type) {
	case map[string]any:
		if j, ok := x["json"]; ok && j != nil {
			return shortJSON(j)
		}
		if t, ok := x["text"].(string); ok {
			return t
		}
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = outputAnswer(e)
		}
		return "[" + strings.Join(parts, " | ") + "]"
	}
	return shortJSON(v)
}

// calledTools are the tools step s called, in order (calls a stop skipped left out).
func calledTools(s *weftv1.StepState) []string {
	var out []string
	for _, c := range s.GetToolCalls() {
		if c.GetStatus() != runwire.StatusSkipped {
			out = append(out, c.GetTool())
		}
	}
	return out
}
