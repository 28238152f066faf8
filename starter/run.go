package starter

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/temporal"
	"golang.org/x/term"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/events"
	"github.com/weftworks/weft/internal/english"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
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
	// since resumes following after the event with this sequence number (weft status --follow --since).
	since int64
	// failedShown is the failed step whose error the progress lines already showed.
	failedShown string
	// stoppedAt is the step a cancellation stopped in flight (older workers record it as failed).
	stoppedAt string
	// cancelledBy is who asked a cancelled run to stop ("" when unknown).
	cancelledBy string
}

func newRunCommand() *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run FILE|TEMPLATE [--input name=value]...",
		Short: "Run a workflow durably on Temporal and follow its progress",
		Long: "Validates the file first (a bad file never creates an execution), starts it, and shows each\n" +
			"step as it finishes, model text as it streams and agents' tool calls. Required inputs not given\n" +
			"are asked for when stdin is a terminal. Exit status: 0 completed (or started, with --detach),\n" +
			"1 failed or cancelled, 2 invalid input, 3 still running (interrupted: the run goes on; follow it\n" +
			"again with `weft status --follow ID`). --json --verbose prints one JSON event per line (docs/agents.md: a run's events).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, args[0]) },
	}
	o.register(cmd)
	o.conn.register(cmd)
	cmd.Flags().BoolVar(&o.detach, "detach", false, "start the run and return its id (exit 0; follow it with weft status --follow ID)")
	cmd.Flags().StringVar(&o.id, "id", "", "workflow id (default: weft-<name>-<random>); refused while a run with that id is running")
	cmd.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "print only the output")
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "show step outputs and the full error chain; with --json, stream JSONL events")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "validate and print the plan without running")
	cmd.Flags().DurationVar(&o.interval, "poll", 250*time.Millisecond, "how often progress is read when the run cannot be waited on (an older worker); otherwise each event shows as it happens")
	return cmd
}

func (o *runOptions) run(cmd *cobra.Command, arg string) error {
	src, err := readWorkflowSource(arg)
	if err != nil {
		return err
	}
	name := src.name
	w, err := src.load()
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
	} else if stdinIsTerminal(cmd.InOrStdin()) {
		if err := o.askMissing(cmd.InOrStdin(), cmd.ErrOrStderr(), w); err != nil {
			return err
		}
	}
	inputs, err := resolve(w)
	if err != nil {
		return err
	}
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	// what the compile noticed (an ignored vai field, a step with no collection), as weft
	// validate and weft plan print it: a run, or its plan, never hides it
	for _, d := range w.Warnings {
		fmt.Fprintln(errOut, d.String())
	}
	for _, warn := range o.unreadOverrides(w) {
		fmt.Fprintf(errOut, "warning: %s\n", warn)
	}
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
	return o.conn.with(ctx, func(c *weftclient.Client) error {
		run, err := c.StartRequest(ctx, w.Def.Name, o.id, req)
		if err != nil {
			return clientError(err)
		}
		id := run.ID
		if o.detach {
			if o.asJSON {
				_ = writeJSON(out, map[string]string{"id": id, "runId": run.RunID})
			} else {
				fmt.Fprintf(out, "Started %s\n  follow: weft status --follow %s\n  cancel: weft cancel %s\n", id, id, id)
			}
			return nil // started: a script can go on with `&&`
		}
		if !o.quiet && !o.asJSON {
			header(out, "weft: "+w.Def.Name+"  ("+id+")")
		}
		return o.follow(ctx, c, out, errOut, id, w.Def.Formatters)
	})
}

// follow shows run id's progress until it ends (weft run, weft status --follow) and reports how it
// ended: 0 completed, 1 failed or cancelled, 3 when ctx ends first (the run goes on).
func (o *runOptions) follow(ctx context.Context, c *weftclient.Client, out, errOut io.Writer, id string, formatters map[string]any) error {
	p := &progress{o: o, out: out, id: id}
	res, runErr := c.Stream(ctx, id, weftclient.StreamOptions{Interval: o.interval, NoDeltas: o.quiet || (o.asJSON && !o.verbose),
		Since: o.since, StepOutputs: o.verbose}, p.event)
	p.endStream()
	if runErr != nil && ctx.Err() != nil && errors.Is(runErr, ctx.Err()) {
		fmt.Fprintf(errOut, "\nweft: stopped following; %s is still running. Follow it again with: weft status --follow %s\n", id, id)
		return &ExitError{Code: ExitRunning, Silent: true}
	}
	o.failedShown, o.stoppedAt = p.failed, p.stopped
	var ce *temporal.CanceledError
	if errors.As(runErr, &ce) {
		o.cancelledBy = c.CancelledBy(context.WithoutCancel(ctx), id)
	}
	return o.finish(out, errOut, id, res, runErr, formatters)
}

// stdinIsTerminal reports whether r is a terminal a person types into (tests replace it).
var stdinIsTerminal = func(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// askMissing asks, on errOut, for each required input without a default that the flags do not
// give, reading one line per input from in; the answers become --input flags. An empty answer or
// the end of input leaves the input missing (the usual error names it).
func (o *runOptions) askMissing(in io.Reader, errOut io.Writer, w *dsl.Workflow) error {
	raw, typed, err := o.inputsFromFlags()
	if err != nil {
		return invalid(err)
	}
	var missing []string
	for name, def := range w.Def.Inputs {
		_, given := raw[name]
		_, inFile := typed[name]
		if def.Required && def.Default == nil && !given && !inFile {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	r := bufio.NewReader(in)
	for _, name := range missing {
		def := w.Def.Inputs[name]
		desc := def.Type
		if def.Description != "" {
			desc += ", " + def.Description
		}
		fmt.Fprintf(errOut, "%s (%s): ", name, desc)
		line, err := r.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if line != "" {
			o.inputs = append(o.inputs, name+"="+line)
		}
		if err != nil {
			fmt.Fprintln(errOut)
			break
		}
	}
	return nil
}

// progress prints a run's events as they come.
type progress struct {
	o         *runOptions
	out       io.Writer
	id        string
	streaming string // the step whose model text is being printed
	failed    string // a failed step whose line (with its error) was printed
	stopped   string // the step a cancellation stopped in flight
}

func (p *progress) endStream() {
	if p.streaming != "" {
		fmt.Fprintln(p.out)
		p.streaming = ""
	}
}

func (p *progress) event(e events.Event) {
	o := p.o
	if o.asJSON {
		if o.verbose {
			b, _ := json.Marshal(e)
			fmt.Fprintln(p.out, string(escapeControls(b)))
		}
		return
	}
	if o.quiet {
		return
	}
	switch e.Type {
	case events.LLMDelta:
		// A retry (a worker died mid-answer) or a repair starts a new attempt: its text goes on a
		// line of its own, said to replace what the line above showed, never appended to it.
		stream := fmt.Sprintf("%s#%d", e.Activity, e.Attempt)
		if p.streaming != stream {
			p.endStream()
			name := e.Key
			if name == "" {
				name = e.Step
			}
			switch {
			case e.Restarted:
				name += " " + restartNote(e.Attempt)
			case e.Attempt > 1:
				name += fmt.Sprintf(" (attempt %d)", e.Attempt)
			}
			fmt.Fprintf(p.out, "  … %s: ", name)
			p.streaming = stream
		}
		fmt.Fprint(p.out, strings.ReplaceAll(e.Text, "\n", "\n      "))
	case events.StepCompleted, events.StepFailed, events.StepSkipped, events.StepCancelled:
		p.endStream()
		fmt.Fprintln(p.out, stepLine(e.StepState, p.id, nil))
		if o.verbose && e.StepState.Output != nil {
			b, _ := e.StepState.Output.MarshalJSON()
			fmt.Fprintf(p.out, "      output: %s\n", truncate(string(b), 400))
		}
		for _, w := range e.StepState.Warnings {
			fmt.Fprintf(p.out, "      warning: %s\n", w)
		}
		if e.Type == events.StepFailed && p.failed == "" {
			p.failed = e.Step
		}
		if e.Type == events.StepCancelled && e.StepState.GetError() == runwire.StoppedInFlight && p.stopped == "" {
			p.stopped = e.Step
		}
	case events.ToolCallFinished:
		p.endStream()
		fmt.Fprintln(p.out, toolCallLine(e.Call))
	case events.GuardrailTripped:
		if o.verbose {
			p.endStream()
			fmt.Fprintf(p.out, "  ⛔ %s: %s guardrail %q tripped: %s\n", e.Step, e.Stage, e.Guardrail, e.Reason)
		}
	case events.Handoff:
		if o.verbose {
			p.endStream()
			fmt.Fprintf(p.out, "  ↪ %s: %s handed off to %s (iteration %d)\n", e.Step, e.From, e.To, e.Iteration)
		}
	case events.BudgetExceeded:
		// Always shown: it is why the step fails next.
		p.endStream()
		fmt.Fprintf(p.out, "  ⛔ %s: %s\n", e.Step, e.Reason)
	case events.MCPSessionLost:
		// Always shown: the server's state is gone, which changes what the run's answers mean.
		p.endStream()
		fmt.Fprintf(p.out, "  ⚠ %s: %s\n", e.Step, e.Reason)
	case events.ReviewRequested:
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
				status := "failed"
				if ce := (*temporal.CanceledError)(nil); errors.As(runErr, &ce) {
					status = "cancelled"
				}
				_ = writeJSON(out, map[string]any{"id": id, "status": status, "error": weftclient.Cause(runErr)})
			}
		} else {
			var ce *temporal.CanceledError
			if errors.As(runErr, &ce) {
				at := o.stoppedAt
				if at == "" {
					at = o.failedShown
				}
				fmt.Fprintf(errOut, "\n%s\n", cancelledText(o.cancelledBy, at))
			} else if o.failedShown != "" && !o.verbose && strings.HasPrefix(weftclient.Cause(runErr), fmt.Sprintf("step %q: ", o.failedShown)) {
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
		fmt.Fprintf(out, "\nComplete. %s, %dms total", english.Count(len(res.Steps), "step"), res.DurationMs)
		if u := res.Usage; weftclient.UsageOf(u).Billed() {
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

// cancelledText says that a run was cancelled, by whom when known, and at which step.
func cancelledText(by, step string) string {
	msg := "Cancelled"
	if by != "" {
		msg += " by " + by
	}
	if step != "" {
		msg += " at step " + step
	}
	return msg + ": the run was stopped on request (steps that finished keep their results)."
}

// restartNote marks the text of a model call that started over (a worker died mid-answer, a
// repair): what was shown of the call before is not part of the answer. weft run and weft chat
// print it where the new attempt's text begins.
func restartNote(attempt int32) string {
	return fmt.Sprintf("(attempt %d, restarted: the text above is discarded)", attempt)
}
