package starter

import (
	"fmt"

	"github.com/spf13/cobra"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/worker"
)

func newWorkerCommand() *cobra.Command {
	var conn connFlags
	var metricsAddr string
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run a weft worker: the interpreter and the tool activities",
		Long:  "Connects to Temporal and polls the task queue until SIGINT or SIGTERM, then finishes the tasks in hand.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m := serveMetrics(metricsAddr, cmd.ErrOrStderr())
			c, err := conn.dialWith(cmd.Context(), m)
			if err != nil {
				return err
			}
			defer c.Close()
			w := worker.New(c.Temporal(), worker.Options{TaskQueue: conn.taskQueue, Config: activities.ConfigFromEnv(envFromDev), Metrics: m})
			fmt.Fprintf(cmd.ErrOrStderr(), "weft worker: %s, namespace %s, task queue %s\n", conn.address, conn.namespace, conn.taskQueue)
			return w.Run(sdkworker.InterruptCh())
		},
	}
	conn.register(cmd)
	cmd.Flags().StringVar(&metricsAddr, "metrics", "", "serve Prometheus metrics on this address, e.g. 127.0.0.1:9464 (/metrics)")
	return cmd
}
