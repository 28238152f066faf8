package client

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"

	"github.com/weftworks/weft/events"
)

// Events reads the events a run recorded after since (its events query): at most
// events.PageMax of them; page.Last says whether more follow.
func (c *Client) Events(ctx context.Context, id string, since int64) (*events.Page, error) {
	return c.EventsOf(ctx, id, "", since)
}

// EventsOf reads the events one run of id recorded after since (runID "": the newest run, as
// Events): a session that continued as new keeps its earlier runs' events, numbered apart.
func (c *Client) EventsOf(ctx context.Context, id, runID string, since int64) (*events.Page, error) {
	v, err := c.queryEvents(ctx, id, runID, since)
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

// queryEvents asks run id (runID "": its newest run) for its events after since. The Streams of
// one Client that follow the same run wake together when its history grows and ask the same:
// they share one query in flight (each decodes its own copy of the answer), so that a process
// following a run many times over (the console's pages, the gateway's subscriptions) asks the
// worker once per change, not once per follower.
func (c *Client) queryEvents(ctx context.Context, id, runID string, since int64) (converter.EncodedValue, error) {
	key := id + "\x00" + runID + "\x00" + strconv.FormatInt(since, 10)
	ch := c.reads.DoChan(key, func() (any, error) {
		// not bound to the first asker's context: another may still want the answer
		return c.queryRun(context.WithoutCancel(ctx), id, runID, events.Query, since)
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(converter.EncodedValue), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// errNoEventModel: the run's worker predates the events query (Stream falls back to reading the
// state at an interval).
var errNoEventModel = errors.New("the run's worker records no events (an older weft worker): its state is read at an interval instead")

func isUnknownQuery(err error) bool {
	return err != nil && strings.Contains(err.Error(), "unknown queryType")
}

// WatchHistory tells changed each time run id (runID "": its newest run) may have recorded new
// events, until the run closes (it returns nil) or ctx ends (ctx's error). A run's events change
// only in a workflow task, so it tells of each completed workflow task and of the run's close;
// read the events query then. It reads the run's history with Temporal's long poll (the history
// call that waits for a new event): the server answers when an event is added, so a watcher asks
// nothing while nothing happens, writes nothing to the run's history, and any number of them
// leave the run as it would be without them. changed holds at most one tell: a slow reader
// reads once for several. Its first read goes through the history from the start.
func (c *Client) WatchHistory(ctx context.Context, id, runID string, changed chan<- struct{}) error {
	it := c.t.GetWorkflowHistory(ctx, id, runID, true, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if isNotFound(err) {
				return c.notFound(ctx, id)
			}
			return fmt.Errorf("run %s: its history could not be followed (read its events with the events query at an interval): %w", id, err)
		}
		if t := ev.GetEventType(); t == enums.EVENT_TYPE_WORKFLOW_TASK_COMPLETED || closesRun(t) {
			select {
			case changed <- struct{}{}:
			default: // a tell is waiting already
			}
		}
	}
	return ctx.Err()
}

// closesRun reports whether t is the last event of a run's history.
func closesRun(t enums.EventType) bool {
	switch t {
	case enums.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, enums.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
		enums.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED, enums.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
		enums.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT, enums.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
		return true
	}
	return false
}
