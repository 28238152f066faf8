package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	tclient "go.temporal.io/sdk/client"

	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
)

// ScheduleOptions describe a schedule: a workflow started on a cron expression or an interval.
type ScheduleOptions struct {
	ID string
	// Cron is a cron expression ("0 6 * * MON-FRI"); Every an interval. One of them.
	Cron  string
	Every time.Duration
	// Overlap: skip (default), buffer_one, buffer_all, cancel_other, terminate_other, allow_all.
	Overlap string
	Start   StartOptions
	Paused  bool
	Note    string
}

var overlaps = map[string]enumspb.ScheduleOverlapPolicy{
	"skip": enumspb.SCHEDULE_OVERLAP_POLICY_SKIP, "buffer_one": enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE,
	"buffer_all": enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ALL, "cancel_other": enumspb.SCHEDULE_OVERLAP_POLICY_CANCEL_OTHER,
	"terminate_other": enumspb.SCHEDULE_OVERLAP_POLICY_TERMINATE_OTHER, "allow_all": enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL,
}

// CreateSchedule creates a Temporal Schedule that starts w with the given inputs.
func (c *Client) CreateSchedule(ctx context.Context, w *dsl.Workflow, o ScheduleOptions) error {
	if err := CheckID(o.ID); err != nil {
		return err
	}
	if (o.Cron == "") == (o.Every <= 0) {
		return &InvalidError{Err: errors.New("give either --cron \"0 6 * * *\" or --every 1h")}
	}
	overlap := enumspb.SCHEDULE_OVERLAP_POLICY_SKIP
	if o.Overlap != "" {
		p, ok := overlaps[o.Overlap]
		if !ok {
			return &InvalidError{Err: fmt.Errorf("--overlap %q: use skip, buffer_one, buffer_all, cancel_other, terminate_other or allow_all", o.Overlap)}
		}
		overlap = p
	}
	req, err := Request(w, o.Start)
	if err != nil {
		return err
	}
	spec := tclient.ScheduleSpec{}
	if o.Cron != "" {
		spec.CronExpressions = []string{o.Cron}
	} else {
		spec.Intervals = []tclient.ScheduleIntervalSpec{{Every: o.Every}}
	}
	_, err = c.t.ScheduleClient().Create(ctx, tclient.ScheduleOptions{
		ID: o.ID, Spec: spec, Overlap: overlap, Paused: o.Paused, Note: o.Note,
		Memo: map[string]any{runwire.MemoWorkflow: w.Def.Name},
		Action: &tclient.ScheduleWorkflowAction{
			ID: o.ID + "-run", Workflow: runwire.WorkflowType, Args: []any{req}, TaskQueue: c.taskQueue,
			Memo: map[string]any{runwire.MemoWorkflow: w.Def.Name},
		},
	})
	if err != nil {
		var exists *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &exists) || strings.Contains(err.Error(), "already") {
			return &InvalidError{Err: fmt.Errorf("a schedule %q exists already: delete it first, or choose another id", o.ID)}
		}
		var bad *serviceerror.InvalidArgument
		if errors.As(err, &bad) {
			return &InvalidError{Err: fmt.Errorf("schedule %s: %s (cron takes 5 fields: minute hour day-of-month month day-of-week)", o.ID, bad.Message)}
		}
		return fmt.Errorf("creating schedule %s: %w", o.ID, err)
	}
	return nil
}

// ScheduleSummary is one schedule.
type ScheduleSummary struct {
	ID       string      `json:"id"`
	Workflow string      `json:"workflow"`
	Paused   bool        `json:"paused"`
	Note     string      `json:"note,omitempty"`
	Next     []time.Time `json:"next"`
	Recent   []string    `json:"recentRuns"`
}

// ListSchedules lists the schedules of weft workflows.
func (c *Client) ListSchedules(ctx context.Context) ([]ScheduleSummary, error) {
	it, err := c.t.ScheduleClient().List(ctx, tclient.ScheduleListOptions{PageSize: 100})
	if err != nil {
		return nil, fmt.Errorf("listing schedules: %w", err)
	}
	out := []ScheduleSummary{}
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("listing schedules: %w", err)
		}
		if e.WorkflowType.Name != runwire.WorkflowType {
			continue
		}
		s := ScheduleSummary{ID: e.ID, Paused: e.Paused, Note: e.Note, Next: e.NextActionTimes, Recent: []string{}}
		if p, ok := e.Memo.GetFields()[runwire.MemoWorkflow]; ok {
			_ = c.converter().FromPayload(p, &s.Workflow)
		}
		for _, a := range e.RecentActions {
			if a.StartWorkflowResult != nil {
				s.Recent = append(s.Recent, a.StartWorkflowResult.WorkflowID)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// ScheduleAction is what can be done to a schedule.
type ScheduleAction string

// Schedule actions.
const (
	SchedulePause   ScheduleAction = "pause"
	ScheduleUnpause ScheduleAction = "unpause"
	ScheduleTrigger ScheduleAction = "trigger"
	ScheduleDelete  ScheduleAction = "delete"
)

// DoSchedule pauses, unpauses, triggers (runs now) or deletes a schedule. Schedules are the
// operator's (only the CLI creates them): a key does this only with the admin role (MayAct).
func (c *Client) DoSchedule(ctx context.Context, id string, action ScheduleAction, note string) error {
	if who := Caller(ctx); !MayAct(who, "") {
		return ActRefusal(string(action), "schedule "+id, "", who)
	}
	h := c.t.ScheduleClient().GetHandle(ctx, id)
	var err error
	switch action {
	case SchedulePause:
		err = h.Pause(ctx, tclient.SchedulePauseOptions{Note: note})
	case ScheduleUnpause:
		err = h.Unpause(ctx, tclient.ScheduleUnpauseOptions{Note: note})
	case ScheduleTrigger:
		err = h.Trigger(ctx, tclient.ScheduleTriggerOptions{Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL})
	case ScheduleDelete:
		err = h.Delete(ctx)
	default:
		return &InvalidError{Err: fmt.Errorf("%q: use pause, unpause, trigger or delete", action)}
	}
	if isNotFound(err) {
		return &NotFoundError{ID: id, Schedule: true}
	}
	if err != nil {
		return fmt.Errorf("%s schedule %s: %w", action, id, err)
	}
	return nil
}

// DescribeSchedule returns a schedule's summary.
func (c *Client) DescribeSchedule(ctx context.Context, id string) (*ScheduleSummary, error) {
	d, err := c.t.ScheduleClient().GetHandle(ctx, id).Describe(ctx)
	if err != nil {
		if isNotFound(err) {
			return nil, &NotFoundError{ID: id, Schedule: true}
		}
		return nil, fmt.Errorf("describing schedule %s: %w", id, err)
	}
	s := &ScheduleSummary{ID: id, Paused: d.Schedule.State.Paused, Note: d.Schedule.State.Note, Next: d.Info.NextActionTimes, Recent: []string{}}
	if p, ok := d.Memo.GetFields()[runwire.MemoWorkflow]; ok {
		_ = c.converter().FromPayload(p, &s.Workflow)
	}
	for _, a := range d.Info.RecentActions {
		if a.StartWorkflowResult != nil {
			s.Recent = append(s.Recent, a.StartWorkflowResult.WorkflowID)
		}
	}
	return s, nil
}
