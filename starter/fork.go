package starter

import (
	"fmt"

	"github.com/spf13/cobra"

	weftclient "github.com/weftworks/weft/client"
)

func newForkCommand() *cobra.Command {
	var conn connFlags
	var step, message, id string
	var iteration int
	var detach, asJSON bool
	cmd := &cobra.Command{
		Use:   "fork RUN_ID --step AGENT --iteration N [--message TEXT]",
		Short: "Start a new run from an agent's iteration, reusing what was recorded up to it",
		Long: "Starts a new run that reuses what RUN_ID recorded up to an agent's iteration N: the outputs\n" +
			"of the steps before the agent, and the agent's first N model answers and tool results (not\n" +
			"asked again). The agent goes on with iteration N+1; --message is the user message it reads\n" +
			"next (with --iteration 0 it replaces the prompt). Steps after the agent run again. RUN_ID is\n" +
			"not changed; the new run records which run it was forked from. A failed agent step can be\n" +
			"forked from any iteration whose results its next model call read.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return conn.with(cmd.Context(), func(c *weftclient.Client) error {
				run, plan, err := c.Fork(cmd.Context(), args[0], weftclient.ForkOptions{Step: step, Iteration: iteration, Message: message, ID: id})
				if err != nil {
					return clientError(err)
				}
				out := cmd.OutOrStdout()
				if asJSON {
					_ = writeJSON(out, map[string]any{"id": run.ID, "forkedFrom": args[0], "step": step, "iteration": iteration, "reused": plan.Reused, "rerun": plan.Rerun, "messages": plan.Messages})
				} else {
					fmt.Fprintf(out, "Started %s, forking %s at %s iteration %d (%d messages kept)\n  reused: %s\n  runs:   %s\n", run.ID, args[0], step, iteration, plan.Messages, list(plan.Reused), list(plan.Rerun))
				}
				if detach {
					return nil
				}
				return followStarted(cmd, c, run.ID, asJSON)
			})
		},
	}
	conn.register(cmd)
	cmd.Flags().StringVar(&step, "step", "", "the agent step to fork (required)")
	cmd.Flags().IntVar(&iteration, "iteration", 0, "keep this many of the agent's iterations; it goes on with the next")
	cmd.Flags().StringVar(&message, "message", "", "the user message the agent reads next (at --iteration 0: the prompt)")
	cmd.Flags().StringVar(&id, "id", "", "id of the new run (default: RUN_ID-fork-<random>)")
	cmd.Flags().BoolVar(&detach, "detach", false, "start it and return (exit 0; follow it with weft status --follow ID)")
	jsonFlag(cmd, &asJSON, "print JSON")
	_ = cmd.MarkFlagRequired("step")
	return cmd
}
