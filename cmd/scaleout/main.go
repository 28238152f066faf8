package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/weftworks/weft/internal/ops/cluster"
)

func main() {
	o := cluster.ScaleOptions{Configs: cluster.DefaultScaleConfigs}
	flag.StringVar(&o.Compose, "compose", "docker-compose.yml", "the compose file")
	flag.StringVar(&o.Weft, "weft", "bin/weft", "the weft binary")
	flag.StringVar(&o.Dir, "dir", ".weft/scaleout", "data and logs")
	flag.IntVar(&o.Offset, "offset", 12000, "added to every port")
	flag.IntVar(&o.Runs, "runs", 500, "runs of the 10-step pipeline per configuration")
	flag.DurationVar(&o.Latency, "latency", 20*time.Millisecond, "latency of each fake call")
	flag.Parse()
	o.Env = map[string]string{"WEFT_MCP_KEY": "scaleout"}
	o.Progress = os.Stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rs, err := cluster.ScaleOut(ctx, o)
	cluster.PrintScale(os.Stdout, rs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "scaleout:", err)
		os.Exit(1)
	}
}
