package client

import (
	"context"
	"fmt"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/weftworks/weft/runwire"
)

// StepCalls are the inputs a step's activities were called with, resolved, as the run's history
// recorded them: one entry per call (forEach items, agent iterations), the first max of them.
type StepCalls struct {
	Step   string `json:"step"`
	Total  int    `json:"total"`
	Inputs []any  `json:"inputs"`
	// Note says why there is nothing to show (a step computed inside the workflow, a run from
	// before activities were named after their steps).
	Note string `json:"note,omitempty"`
}

// StepInputs reads the resolved inputs of a step's activity calls from the run's history.
func (c *Client) StepInputs(ctx context.Context, runID, step string, max int) (*StepCalls, error) {
	out := &StepCalls{Step: step, Inputs: []any{}}
	named := false
	err := c.history(ctx, runID, func(ev *historypb.HistoryEvent) {
		a := ev.GetActivityTaskScheduledEventAttributes()
		if a == nil {
			return
		}
		owner := runwire.StepOfActivity(a.GetActivityId())
		named = named || owner != ""
		if owner != step {
			return
		}
		out.Total++
		if len(out.Inputs) < max && len(a.GetInput().GetPayloads()) > 0 {
			var v any
			if err := c.converter().FromPayload(a.GetInput().GetPayloads()[0], &v); err != nil {
				v = map[string]any{"error": "cannot decode: " + err.Error()}
			}
			out.Inputs = append(out.Inputs, v)
		}
	})
	if err != nil {
		return nil, err
	}
	if out.Total == 0 {
		out.Note = "no activity call recorded: the step is computed inside the workflow, has not started, or was skipped"
		if !named {
			out.Note = "this run's activities are not named after their steps (a run from an older worker): see the Temporal UI"
		}
	}
	return out, nil
}

// history calls fn with each event of run runID's history (its newest run), in order; an unknown
// run is notFound's error.
func (c *Client) history(ctx context.Context, runID string, fn func(*historypb.HistoryEvent)) error {
	it := c.t.GetWorkflowHistory(ctx, runID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			if isNotFound(err) {
				return c.notFound(ctx, runID)
			}
			return fmt.Errorf("reading the history of %s: %w", runID, err)
		}
		fn(ev)
	}
	return nil
}
