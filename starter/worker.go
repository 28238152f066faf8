package starter

import (
	"fmt"

	"github.com/spf13/cobra"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/worker"
)

func newWorkerCommand() *cobra.Command {
	var conn connFlags
	var metricsAddr string
	var tune worker.Options
	var logFormat, logLevel string
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run a weft worker: the interpreter and the tool activities",
		Long:  "Connects to Temporal and polls the task queue until SIGINT or SIGTERM, then finishes the tasks in hand.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger, err := sdkLogger(logFormat, logLevel, cmd.ErrOrStderr())
			if err != nil {
				return invalid(err)
			}
			conn.logger = logger
			cfg := activities.ConfigFromEnv(envFromDev)
			if _, err := activities.LoadMCPPolicy(cfg.MCPServersFile); err != nil {
				return invalid(err)
			}
			m := serveMetrics(metricsAddr, cmd.ErrOrStderr())
			return conn.withMetrics(cmd.Context(), m, func(c *weftclient.Client) error {
				w, err := worker.New(c.Temporal(), worker.Options{TaskQueue: conn.taskQueue, Config: cfg, Metrics: m,
					WorkflowPollers: tune.WorkflowPollers, ActivityPollers: tune.ActivityPollers,
					MaxConcurrentActivities: tune.MaxConcurrentActivities, MaxConcurrentWorkflowTasks: tune.MaxConcurrentWorkflowTasks})
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "weft worker: %s, namespace %s, task queue %s\n", conn.address, conn.namespace, conn.taskQueue)
				return w.Run(sdkworker.InterruptCh())
			})
		},
	}
	conn.register(cmd)
	cmd.Flags().IntVar(&tune.WorkflowPollers, "workflow-pollers", 0, "concurrent workflow task polls (0: the SDK's default, 2)")
	cmd.Flags().IntVar(&tune.ActivityPollers, "activity-pollers", 0, "concurrent activity task polls (0: the SDK's default, 2)")
	cmd.Flags().IntVar(&tune.MaxConcurrentActivities, "max-concurrent-activities", 0, "activities run at once (0: the SDK's default, 1000)")
	cmd.Flags().IntVar(&tune.MaxConcurrentWorkflowTasks, "max-concurrent-workflow-tasks", 0, "workflow tasks run at once (0: the SDK's default, 1000)")
	cmd.Flags().StringVar(&logFormat, "log-format", envOr("WEFT_LOG_FORMAT", "text"), "log lines on stderr: text, json or off (env WEFT_LOG_FORMAT); each tool call is one line with its workflow, run and activity (step) ids")
	cmd.Flags().StringVar(&logLevel, "log-level", envOr("WEFT_LOG_LEVEL", "info"), "debug, info, warn or error (env WEFT_LOG_LEVEL)")
	cmd.Flags().StringVar(&metricsAddr, "metrics", "", "serve Prometheus metrics on this address, e.g. 127.0.0.1:9464 (/metrics)")
	return cmd
}
