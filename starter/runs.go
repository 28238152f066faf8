package starter

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	weftclient "github.com/weftworks/weft/client"
)

func newRunsCommand() *cobra.Command {
	var conn connFlags
	var asJSON bool
	var limit int
	var after, search string
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List recent weft runs with their status, a page at a time",
		Long: "List weft runs, newest start first, a page of --limit at a time. When there are more, the last\n" +
			"line says how to read the next page (--after TOKEN; runs started meanwhile do not shift it).\n" +
			"--search keeps runs whose id, workflow, status or starter contain every word.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 || limit > maxRunsPage {
				return invalid(fmt.Errorf("--limit %d: give 1 to %d runs a page", limit, maxRunsPage))
			}
			if err := weftclient.CheckPageToken(after); err != nil {
				return invalid(fmt.Errorf("--after: %w", err))
			}
			return conn.with(cmd.Context(), func(c *weftclient.Client) error {
				page, err := c.ListPage(cmd.Context(), weftclient.ListOptions{Limit: limit, After: after, Search: search})
				if err != nil {
					return clientError(err)
				}
				out := cmd.OutOrStdout()
				more := ""
				if page.Next != "" {
					more = "more: " + nextRunsCommand(cmd.Flags().Changed("limit"), limit, search, asJSON, page.Next)
				}
				if asJSON {
					if more != "" {
						fmt.Fprintln(cmd.ErrOrStderr(), more) // stdout stays one JSON array
					}
					return writeJSON(out, page.Runs)
				}
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tWORKFLOW\tSTATUS\tSTARTED")
				for _, r := range page.Runs {
					status := strings.ReplaceAll(r.RunStatus(), "_", " ")
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, r.Workflow, status, r.Started.Local().Format(time.DateTime))
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				if more != "" {
					fmt.Fprintln(out, more)
				}
				return nil
			})
		},
	}
	conn.register(cmd)
	jsonFlag(cmd, &asJSON, "print JSON (the next page's command goes to stderr)")
	cmd.Flags().IntVar(&limit, "limit", 20, fmt.Sprintf("how many runs a page (at most %d)", maxRunsPage))
	cmd.Flags().StringVar(&after, "after", "", "the page token a previous listing printed: list the runs after its page")
	cmd.Flags().StringVar(&search, "search", "", "keep runs whose id, workflow, status or starter contain every word")
	return cmd
}

// maxRunsPage is the most runs client.ListPage reads a page.
const maxRunsPage = 999

// nextRunsCommand is the weft runs command line that reads the page after this one: the same
// page size, search and output, and the token.
func nextRunsCommand(limitGiven bool, limit int, search string, asJSON bool, next string) string {
	args := []string{"weft", "runs"}
	if limitGiven {
		args = append(args, "--limit", strconv.Itoa(limit))
	}
	if search != "" {
		args = append(args, "--search", shellWord(search))
	}
	if asJSON {
		args = append(args, "--json")
	}
	return strings.Join(append(args, "--after", next), " ")
}

// shellWord quotes s for a POSIX shell when it holds anything but plain word characters.
func shellWord(s string) string {
	plain := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@=,+", r))
	}) < 0
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func newCancelCommand() *cobra.Command {
	var conn connFlags
	var force bool
	cmd := &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a run (steps in flight are cancelled; finished steps keep their results)",
		Long: "Cancel a run: steps in flight are cancelled, finished steps keep their results. A run whose workflow\n" +
			"task keeps failing never sees a cancel: it is terminated, and weft says so. --force terminates any run.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return conn.with(cmd.Context(), func(c *weftclient.Client) error {
				terminated, err := c.CancelRun(cmd.Context(), args[0], strings.TrimSpace(defaultReviewer()+" (weft CLI)"), force)
				if err != nil {
					return clientError(err)
				}
				if terminated != "" {
					fmt.Fprintf(cmd.OutOrStdout(), "Terminated %s: %s\n", args[0], terminated)
					return nil
				}
				fmt.Fprintf(cmd.OutOrStdout(), "Cancellation requested for %s\n", args[0])
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "terminate the run after requesting the cancel (it ends at once, without its own cleanup)")
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
			return conn.with(cmd.Context(), func(c *weftclient.Client) error {
				// the run as every surface shows it: a closed run's steps have their outcomes
				e, err := c.Execution(cmd.Context(), args[0])
				if err != nil {
					return clientError(err)
				}
				if e.State == nil {
					return clientError(errors.New(e.StateErr))
				}
				st := e.State
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
					if weftclient.UsageOf(s.Usage).Billed() {
						fmt.Fprintf(tw, "  usage\t\t\t\t\t\t%s\n", usageText(s.Usage))
					}
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				if u := st.Usage; weftclient.UsageOf(u).Billed() {
					fmt.Fprintf(out, "\nRun usage: %s\n", usageText(u))
				}
				return nil
			})
		},
	}
	conn.register(cmd)
	return cmd
}
