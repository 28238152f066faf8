package worker

import (
	"fmt"

	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/internal/webhook"
	"github.com/weftworks/weft/metrics"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows"
)

// Options configures a worker.
type Options struct {
	TaskQueue string
	// Config holds the provider settings (activities.ConfigFromEnv).
	Config activities.Config
	// Handlers overrides tool implementations (tests); keys are tool names.
	Handlers map[string]activities.Handler
	// Metrics, when set, counts tool calls, their duration, tokens and cost.
	Metrics *metrics.Metrics
	// Tuning (0: the SDK's defaults): pollers per task type and concurrent executions.
	WorkflowPollers, ActivityPollers                    int
	MaxConcurrentActivities, MaxConcurrentWorkflowTasks int
}

// New returns a worker with the interpreter and every tool activity registered; a tool declared
// without a handler (or a handler for an undeclared tool) is an error here, not when a run calls it.
func New(c client.Client, o Options) (sdkworker.Worker, error) {
	if o.TaskQueue == "" {
		o.TaskQueue = runwire.TaskQueue
	}
	w := sdkworker.New(c, o.TaskQueue, sdkworker.Options{
		// After a worker dies, its sticky queue holds the next workflow task until this expires.
		StickyScheduleToStartTimeout: 2 * time.Second,
		// Heartbeat details carry the text an llm call has streamed so far (published every
		// 50ms at most): send them as often, so people watching see text within one read of its
		// publishing (the gateway reads every 50ms, httpapi.TextReadInterval; a Stream of its own
		// every 100ms). docs/performance.md has what this costs (a heartbeat write to Temporal per
		// 50ms of a streaming call) and gives.
		MaxHeartbeatThrottleInterval: 50 * time.Millisecond,
		// A large forEach's items are rendered in one workflow task.
		DeadlockDetectionTimeout: workflows.DeadlockDetectionTimeout,

		MaxConcurrentWorkflowTaskPollers:       o.WorkflowPollers,
		MaxConcurrentActivityTaskPollers:       o.ActivityPollers,
		MaxConcurrentActivityExecutionSize:     o.MaxConcurrentActivities,
		MaxConcurrentWorkflowTaskExecutionSize: o.MaxConcurrentWorkflowTasks,
		// A stateful MCP server's calls run in a Temporal session: on the one worker that holds
		// the server's connection, reached through a task queue of that worker's own.
		EnableSessionWorker: true,
	})
	w.RegisterWorkflowWithOptions(workflows.Run, workflow.RegisterOptions{Name: runwire.WorkflowType})
	w.RegisterWorkflowWithOptions(workflows.Chat, workflow.RegisterOptions{Name: runwire.ChatWorkflowType})
	w.RegisterWorkflowWithOptions(workflows.Batch, workflow.RegisterOptions{Name: workflows.BatchWorkflowType})
	w.RegisterWorkflowWithOptions(workflows.Notify, workflow.RegisterOptions{Name: workflows.NotifyWorkflowType})
	tools := activities.NewTools(o.Config)
	w.RegisterActivityWithOptions(tools.MCPList, activity.RegisterOptions{Name: activities.ActivityMCPList})
	w.RegisterActivityWithOptions(tools.MCPCall, activity.RegisterOptions{Name: activities.ActivityMCPCall})
	w.RegisterActivityWithOptions(tools.MCPClose, activity.RegisterOptions{Name: activities.ActivityMCPClose})
	w.RegisterActivityWithOptions(tools.StoreValues, activity.RegisterOptions{Name: toolspec.ActivityBlobsPut})
	// Notifications (WEFT_WEBHOOKS, a file's notify): internal, never tools a file can call.
	w.RegisterActivityWithOptions(tools.NotifyPlan, activity.RegisterOptions{Name: webhook.ActivityPlan})
	w.RegisterActivityWithOptions(tools.Notify, activity.RegisterOptions{Name: webhook.ActivityDeliver})
	impl := tools.Handlers()
	var claim activities.ClaimCheck
	if o.Config.MongoDBURI != "" {
		claim = activities.ClaimCheck{Blobs: tools, Above: tools.ClaimCheckAbove()}
	}
	if o.Metrics != nil {
		claim.Observe = o.Metrics.ToolCall
	}
	// Templates that look inside stored values run here, with the interpreter's own engine.
	w.RegisterActivityWithOptions(activities.Evaluate(workflows.Evaluate, claim), activity.RegisterOptions{Name: toolspec.ActivityEvaluate})
	for name, h := range o.Handlers {
		impl[name] = h
	}
	handlers, err := activities.Handlers(impl)
	if err != nil {
		return nil, fmt.Errorf("building the worker: %w", err)
	}
	for _, s := range toolspec.All() {
		if h, ok := handlers[s.Name]; ok {
			w.RegisterActivityWithOptions(activities.Activity(s, h, claim), activity.RegisterOptions{Name: s.Name})
		}
	}
	// A forEach over a batching tool sends its items in batches (toolspec.Batch). A tool whose
	// handler the program replaced batches by calling the replacement per item.
	batch := tools.BatchHandlers()
	for _, s := range toolspec.Batchable() {
		bh := batch[s.Name]
		if _, replaced := o.Handlers[s.Name]; replaced || bh == nil {
			bh = activities.PerItemBatch(s, handlers[s.Name], activities.PerItemConcurrency)
		}
		w.RegisterActivityWithOptions(activities.BatchActivity(s, bh, claim), activity.RegisterOptions{Name: s.BatchActivity()})
	}
	return stopping{Worker: w, close: tools.CloseMCPSessions}, nil
}

// stopping is the SDK's worker that, once stopped, closes what its activities hold between
// calls (stateful MCP servers' connections: their processes exit with the worker).
type stopping struct {
	sdkworker.Worker
	close func()
}

func (w stopping) Stop() {
	w.Worker.Stop()
	w.close()
}

func (w stopping) Run(interruptCh <-chan any) error {
	err := w.Worker.Run(interruptCh)
	w.close()
	return err
}
