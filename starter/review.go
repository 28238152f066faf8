package starter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/internal/safefile"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// defaultReviewer is who decides when --reviewer is not given: $USER, else the OS account.
func defaultReviewer() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return ""
}

func newReviewCommand() *cobra.Command {
	var conn connFlags
	var gateID, step, data, comment, reviewer string
	var all, always bool
	cmd := &cobra.Command{
		Use:   "review ID approve|edit|reject [--id GATE | --step S | --all] [--always] [--data JSON|@file.json] [--comment ..] [--reviewer ..]",
		Short: "Decide a pending review (a review step, a forEach item's review, an agent's tool call)",
		Long: "Sends the decision as the `review` Update: the run validates it first (unknown review, one not\n" +
			"pending, a bad decision, edited data of the wrong shape) and nothing reaches history when it is\n" +
			"refused. Each pending review has its own id (`weft status ID` lists them): name it with --id, or\n" +
			"with --step when that step waits on one review; leave both out when one review is pending.\n" +
			"--all decides every pending review (of --step, if given) one by one and prints each.\n" +
			"edit needs --data, the corrected proposal. Reviews inside child runs are decided the same way.\n" +
			"--always (an agent's tool call, approve or reject): the later calls of that tool in the run are\n" +
			"decided the same way without waiting, each recorded as \"approved by rule of WHO at TIME\".",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			d := weftclient.Decision{ID: gateID, Step: step, Decision: args[1], Reviewer: reviewer, Comment: comment}
			if always {
				d.Scope = runwire.ScopeRun
			}
			if data != "" {
				raw := []byte(data)
				if strings.HasPrefix(data, "@") {
					var err error
					if raw, err = safefile.ReadHint(data[1:], MaxInputFileBytes, "--data",
						"a review's data travels in the run's history, 2 MB at most: keep the proposal small"); err != nil {
						return invalid(err)
					}
				}
				if err := json.Unmarshal(raw, &d.Data); err != nil {
					return invalid(fmt.Errorf("--data is not JSON: %w (quote text as a JSON string: '\"new text\"')", err))
				}
			}
			if err := d.Check(); err != nil {
				if always && d.Decision == runwire.DecisionEdit {
					return invalid(errors.New("--always is for approve or reject (the tool's later calls are decided the same way); an edit is for one call: leave out --always"))
				}
				if d.Decision == runwire.DecisionEdit {
					return invalid(errors.New("edit needs --data with the corrected proposal (JSON, or @file.json)"))
				}
				return invalid(err)
			}
			if d.Reviewer == "" {
				return invalid(errors.New("who decides? give --reviewer NAME (no $USER or OS account to default to)"))
			}
			if all && gateID != "" {
				return invalid(errors.New("--all decides every pending review; leave out --id (use --step to limit it to one step)"))
			}
			return conn.with(cmd.Context(), func(c *weftclient.Client) error {
				out := cmd.OutOrStdout()
				if all {
					res, err := c.ReviewAll(cmd.Context(), id, step, d)
					for _, r := range res {
						fmt.Fprintf(out, "%s: %s recorded for %s%s\n", id, r.Decision, r.Id, alwaysNote(r))
					}
					return clientError(err)
				}
				res, err := c.Review(cmd.Context(), id, d)
				if err != nil {
					return clientError(err)
				}
				fmt.Fprintf(out, "%s: %s recorded for %s%s\n", id, res.Decision, res.Id, alwaysNote(res))
				return nil
			})
		},
	}
	conn.register(cmd)
	cmd.Flags().StringVar(&gateID, "id", "", "the review's id (see `weft status ID`); optional when one review is pending")
	cmd.Flags().StringVar(&step, "step", "", "the review step, when it waits on one review")
	cmd.Flags().BoolVar(&all, "all", false, "decide every pending review (of --step) one by one")
	cmd.Flags().BoolVar(&always, "always", false, "an agent's tool call: decide the later calls of that tool in the run the same way (approve always, reject always)")
	cmd.Flags().StringVar(&data, "data", "", "edited proposal as JSON, or @file.json")
	cmd.Flags().StringVar(&comment, "comment", "", "why")
	cmd.Flags().StringVar(&reviewer, "reviewer", defaultReviewer(), "who decides (default $USER, else the OS account)")
	return cmd
}

// alwaysNote is what a run-wide decision adds to the line that says it was recorded.
func alwaysNote(d *weftv1.ReviewDecision) string {
	if d.GetScope() != runwire.ScopeRun {
		return ""
	}
	return " and the later calls of its tool in this run"
}

// defaultReviewRuns is how many waiting runs weft reviews reads unless --limit says otherwise.
const defaultReviewRuns = 100

func newReviewsCommand() *cobra.Command {
	var conn connFlags
	var asJSON bool
	var limit int
	cmd := &cobra.Command{
		Use:   "reviews",
		Short: "List the reviews runs are waiting for",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 || limit > weftclient.MaxReviewRuns {
				return invalid(fmt.Errorf("--limit %d: give a number of waiting runs to read from 1 to %d", limit, weftclient.MaxReviewRuns))
			}
			return conn.with(cmd.Context(), func(c *weftclient.Client) error {
				return listReviews(cmd.Context(), c, cmd.OutOrStdout(), cmd.ErrOrStderr(), limit, asJSON)
			})
		},
	}
	conn.register(cmd)
	jsonFlag(cmd, &asJSON, "print JSON (a note that the listing was cut goes to stderr)")
	cmd.Flags().IntVar(&limit, "limit", defaultReviewRuns, fmt.Sprintf("how many waiting runs to read, the newest first (at most %d)", weftclient.MaxReviewRuns))
	return cmd
}

// listReviews prints the reviews waiting in the limit newest runs waiting, and when more runs
// wait, says so (to errOut under --json, whose output stays the list).
func listReviews(ctx context.Context, c *weftclient.Client, out, errOut io.Writer, limit int, asJSON bool) error {
	l, err := c.ListPendingReviews(ctx, weftclient.ListOptions{Limit: limit})
	if err != nil {
		return err
	}
	// One entry per run the reviews live in (a child run's under its own id, which names
	// its parent; a chat session's marked chat): weft review takes that id.
	type pending struct {
		Run      string          `json:"run"`
		Workflow string          `json:"workflow"`
		Of       string          `json:"of,omitempty"` // the run that started this child run
		Chat     bool            `json:"chat,omitempty"`
		Reviews  json.RawMessage `json:"reviews"`
		list     []*weftv1.ReviewRequest
	}
	all := []*pending{}
	in := map[string]*pending{}
	for _, r := range l.Reviews {
		p, ok := in[r.In.ID]
		if !ok {
			p = &pending{Run: r.In.ID, Workflow: r.In.Workflow, Chat: r.Chat}
			if r.Run.ID != r.In.ID {
				p.Of = r.Run.ID
			}
			in[r.In.ID] = p
			all = append(all, p)
		}
		p.list = append(p.list, r.Review)
	}
	for _, p := range all {
		p.Reviews = protoList(p.list)
	}
	more := "" // at the highest bound, Cut says when the older ones are listed
	if limit < weftclient.MaxReviewRuns {
		more = fmt.Sprintf("weft reviews --limit %d reads more.", weftclient.MaxReviewRuns)
	}
	cut := l.Cut(len(l.Reviews), more)
	if asJSON {
		if cut != "" {
			fmt.Fprintln(errOut, "weft reviews: "+cut)
		}
		return writeJSON(out, all)
	}
	if len(all) == 0 {
		if cut != "" {
			fmt.Fprintln(out, cut)
			return nil
		}
		fmt.Fprintln(out, "No run is waiting for a review.")
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tWORKFLOW\tREVIEW\tTITLE")
	for _, p := range all {
		for _, rv := range p.list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Run, p.Workflow, rv.Id, rv.Title)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if cut != "" {
		fmt.Fprintln(out, "\n"+cut)
	}
	fmt.Fprintln(out, "\nDecide: weft review RUN approve|edit|reject --id REVIEW")
	return nil
}
