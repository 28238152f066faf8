package starter

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/runwire"
)

func newStatusCommand() *cobra.Command { return statusCommand(false) }

// newWatchCommand is `weft watch ID`: weft status --follow.
func newWatchCommand() *cobra.Command { return statusCommand(true) }

func statusCommand(watch bool) *cobra.Command {
	var conn connFlags
	var asJSON, follow, verbose bool
	var interval time.Duration
	var since int64
	var gateway, gatewayKey string
	cmd := &cobra.Command{
		Use:   "status ID",
		Short: "Show a run's steps, pending reviews and, once done, its output (--follow: until it ends)",
		Long: "Shows a run's steps, pending reviews and, once done, its output. --follow shows the steps as\n" +
			"they change until the run ends, as `weft run` does (for a run started with --detach).\n" +
			"Exit status: 0 running or completed, 1 failed, cancelled, terminated or timed out.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return conn.with(cmd.Context(), func(c *weftclient.Client) error {
				id := args[0]
				st, err := c.State(cmd.Context(), id)
				if err != nil {
					return clientError(err)
				}
				out := cmd.OutOrStdout()
				if follow || watch {
					o := &runOptions{runFlags: runFlags{asJSON: asJSON}, interval: interval, since: since, verbose: verbose}
					var formatters map[string]any
					if w, err := c.Workflow(cmd.Context(), id); err == nil {
						formatters = w.Def.Formatters
					}
					if !asJSON {
						header(out, fmt.Sprintf("weft: %s  (%s)", st.Workflow, id))
					}
					ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
					defer stop()
					c.FollowThrough(weftclient.Gateway{URL: flagOrEnv(gateway, weftclient.EnvGateway), Key: flagOrEnv(gatewayKey, weftclient.EnvGatewayKey)})
					return o.follow(ctx, c, out, cmd.ErrOrStderr(), id, formatters)
				}
				// the run as every surface shows it (weftclient.Resolve)
				e := weftclient.Resolve(id, nil, st)
				if d, derr := c.Describe(cmd.Context(), id); derr == nil {
					e = weftclient.Resolve(id, d, st)
				}
				if asJSON {
					if err := writeProto(out, e.State); err != nil {
						return err
					}
					return statusExit(e.Status)
				}
				printStatus(out, e)
				return statusExit(e.Status)
			})
		},
	}
	conn.register(cmd)
	jsonFlag(cmd, &asJSON, "print the state query's JSON")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "show the steps as they change until the run ends (as weft run does)")
	cmd.Flags().DurationVar(&interval, "poll", time.Second, "with --follow: how often the run's state is read when it cannot be waited on (an older worker)")
	cmd.Flags().Int64Var(&since, "since", 0, "with --follow: start after the event with this sequence number (the seq of --json --verbose's events), to go on after a disconnect")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "with --follow: step outputs; with --json, one JSON event per line as weft run --json --verbose prints them")
	cmd.Flags().StringVar(&gateway, "gateway", "", "with --follow: read the run's events through this weft gateway (weft mcp --transport http; its base URL): processes following a run through one gateway cost the run's worker one read per change, not one each (env "+weftclient.EnvGateway+")")
	cmd.Flags().StringVar(&gatewayKey, "gateway-key", "", "with --gateway: the gateway's API key, with the reader role (env "+weftclient.EnvGatewayKey+")")
	if watch {
		cmd.Use = "watch ID"
		cmd.Short = "Follow a run's events as they happen until it ends (weft status --follow)"
		cmd.Long = "Shows a run's events as they happen, as `weft run` does, until the run ends: steps, model text,\n" +
			"tool calls, reviews. --json --verbose prints one JSON event per line; --since N goes on after event N.\n" +
			"Exit status: 0 completed, 1 failed or cancelled, 3 interrupted (the run goes on)."
		_ = cmd.Flags().MarkHidden("follow")
	}
	return cmd
}

// statusExit is status's exit status: 1 for a run that ended without completing.
func statusExit(status string) error {
	if weftclient.Closed(status) && status != weftclient.RunCompleted {
		return &ExitError{Code: ExitFailed, Silent: true}
	}
	return nil
}

// printStatus prints a run's state as a person reads it.
func printStatus(out io.Writer, e *weftclient.Execution) {
	id, st, d := e.ID, e.State, e.Description
	if d == nil {
		d = &weftclient.Description{}
	}
	header(out, fmt.Sprintf("weft: %s  (%s)  %s", st.Workflow, id, strings.ReplaceAll(e.Status, "_", " ")))
	for _, s := range st.Steps {
		fmt.Fprintln(out, stepLine(s, id, st.PendingReviews))
		for _, tc := range s.ToolCalls {
			fmt.Fprintln(out, toolCallLine(tc))
		}
	}
	for _, w := range st.Warnings {
		fmt.Fprintf(out, "\nWarning: %s\n", w)
	}
	printReviews(out, id, st.PendingReviews)
	if u := st.Usage; weftclient.UsageOf(u).Billed() {
		fmt.Fprintf(out, "\nUsage: %s\n", usageText(u))
	}
	switch {
	case e.Status == weftclient.RunCancelled:
		// The steps in flight report the cancellation as their error; say what happened instead.
		at := ""
		for _, s := range st.Steps {
			stopped := s.Status == runwire.StatusCancelled && s.Error == runwire.StoppedInFlight
			failedBefore := s.Status == runwire.StatusFailed && st.Error == fmt.Sprintf("step %q: %s", s.Id, s.Error) // older workers
			if stopped || failedBefore {
				at = s.Id
				break
			}
		}
		fmt.Fprintf(out, "\n%s\n", cancelledText(d.CancelledBy, at))
	case st.Error != "":
		shown := false
		for _, s := range st.Steps {
			if s.Status == "failed" && s.Error != "" && st.Error == fmt.Sprintf("step %q: %s", s.Id, s.Error) {
				fmt.Fprintf(out, "\nFailed at step %s (its error is above).\n", s.Id)
				shown = true
				break
			}
		}
		if !shown {
			fmt.Fprintf(out, "\nFailed: %s\n", st.Error)
		}
	}
	if d.Ended != nil {
		fmt.Fprintf(out, "\nEnded: %s\n", d.Ended.Error())
	}
	if st.Output != nil {
		fmt.Fprintln(out, "\nOutput:")
		_ = writeProto(out, st.Output)
	}
}

// flagOrEnv is a flag's value, else the environment variable's (flags whose default is not shown
// in help: a key, a URL that differs per machine).
func flagOrEnv(v, env string) string {
	if v != "" {
		return v
	}
	return os.Getenv(env)
}
