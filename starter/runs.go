package starter

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/weftworks/weft/workflows"
)

type runSummary struct {
	ID       string    `json:"id"`
	Workflow string    `json:"workflow"`
	Status   string    `json:"status"`
	Weft     string    `json:"weftStatus,omitempty"`
	Started  time.Time `json:"started"`
	Closed   time.Time `json:"closed,omitzero"`
}

// listRuns lists weft executions matching a visibility query, newest first.
func listRuns(ctx context.Context, c client.Client, query string, limit int) ([]runSummary, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, PageSize: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("listing runs (%s): %w", query, err)
	}
	var out []runSummary
	for _, e := range resp.GetExecutions() {
		r := runSummary{ID: e.GetExecution().GetWorkflowId(), Status: statusName(e.GetStatus()), Started: e.GetStartTime().AsTime()}
		if e.GetCloseTime() != nil {
			r.Closed = e.GetCloseTime().AsTime()
		}
		if p, ok := e.GetMemo().GetFields()[workflows.MemoWorkflow]; ok {
			_ = converter.GetDefaultDataConverter().FromPayload(p, &r.Workflow)
		}
		if p, ok := e.GetSearchAttributes().GetIndexedFields()["WeftStatus"]; ok {
			_ = converter.GetDefaultDataConverter().FromPayload(p, &r.Weft)
		}
		out = append(out, r)
		if len(out) >= limit {
			break
		}
	}
	return out, nil
}

func newRunsCommand() *cobra.Command {
	var conn connFlags
	var asJSON bool
	var limit int
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List recent weft runs with their status",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := conn.dial(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			runs, err := listRuns(cmd.Context(), c, fmt.Sprintf("WorkflowType = %q", workflows.WorkflowType), limit)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, runs)
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tWORKFLOW\tSTATUS\tSTARTED")
			for _, r := range runs {
				status := r.Status
				if r.Weft == workflows.StatusAwaitingReview && r.Status == "running" {
					status = "awaiting review"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, r.Workflow, status, r.Started.Local().Format(time.DateTime))
			}
			return tw.Flush()
		},
	}
	conn.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().IntVar(&limit, "limit", 20, "how many runs")
	return cmd
}

func newCancelCommand() *cobra.Command {
	var conn connFlags
	cmd := &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a run (steps in flight are cancelled; finished steps keep their results)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := conn.dial(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			if err := c.CancelWorkflow(cmd.Context(), args[0], ""); err != nil {
				return fmt.Errorf("cancelling %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Cancellation requested for %s\n", args[0])
			return nil
		},
	}
	conn.register(cmd)
	return cmd
}

func newHistoryCommand() *cobra.Command {
	var conn connFlags
	cmd := &cobra.Command{
		Use:   "history ID",
		Short: "Show a run's step timeline",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := conn.dial(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			st, err := queryState(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			start := st.StartedAt.AsTime()
			out := cmd.OutOrStdout()
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "STEP\tTOOL\tSTATUS\tSTART\tDURATION\tATTEMPTS\tDETAIL")
			for _, s := range st.Steps {
				at, dur := "-", "-"
				if s.StartedAt != nil {
					at = "+" + s.StartedAt.AsTime().Sub(start).Round(time.Millisecond).String()
				}
				if s.FinishedAt != nil {
					dur = (time.Duration(s.DurationMs) * time.Millisecond).String()
				}
				detail := s.Summary
				if s.Error != "" {
					detail = s.Error
				} else if s.Reason != "" {
					detail = s.Reason
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", s.Id, s.Tool, s.Status, at, dur, s.Attempts, detail)
			}
			return tw.Flush()
		},
	}
	conn.register(cmd)
	return cmd
}
