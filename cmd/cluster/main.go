package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/weftworks/weft/internal/ops/cluster"
)

func main() { os.Exit(run()) }

// run brings the cluster up, runs the demo and waits; it returns the exit status, so that the
// cluster is taken down (PostgreSQL and its processes stopped) on every way out, a failed demo
// included: os.Exit in main would skip the deferred Down.
func run() int {
	var o cluster.Options
	flag.StringVar(&o.Compose, "compose", "docker-compose.yml", "the compose file to run")
	flag.StringVar(&o.Weft, "weft", "bin/weft", "the weft binary")
	flag.StringVar(&o.Dir, "dir", ".weft/cluster", "data and logs")
	flag.IntVar(&o.Offset, "offset", 10000, "added to every port (7233 becomes 17233)")
	flag.IntVar(&o.Workers, "workers", 0, "worker processes (default: the file's replicas)")
	demoOnly := flag.Bool("demo-only", false, "stop after the demo")
	flag.Parse()
	o.Progress = os.Stderr
	if os.Getenv("WEFT_MCP_KEY") == "" {
		o.Env = map[string]string{"WEFT_MCP_KEY": "cluster-demo-key"}
		fmt.Fprintln(os.Stderr, "cluster: WEFT_MCP_KEY unset: the gateway and the console use the key cluster-demo-key")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := cluster.Up(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		return 1
	}
	defer c.Down()
	temporal := c.Address("temporal", 7233)
	fmt.Printf("\nThe cluster is up (logs in %s):\n", o.Dir)
	fmt.Printf("  Temporal   %s   Web UI http://%s\n", temporal, c.Address("temporal", 8233))
	fmt.Printf("  Store      mongodb://%s/ (FerretDB on PostgreSQL %s)\n", c.Address("store", 27017), c.Address("postgresql", 5432))
	fmt.Printf("  Gateway    http://%s/mcp    Console http://%s\n", c.Address("gateway", 3100), c.Address("console", 8234))
	fmt.Printf("  export TEMPORAL_ADDRESS=%s MONGODB_URI=mongodb://%s/\n\nDemo:\n", temporal, c.Address("store", 27017))
	if _, err := cluster.Demo(ctx, temporal, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "cluster: demo:", err)
		return 1
	}
	if *demoOnly {
		return 0
	}
	fmt.Println("\nCtrl-C stops the cluster.")
	<-ctx.Done()
	return 0
}
