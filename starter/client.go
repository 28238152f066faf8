package starter

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/weftworks/weft/workflows"
)

// connFlags are the Temporal connection settings shared by every command that talks to a server.
type connFlags struct {
	address   string
	namespace string
	taskQueue string
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func (f *connFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.address, "address", envOr("TEMPORAL_ADDRESS", "127.0.0.1:7233"), "Temporal frontend host:port (env TEMPORAL_ADDRESS)")
	cmd.Flags().StringVar(&f.namespace, "namespace", envOr("TEMPORAL_NAMESPACE", "default"), "Temporal namespace (env TEMPORAL_NAMESPACE)")
	cmd.Flags().StringVar(&f.taskQueue, "task-queue", envOr("WEFT_TASK_QUEUE", workflows.TaskQueue), "task queue of the weft workers (env WEFT_TASK_QUEUE)")
}

// dial connects to Temporal; the error says which setting to check.
func (f *connFlags) dial(ctx context.Context) (client.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{
		HostPort:  f.address,
		Namespace: f.namespace,
		Logger:    tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
	})
	if err != nil {
		return nil, fmt.Errorf("cannot reach Temporal at %s (namespace %s): %w; start one with `weft dev`, or set TEMPORAL_ADDRESS / --address", f.address, f.namespace, err)
	}
	return c, nil
}
