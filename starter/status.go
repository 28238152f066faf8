package starter

import (
	"fmt"

	"github.com/spf13/cobra"

	weftclient "github.com/weftworks/weft/client"
)

func newStatusCommand() *cobra.Command {
	var conn connFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status ID",
		Short: "Show a run's steps, pending reviews and, once done, its output",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := conn.dial(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			id := args[0]
			st, err := c.State(cmd.Context(), id)
			if err != nil {
				return clientError(err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeProto(out, st)
			}
			closed := ""
			var ended *weftclient.EndedError
			if d, err := c.Describe(cmd.Context(), id); err == nil {
				closed, ended = d.Status, d.Ended
			}
			header(out, fmt.Sprintf("weft: %s  (%s)  %s", st.Workflow, id, closed))
			for _, s := range st.Steps {
				fmt.Fprintln(out, stepLine(s, id))
				for _, tc := range s.ToolCalls {
					fmt.Fprintln(out, toolCallLine(tc))
				}
			}
			for _, w := range st.Warnings {
				fmt.Fprintf(out, "\nWarning: %s\n", w)
			}
			printReviews(out, id, st.PendingReviews)
			if u := st.Usage; u != nil && (u.TotalTokens > 0 || u.CostUsd > 0) {
				fmt.Fprintf(out, "\nUsage: %s\n", usageText(u))
			}
			if st.Error != "" {
				shown := false
				for _, s := range st.Steps {
					if s.Status == "failed" && st.Error == fmt.Sprintf("step %q: %s", s.Id, s.Error) {
						fmt.Fprintf(out, "\nFailed at step %s (its error is above).\n", s.Id)
						shown = true
						break
					}
				}
				if !shown {
					fmt.Fprintf(out, "\nFailed: %s\n", st.Error)
				}
			}
			if ended != nil {
				fmt.Fprintf(out, "\nEnded: %s\n", ended.Error())
			}
			if st.Output != nil {
				fmt.Fprintln(out, "\nOutput:")
				return writeProto(out, st.Output)
			}
			return nil
		},
	}
	conn.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the state query's JSON")
	return cmd
}
