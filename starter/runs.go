package starter

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/workflows"
)

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
			runs, err := c.List(cmd.Context(), weftclient.ListOptions{Limit: limit})
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
			if err := c.Cancel(cmd.Context(), args[0], strings.TrimSpace(defaultReviewer()+" (weft CLI)")); err != nil {
				return clientError(err)
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
			st, err := c.State(cmd.Context(), args[0])
			if err != nil {
				return clientError(err)
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
				for _, tc := range s.ToolCalls {
					fmt.Fprintf(tw, "  ↳ %s\t%s\t%s\t\t%dms\t\t#%d\n", tc.Id, tc.Tool, tc.Status, tc.DurationMs, tc.Iteration)
				}
				if s.Usage != nil && (s.Usage.TotalTokens > 0 || s.Usage.CostUsd > 0) {
					fmt.Fprintf(tw, "  usage\t\t\t\t\t\t%s\n", usageText(s.Usage))
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if u := st.Usage; u != nil && (u.TotalTokens > 0 || u.CostUsd > 0) {
				fmt.Fprintf(out, "\nRun usage: %s\n", usageText(u))
			}
			return nil
		},
	}
	conn.register(cmd)
	return cmd
}
