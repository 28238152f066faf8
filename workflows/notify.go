package workflows

import (
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/events"
	"github.com/weftworks/weft/internal/webhook"
)

// Notifications. At its start a run asks the worker, in a local activity, which webhooks it
// notifies of which events (the operator's WEFT_WEBHOOKS, the file's "notify" list:
// webhook.Resolve); the answer is recorded in history, so replay sends the same. Each selected
// event then starts a child workflow (NotifyWorkflowType) that delivers it with an activity
// retried for up to NotifyRetryFor. The child is abandoned when the run closes
// (PARENT_CLOSE_POLICY_ABANDON): the run waits only until each child has started (a round trip
// to the server, bounded by the server's own start), never for a delivery, so a webhook that is
// down neither blocks nor fails the run and still gets the event when it is back. Deliveries to
// one receiver are independent: they may arrive out of order (seq orders them).

// ChangeNotify (workflow.GetVersion): runs started since plan and send notifications; histories
// recorded before replay without them.
const ChangeNotify = "notify-webhooks"

// NotifyWorkflowType is the child workflow that delivers one notification.
const NotifyWorkflowType = "weft.notify"

// NotifyRetryFor bounds how long a delivery is tried (then the notify workflow fails, and the
// worker's log and Temporal's UI say so).
const NotifyRetryFor = 24 * time.Hour

// notifier is a run's notification routes and the deliveries being started.
type notifier struct {
	routes   []webhook.Route
	starting int
}

// planNotify asks the worker which webhooks this run notifies. A failure leaves the run without
// notifications, never fails it.
func (r *run) planNotify(ctx workflow.Context) {
	if workflow.GetVersion(ctx, ChangeNotify, workflow.DefaultVersion, 1) < 1 {
		return
	}
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 2},
	})
	req := webhook.PlanRequest{Workflow: r.name, Origin: r.origin, Notify: r.wf.Def.Notify}
	var p webhook.Plan
	if err := workflow.ExecuteLocalActivity(lctx, webhook.ActivityPlan, req).Get(ctx, &p); err != nil {
		workflow.GetLogger(ctx).Warn("no notifications for this run: the worker could not plan them", "error", errorText(err))
		return
	}
	for _, w := range p.Warnings {
		workflow.GetLogger(ctx).Warn(w)
	}
	r.notify.routes = p.Routes
}

// notifyName is the webhook event of a run event ("" : none).
func notifyName(typ string) string {
	switch typ {
	case events.RunStarted, events.RunCompleted, events.RunFailed, events.StepFailed, events.ReviewRequested, events.ReviewDecided:
		return strings.Replace(typ, "_", ".", 1)
	}
	return ""
}

// notifyEvent starts the deliveries of event e to the routes that want it.
func (r *run) notifyEvent(ctx workflow.Context, e events.Event) {
	name := notifyName(e.Type)
	if name == "" || len(r.notify.routes) == 0 {
		return
	}
	runID := workflow.GetInfo(ctx).WorkflowExecution.ID
	n := webhook.Notification{Event: name, Seq: e.Seq, Time: e.Time, RunID: runID, Workflow: r.name,
		Step: e.Step, Error: e.Error, Decision: e.Decision, Reviewer: e.Reviewer}
	if e.Review != nil {
		n.Title = e.Review.GetTitle()
	}
	for i, rt := range r.notify.routes {
		if !rt.Wants(name) {
			continue
		}
		d := webhook.Delivery{ID: fmt.Sprintf("%s-notify-%d-%d", runID, e.Seq, i), Route: rt, Origin: r.origin, Notification: n}
		r.notify.starting++
		// Disconnected: a cancelled run still tells its webhooks it failed.
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		workflow.Go(dctx, func(ctx workflow.Context) {
			defer func() { r.notify.starting-- }()
			cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
				WorkflowID:               d.ID,
				ParentClosePolicy:        enumspb.PARENT_CLOSE_POLICY_ABANDON,
				WorkflowExecutionTimeout: NotifyRetryFor + time.Hour,
			})
			f := workflow.ExecuteChildWorkflow(cctx, NotifyWorkflowType, d)
			if err := f.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
				workflow.GetLogger(ctx).Warn("a notification was not started", "delivery", d.ID, "error", errorText(err))
			}
		})
	}
}

// Notify is the child workflow NotifyWorkflowType: it delivers one notification, trying again
// (1 s, doubling, at most 10 min apart) for up to NotifyRetryFor.
func Notify(ctx workflow.Context, d webhook.Delivery) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ScheduleToCloseTimeout: NotifyRetryFor,
		StartToCloseTimeout:    30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: 10 * time.Minute},
	})
	return workflow.ExecuteActivity(ctx, webhook.ActivityDeliver, d).Get(ctx, nil)
}
