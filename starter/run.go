package starter

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	weftclient "github.com/weftworks/weft/client"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/workflows/dsl"
)

type runOptions struct {
	runFlags
	conn     connFlags
	detach   bool
	id       string
	quiet    bool
	verbose  bool
	dryRun   bool
	interval time.Duration
	// failedShown is the failed step whose error the progress lines already showed.
	failedShown string
}

func newRunCommand() *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run FILE|TEMPLATE [--input name=value]...",
		Short: "Run a workflow durably on Temporal and follow its progress",
		Long: "Validates the file first (a bad file never creates an execution), starts it, and shows each\n" +
			"step as it finishes, model text as it streams and agents' tool calls. Exit status: 0 completed,\n" +
			"1 failed, 2 invalid input, 3 still running (--detach, or interrupted: the run goes on; follow\n" +
			"it with `weft status ID`). --json --verbose prints one JSON event per line (see the README).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, args[0]) },
	}
	o.register(cmd)
	o.conn.register(cmd)
	cmd.Flags().BoolVar(&o.detach, "detach", false, "start the run and return its id")
	cmd.Flags().StringVar(&o.id, "id", "", "workflow id (default: weft-<name>-<random>); refused while a run with that id is running")
	cmd.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "print only the output")
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "show step outputs and the full error chain; with --json, stream JSONL events")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "validate and print the plan without running")
	cmd.Flags().DurationVar(&o.interval, "poll", 250*time.Millisecond, "how often progress is read")
	return cmd
}

func (o *runOptions) run(cmd *cobra.Command, arg string) error {
	name, data, err := readWorkflow(arg)
	if err != nil {
		return err
	}
	w, err := dsl.Load(name, data)
	if err != nil {
		return invalid(err)
	}
	if o.id != "" {
		if err := weftclient.CheckID(o.id); err != nil {
			return invalid(err)
		}
	}
	resolve := o.resolveInputs
	if o.dryRun {
		resolve = o.planInputs // a plan shows placeholders for what is not given yet
	}
	inputs, err := resolve(w)
	if err != nil {
		return err
	}
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if o.dryRun {
		p := dsl.NewPlan(w, inputs, o.overrides())
		if o.asJSON {
			return writeJSON(out, p)
		}
		_, err := fmt.Fprint(out, p.Text())
		return err
	}
	req, err := weftclient.Request(w, weftclient.StartOptions{Source: name, Inputs: inputs, Defaults: o.overrides()})
	if err != nil {
		return clientError(err)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := o.conn.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	run, err := c.StartRequest(ctx, w.Def.Name, o.id, req)
	if err != nil {
		return clientError(err)
	}
	id := run.ID
	if o.detach {
		if o.asJSON {
			_ = writeJSON(out, map[string]string{"id": id, "runId": run.RunID})
		} else {
			fmt.Fprintf(out, "Started %s\n  follow: weft status %s\n  cancel: weft cancel %s\n", id, id, id)
		}
		return &ExitError{Code: ExitRunning, Silent: true}
	}
	if !o.quiet && !o.asJSON {
		header(out, "weft: "+w.Def.Name+"  ("+id+")")
	}
	p := &progress{o: o, out: out, id: id}
	res, runErr := c.Stream(ctx, id, weftclient.StreamOptions{Interval: o.interval, NoDeltas: o.quiet || (o.asJSON && !o.verbose)}, p.event)
	p.endStream()
	if runErr != nil && ctx.Err() != nil && errors.Is(runErr, ctx.Err()) {
		fmt.Fprintf(errOut, "\nweft: stopped following; %s is still running. Follow it with: weft status %s\n", id, id)
		return &ExitError{Code: ExitRunning, Silent: true}
	}
	o.failedShown = p.failed
	return o.finish(out, errOut, id, res, runErr, w.Def.Formatters)
}

// progress prints a run's events as they come.
type progress struct {
	o         *runOptions
	out       io.Writer
	id        string
	streaming string // the step whose model text is being printed
	failed    string // a failed step whose line (with its error) was printed
}

func (p *progress) endStream() {
	if p.streaming != "" {
		fmt.Fprintln(p.out)
		p.streaming = ""
	}
}

func (p *progress) event(e weftclient.Event) {
	o := p.o
	if o.asJSON {
		if o.verbose {
			b, _ := json.Marshal(e)
			fmt.Fprintln(p.out, string(int64sAsNumbers(b)))
		}
		return
	}
	if o.quiet {
		return
	}
	switch e.Type {
	case weftclient.EventLLMDelta:
		if p.streaming != e.Step {
			p.endStream()
			fmt.Fprintf(p.out, "  … %s: ", e.Step)
			p.streaming = e.Step
		}
		fmt.Fprint(p.out, strings.ReplaceAll(e.Text, "\n", "\n      "))
	case weftclient.EventStepCompleted, weftclient.EventStepFailed, weftclient.EventStepSkipped, weftclient.EventStepCancelled:
		p.endStream()
		fmt.Fprintln(p.out, stepLine(e.StepState, p.id))
		if o.verbose && e.StepState.Output != nil {
			b, _ := e.StepState.Output.MarshalJSON()
			fmt.Fprintf(p.out, "      output: %s\n", truncate(string(b), 400))
		}
		for _, w := range e.StepState.Warnings {
			fmt.Fprintf(p.out, "      warning: %s\n", w)
		}
		if e.Type == weftclient.EventStepFailed && p.failed == "" {
			p.failed = e.Step
		}
	case weftclient.EventToolCallFinished:
		p.endStream()
		fmt.Fprintln(p.out, toolCallLine(e.Call))
	case weftclient.EventReviewRequested:
		p.endStream()
		r := e.Review
		name := r.Step
		if e.StepState != nil && e.StepState.Name != "" {
			name = e.StepState.Name
		}
		fmt.Fprintf(p.out, "  ⏸ %-32s awaiting review %s: %s\n", name, r.Id, r.Title)
		if r.Data != nil {
			b, _ := r.Data.MarshalJSON()
			fmt.Fprintf(p.out, "      data: %s\n", truncate(string(b), 300))
		}
		fmt.Fprintf(p.out, "      decide: weft review %s approve|edit|reject --id '%s'\n", p.id, r.Id)
	}
}

func (o *runOptions) finish(out, errOut io.Writer, id string, res *weftv1.RunResult, runErr error, formatters map[string]any) error {
	if runErr != nil {
		if o.asJSON {
			if !o.verbose {
				_ = writeJSON(out, map[string]any{"id": id, "status": "failed", "error": weftclient.Cause(runErr)})
			}
		} else {
			if o.failedShown != "" && !o.verbose && strings.HasPrefix(weftclient.Cause(runErr), fmt.Sprintf("step %q: ", o.failedShown)) {
				fmt.Fprintf(errOut, "\nFailed at step %s (its error is above).\n", o.failedShown)
			} else {
				fmt.Fprintf(errOut, "\nFailed: %s\n", weftclient.Cause(runErr))
			}
			if o.verbose {
				fmt.Fprintf(errOut, "  (full error: %v)\n", runErr)
			}
			fmt.Fprintf(errOut, "  details: weft status %s\n", id)
		}
		return &ExitError{Code: ExitFailed, Silent: true}
	}
	if o.asJSON {
		if o.verbose {
			return nil // run_completed carried the result
		}
		return writeProto(out, res)
	}
	if !o.quiet {
		fmt.Fprintf(out, "\nComplete. %d steps, %dms total", len(res.Steps), res.DurationMs)
		if u := res.Usage; u != nil && (u.TotalTokens > 0 || u.CostUsd > 0) {
			fmt.Fprintf(out, ", %s", usageText(u))
		}
		fmt.Fprintln(out, ".")
		fmt.Fprintln(out, "\nOutput:")
	}
	return renderOutput(out, formatters, res.Output)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
