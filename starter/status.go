package starter

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
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
			st, err := queryState(cmd.Context(), c, id)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeProto(out, st)
			}
			closed := describeStatus(cmd.Context(), c, id)
			header(out, fmt.Sprintf("weft: %s  (%s)  %s", st.Workflow, id, closed))
			for _, s := range st.Steps {
				fmt.Fprintln(out, stepLine(s, id))
			}
			for _, r := range st.PendingReviews {
				fmt.Fprintf(out, "\nAwaiting review: %s — %s\n", r.Step, r.Title)
				if r.Instructions != "" {
					fmt.Fprintf(out, "  %s\n", r.Instructions)
				}
				if r.Data != nil {
					b, _ := r.Data.MarshalJSON()
					fmt.Fprintf(out, "  data: %s\n", truncate(string(b), 600))
				}
				fmt.Fprintf(out, "  decide: weft review %s approve|edit|reject --step %s\n", id, r.Step)
			}
			if st.Error != "" {
				fmt.Fprintf(out, "\nFailed: %s\n", st.Error)
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

// describeStatus returns Temporal's status of the run (Running, Completed, ...), or "".
func describeStatus(ctx context.Context, c client.Client, id string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return ""
	}
	return statusName(d.GetWorkflowExecutionInfo().GetStatus())
}

// statusName turns WORKFLOW_EXECUTION_STATUS_COMPLETED into "completed".
func statusName(s enums.WorkflowExecutionStatus) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "WORKFLOW_EXECUTION_STATUS_"))
}
