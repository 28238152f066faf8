package starter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/workflows"
)

func newReviewCommand() *cobra.Command {
	var conn connFlags
	var step, data, comment, reviewer string
	cmd := &cobra.Command{
		Use:   "review ID approve|edit|reject [--step S] [--data JSON|@file.json] [--comment ..] [--reviewer ..]",
		Short: "Decide a pending review step",
		Long: "Sends the decision as the `review` Update: the run validates it first (unknown step, a step\n" +
			"not awaiting review, a bad decision) and nothing reaches history when it is refused.\n" +
			"--step can be left out when exactly one review is pending. edit needs --data, the corrected proposal.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, decision := args[0], args[1]
			switch decision {
			case workflows.DecisionApprove, workflows.DecisionEdit, workflows.DecisionReject:
			default:
				return invalid(fmt.Errorf("decision %q: use approve, edit or reject", decision))
			}
			d := map[string]any{"decision": decision, "reviewer": reviewer, "comment": comment}
			if step != "" {
				d["step"] = step
			}
			if data != "" {
				raw := []byte(data)
				if strings.HasPrefix(data, "@") {
					var err error
					if raw, err = os.ReadFile(data[1:]); err != nil {
						return invalid(fmt.Errorf("--data: %w", err))
					}
				}
				var v any
				if err := json.Unmarshal(raw, &v); err != nil {
					return invalid(fmt.Errorf("--data is not JSON: %w (quote text as a JSON string: '\"new text\"')", err))
				}
				d["data"] = v
			} else if decision == workflows.DecisionEdit {
				return invalid(errors.New("edit needs --data with the corrected proposal (JSON, or @file.json)"))
			}
			payload, err := json.Marshal(d)
			if err != nil {
				return err
			}
			c, err := conn.dial(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
				WorkflowID: id, UpdateName: workflows.UpdateReview,
				Args: []any{json.RawMessage(payload)}, WaitForStage: client.WorkflowUpdateStageCompleted,
			})
			if err == nil {
				var res weftv1.ReviewDecision
				err = h.Get(ctx, &res)
				if err == nil {
					fmt.Fprintf(cmd.OutOrStdout(), "%s: %s recorded for step %s\n", id, res.Decision, res.Step)
					return nil
				}
			}
			return invalid(fmt.Errorf("review refused: %s", cause(err)))
		},
	}
	conn.register(cmd)
	cmd.Flags().StringVar(&step, "step", "", "the review step (optional when one review is pending)")
	cmd.Flags().StringVar(&data, "data", "", "edited proposal as JSON, or @file.json")
	cmd.Flags().StringVar(&comment, "comment", "", "why")
	cmd.Flags().StringVar(&reviewer, "reviewer", envOr("USER", ""), "who decides (default $USER)")
	return cmd
}

func newReviewsCommand() *cobra.Command {
	var conn connFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "reviews",
		Short: "List runs waiting for a review decision",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := conn.dial(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			runs, err := listRuns(cmd.Context(), c, fmt.Sprintf(`WorkflowType = %q AND ExecutionStatus = "Running" AND WeftStatus = %q`, workflows.WorkflowType, workflows.StatusAwaitingReview), 100)
			if err != nil {
				return err
			}
			type pending struct {
				ID       string                  `json:"id"`
				Workflow string                  `json:"workflow"`
				Reviews  []*weftv1.ReviewRequest `json:"-"`
				Steps    []string                `json:"steps"`
			}
			var all []pending
			for _, r := range runs {
				p := pending{ID: r.ID, Workflow: r.Workflow}
				if st, err := queryState(cmd.Context(), c, r.ID); err == nil {
					p.Reviews = st.PendingReviews
					for _, rv := range st.PendingReviews {
						p.Steps = append(p.Steps, rv.Step)
					}
				}
				all = append(all, p)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, all)
			}
			if len(all) == 0 {
				fmt.Fprintln(out, "No run is waiting for a review.")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tWORKFLOW\tSTEP\tTITLE")
			for _, p := range all {
				for _, rv := range p.Reviews {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.ID, p.Workflow, rv.Step, rv.Title)
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintln(out, "\nDecide: weft review ID approve|edit|reject --step STEP")
			return nil
		},
	}
	conn.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
