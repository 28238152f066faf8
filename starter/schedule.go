package starter

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/workflows/dsl"
)

func newScheduleCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schedule create|list|describe|pause|unpause|trigger|delete",
		Short: "Run workflows on a cron expression or an interval (Temporal Schedules)",
	}
	var conn connFlags
	var f runFlags
	var cron, overlap, note string
	var every time.Duration
	var paused bool
	create := &cobra.Command{
		Use:   "create ID FILE|TEMPLATE (--cron EXPR | --every DURATION) [--input name=value]...",
		Short: "Create a schedule that starts the workflow with these inputs",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			w, err := loadWorkflow(args[1])
			if err != nil {
				return err
			}
			// The file's own schedule, unless flags say otherwise.
			var fileInputs map[string]any
			if sch := w.Def.Schedule; sch != nil && cron == "" && every == 0 {
				cron = sch.Cron
				if sch.Every != "" {
					if every, err = time.ParseDuration(sch.Every); err != nil {
						return invalid(fmt.Errorf("schedule.every %q: %w", sch.Every, err))
					}
				}
				if sch.Overlap != "" && !cmd.Flags().Changed("overlap") {
					overlap = sch.Overlap
				}
				fileInputs = sch.Inputs
			}
			raw, typed, err := f.inputsFromFlags()
			if err != nil {
				return invalid(err)
			}
			for k, v := range fileInputs {
				if _, set := typed[k]; !set {
					if typed == nil {
						typed = map[string]any{}
					}
					typed[k] = v
				}
			}
			inputs, err := dsl.ResolveInputs(w.Def, raw, typed)
			if err != nil {
				return invalid(err)
			}
			return conn.with(cmd.Context(), func(c *weftclient.Client) error {
				err := c.CreateSchedule(cmd.Context(), w, weftclient.ScheduleOptions{ID: args[0], Cron: cron, Every: every, Overlap: overlap, Paused: paused, Note: note,
					Start: weftclient.StartOptions{Source: args[1], Inputs: inputs, Defaults: f.overrides()}})
				if err != nil {
					return clientError(err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "Schedule %s created: %s runs %s.\n  see it: weft schedule describe %s\n", args[0], w.Def.Name, when(cron, every), args[0])
				return nil
			})
		},
	}
	f.register(create)
	conn.register(create)
	create.Flags().StringVar(&cron, "cron", "", `cron expression, e.g. "0 6 * * MON-FRI"`)
	create.Flags().DurationVar(&every, "every", 0, "interval, e.g. 1h")
	create.Flags().StringVar(&overlap, "overlap", "skip", "when a run is still going: skip, buffer_one, buffer_all, cancel_other, terminate_other, allow_all")
	create.Flags().BoolVar(&paused, "paused", false, "create it paused")
	create.Flags().StringVar(&note, "note", "", "why")

	var lconn connFlags
	var asJSON bool
	list := &cobra.Command{
		Use: "list", Short: "List the schedules of weft workflows", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return lconn.with(cmd.Context(), func(c *weftclient.Client) error {
				list, err := c.ListSchedules(cmd.Context())
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), list)
				}
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "SCHEDULE\tWORKFLOW\tPAUSED\tNEXT")
				for _, s := range list {
					next := "-"
					if len(s.Next) > 0 {
						next = s.Next[0].Local().Format(time.DateTime)
					}
					fmt.Fprintf(tw, "%s\t%s\t%v\t%s\n", s.ID, s.Workflow, s.Paused, next)
				}
				return tw.Flush()
			})
		},
	}
	lconn.register(list)
	jsonFlag(list, &asJSON, "print JSON")

	var dconn connFlags
	describe := &cobra.Command{
		Use: "describe ID", Short: "Show a schedule: next times and recent runs", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return dconn.with(cmd.Context(), func(c *weftclient.Client) error {
				s, err := c.DescribeSchedule(cmd.Context(), args[0])
				if err != nil {
					return clientError(err)
				}
				return writeJSON(cmd.OutOrStdout(), s)
			})
		},
	}
	dconn.register(describe)
	cmd.AddCommand(create, list, describe)
	for _, action := range []weftclient.ScheduleAction{weftclient.SchedulePause, weftclient.ScheduleUnpause, weftclient.ScheduleTrigger, weftclient.ScheduleDelete} {
		var aconn connFlags
		var anote string
		a := &cobra.Command{
			Use: string(action) + " ID", Short: strings.ToUpper(string(action[:1])) + string(action[1:]) + " a schedule", Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return aconn.with(cmd.Context(), func(c *weftclient.Client) error {
					if err := c.DoSchedule(cmd.Context(), args[0], action, anote); err != nil {
						return clientError(err)
					}
					fmt.Fprintf(cmd.OutOrStdout(), "Schedule %s: %s done.\n", args[0], action)
					return nil
				})
			},
		}
		aconn.register(a)
		a.Flags().StringVar(&anote, "note", "", "why")
		cmd.AddCommand(a)
	}
	return cmd
}

func when(cron string, every time.Duration) string {
	if cron != "" {
		return "on " + cron
	}
	return "every " + every.String()
}
