package client

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/weftworks/weft/events"
	"github.com/weftworks/weft/workflows"
)

// Events reads the events a run recorded after since (its events query): at most
// events.PageMax of them; page.Last says whether more follow.
func (c *Client) Events(ctx context.Context, id string, since int64) (*events.Page, error) {
	return c.EventsOf(ctx, id, "", since)
}

// EventsOf reads the events one run of id recorded after since (runID "": the newest run, as
// Events): a session that continued as new keeps its earlier runs' events, numbered apart.
func (c *Client) EventsOf(ctx context.Context, id, runID string, since int64) (*events.Page, error) {
	v, err := c.queryRun(ctx, id, runID, events.Query, since)
	if err != nil {
		if isNotFound(err) {
			return nil, c.notFound(ctx, id)
		}
		if isUnknownQuery(err) {
			return nil, errNoEventModel
		}
		return nil, fmt.Errorf("run %s: the events query failed (is a weft worker running on task queue %s?): %w", id, c.taskQueue, err)
	}
	var p events.Page
	if err := v.Get(&p); err != nil {
		return nil, decodeError(id, "its events", err)
	}
	return &p, nil
}

// errNoEventModel: the run's worker predates the events query (Stream falls back to reading the
// state at an interval).
var errNoEventModel = errors.New("the run's worker records no events (an older weft worker): its state is read at an interval instead")

func isUnknownQuery(err error) bool {
	return err != nil && strings.Contains(err.Error(), "unknown queryType")
}

// Wait outcomes of WaitEvents besides a new sequence number.
var (
	// ErrEventsWaiting: events after since exist already, or the run ended: read them.
	ErrEventsWaiting = errors.New("events are waiting to be read")
	// ErrNoWaits: the run takes no waits (too many, a long history, an older worker): read its
	// events at an interval instead.
	ErrNoWaits = errors.New("the run takes no waits")
)

// WaitEvents waits until run id records an event after since and returns the newest sequence
// number: a long poll (the wait-events Update), answered within milliseconds of the event. Every
// client waiting after the same number shares one Update (its id is workflows.WaitEventsID),
// so watchers add no history of their own. It returns ErrEventsWaiting when there is something
// to read already (or the run ended), ErrNoWaits when the run takes no waits, and ctx's error
// when ctx ends first (the wait stays with the run; the next client to wait after since joins it).
func (c *Client) WaitEvents(ctx context.Context, id string, since int64) (int64, error) {
	h, err := c.t.UpdateWorkflow(ctx, tclient.UpdateWorkflowOptions{
		UpdateID: workflows.WaitEventsID(since), WorkflowID: id, UpdateName: workflows.UpdateWaitEvents,
		Args: []any{since}, WaitForStage: tclient.WorkflowUpdateStageCompleted,
	})
	var seq int64
	if err == nil {
		err = h.Get(ctx, &seq)
	}
	if err == nil {
		return seq, nil
	}
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		switch ae.Type() {
		case workflows.ErrEventsAvailable, workflows.ErrRunEnded:
			return 0, ErrEventsWaiting
		case workflows.ErrNoMoreWaits, workflows.ErrEventsAhead:
			return 0, ErrNoWaits
		}
	}
	if isNotFound(err) || isClosedError(err) {
		return 0, ErrEventsWaiting // the run ended: its events are read with the query
	}
	return 0, fmt.Errorf("%w: %v", ErrNoWaits, err)
}

func isClosedError(err error) bool {
	s := err.Error()
	return strings.Contains(s, "already completed") || strings.Contains(s, "workflow execution already") || strings.Contains(s, "Workflow Update was aborted")
}
