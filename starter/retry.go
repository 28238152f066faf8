package starter

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/workflows/dsl"
)

func newRetryCommand() *cobra.Command {
	var conn connFlags
	var from, file, id string
	var detach, asJSON bool
	cmd := &cobra.Command{
		Use:   "retry RUN_ID [--from STEP] [--file FIXED.json]",
		Short: "Resume a failed or cancelled run: reuse what completed, run the rest",
		Long: "Starts a new run with the same inputs that takes over the outputs of the steps the old run\n" +
			"completed and runs the failed step and everything after it. --file gives a corrected\n" +
			"definition (validated first): steps whose definition changed run again, with everything\n" +
			"downstream of them. --from STEP runs that step and what follows again as well. The new run\n" +
			"records which run it resumed. (Temporal's reset also works: temporal workflow reset.)",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var w *dsl.Workflow
			if file != "" {
				var err error
				if w, err = loadWorkflow(file); err != nil {
					return err
				}
			}
			return conn.with(cmd.Context(), func(c *weftclient.Client) error {
				run, plan, err := c.Retry(cmd.Context(), args[0], weftclient.RetryOptions{From: from, Workflow: w, ID: id})
				if err != nil {
					return clientError(err)
				}
				out := cmd.OutOrStdout()
				if asJSON {
					_ = writeJSON(out, map[string]any{"id": run.ID, "resumedFrom": args[0], "reused": plan.Reused, "rerun": plan.Rerun})
				} else {
					fmt.Fprintf(out, "Started %s, resuming %s\n  reused: %s\n  runs:   %s\n", run.ID, args[0], list(plan.Reused), list(plan.Rerun))
				}
				if detach {
					return nil // started: a script can go on with `&&`
				}
				return followStarted(cmd, c, run.ID, asJSON)
			})
		},
	}
	conn.register(cmd)
	cmd.Flags().StringVar(&from, "from", "", "run this step and everything after it again")
	cmd.Flags().StringVar(&file, "file", "", "a corrected workflow file (or template name)")
	cmd.Flags().StringVar(&id, "id", "", "id of the new run (default: RUN_ID-retry-<random>)")
	cmd.Flags().BoolVar(&detach, "detach", false, "start it and return (exit 0; follow it with weft status --follow ID)")
	jsonFlag(cmd, &asJSON, "print JSON")
	return cmd
}

func list(ids []string) string {
	if len(ids) == 0 {
		return "(none)"
	}
	return strings.Join(ids, ", ")
}

// followStarted follows a run weft retry or weft fork started until it ends, as weft run shows
// one, and exits as weft run does.
func followStarted(cmd *cobra.Command, c *weftclient.Client, id string, asJSON bool) error {
	o := &runOptions{runFlags: runFlags{asJSON: asJSON}}
	p := &progress{o: o, out: cmd.OutOrStdout(), id: id}
	res, runErr := c.Stream(cmd.Context(), id, weftclient.StreamOptions{}, p.event)
	p.endStream()
	return o.finish(cmd.OutOrStdout(), cmd.ErrOrStderr(), id, res, runErr, nil)
}
