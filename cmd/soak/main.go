package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/weftworks/weft/internal/ops/soak"
)

func main() {
	o := soak.Full
	flag.StringVar(&o.Weft, "weft", "bin/weft", "the weft binary")
	flag.StringVar(&o.Dir, "dir", "", "where the processes keep data and logs (default: a new temporary folder)")
	short := flag.Bool("short", false, "the short campaign of make test")
	flag.Parse()
	if *short {
		weft, dir := o.Weft, o.Dir
		o = soak.Short
		o.Weft, o.Dir = weft, dir
	}
	if o.Dir == "" {
		d, err := os.MkdirTemp("", "weft-soak-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		o.Dir = d
	}
	o.Progress = os.Stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fmt.Fprintf(os.Stderr, "soak: logs in %s\n", o.Dir)
	rows, err := soak.Run(ctx, o)
	soak.Print(os.Stdout, rows)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	for _, r := range rows {
		if !r.Passed() {
			os.Exit(1)
		}
	}
}
