package starter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/encoding/protojson"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/workflows"
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
}

func newRunCommand() *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run FILE|TEMPLATE [--input name=value]...",
		Short: "Run a workflow durably on Temporal and follow its progress",
		Long: "Validates the file first (a bad file never creates an execution), starts it, and shows each\n" +
			"step as it finishes. Exit status: 0 completed, 1 failed, 2 invalid input, 3 still running\n" +
			"(--detach, or interrupted: the run goes on; follow it with `weft status ID`).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, args[0]) },
	}
	o.register(cmd)
	o.conn.register(cmd)
	cmd.Flags().BoolVar(&o.detach, "detach", false, "start the run and return its id")
	cmd.Flags().StringVar(&o.id, "id", "", "workflow id (default: weft-<name>-<random>)")
	cmd.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "print only the output")
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "show step inputs and outputs; with --json, stream JSONL events")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "validate and print the plan without running")
	cmd.Flags().DurationVar(&o.interval, "poll", 300*time.Millisecond, "how often progress is read")
	return cmd
}

func newRunID(name string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "weft-" + slug(name) + "-" + hex.EncodeToString(b)
}

// startRun starts a run and returns its id.
func startRun(ctx context.Context, c client.Client, taskQueue, id string, w *dsl.Workflow, req *weftv1.RunRequest) (client.WorkflowRun, error) {
	if id == "" {
		id = newRunID(w.Def.Name)
	}
	return c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        id,
		TaskQueue: taskQueue,
		Memo:      map[string]any{workflows.MemoWorkflow: w.Def.Name},
	}, workflows.WorkflowType, req)
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
	inputs, err := o.resolveInputs(w)
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
	req, err := workflows.NewRequest(w.Def, name, inputs, o.overrides())
	if err != nil {
		return invalid(err)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := o.conn.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	handle, err := startRun(ctx, c, o.conn.taskQueue, o.id, w, req)
	if err != nil {
		return fmt.Errorf("starting %s: %w", name, err)
	}
	id := handle.GetID()
	if o.detach {
		if o.asJSON {
			_ = writeJSON(out, map[string]string{"id": id, "runId": handle.GetRunID()})
		} else {
			fmt.Fprintf(out, "Started %s\n  follow: weft status %s\n  cancel: weft cancel %s\n", id, id, id)
		}
		return &ExitError{Code: ExitRunning, Silent: true}
	}
	if !o.quiet && !o.asJSON {
		header(out, "weft: "+w.Def.Name+"  ("+id+")")
	}
	return o.follow(ctx, c, handle, out, errOut)
}

type runEvent struct {
	Event string `json:"event"`
	ID    string `json:"id"`
	Step  any    `json:"step,omitempty"`
}

// follow prints progress until the run ends, or returns ExitRunning when interrupted.
func (o *runOptions) follow(ctx context.Context, c client.Client, handle client.WorkflowRun, out, errOut interface{ Write([]byte) (int, error) }) error {
	id := handle.GetID()
	done := make(chan error, 1)
	var result weftv1.RunResult
	go func() { done <- handle.Get(context.WithoutCancel(ctx), &result) }()
	shown := map[string]string{}
	ticker := time.NewTicker(o.interval)
	defer ticker.Stop()
	report := func(steps []*weftv1.StepState) {
		for _, s := range steps {
			if s.Status == workflows.StatusPending || s.Status == workflows.StatusRunning || shown[s.Id] == s.Status {
				continue
			}
			shown[s.Id] = s.Status
			switch {
			case o.asJSON && o.verbose:
				b, _ := protojson.Marshal(s)
				ev, _ := json.Marshal(runEvent{Event: "step", ID: id, Step: json.RawMessage(b)})
				fmt.Fprintln(out, string(ev))
			case !o.quiet && !o.asJSON:
				fmt.Fprintln(out, stepLine(s, id))
				if o.verbose && s.Output != nil {
					b, _ := protojson.Marshal(s.Output)
					fmt.Fprintf(out, "      output: %s\n", truncate(string(b), 400))
				}
			}
		}
	}
	for {
		select {
		case err := <-done:
			if st, qerr := queryState(context.WithoutCancel(ctx), c, id); qerr == nil {
				report(st.Steps)
			} else {
				report(result.Steps)
			}
			return o.finish(out, errOut, id, &result, err)
		case <-ctx.Done():
			fmt.Fprintf(errOut, "\nweft: stopped following; %s is still running. Follow it with: weft status %s\n", id, id)
			return &ExitError{Code: ExitRunning, Silent: true}
		case <-ticker.C:
			if st, err := queryState(ctx, c, id); err == nil {
				report(st.Steps)
			}
		}
	}
}

func (o *runOptions) finish(out, errOut interface{ Write([]byte) (int, error) }, id string, res *weftv1.RunResult, runErr error) error {
	if runErr != nil {
		if o.asJSON {
			_ = writeJSON(out, map[string]any{"id": id, "status": "failed", "error": runErr.Error()})
		} else {
			fmt.Fprintf(errOut, "\nFailed: %s\n", cause(runErr))
		}
		return &ExitError{Code: ExitFailed, Silent: true}
	}
	if o.asJSON {
		if o.verbose {
			b, _ := protojson.Marshal(res)
			ev, _ := json.Marshal(runEvent{Event: "completed", ID: id, Step: json.RawMessage(b)})
			_, err := fmt.Fprintln(out, string(ev))
			return err
		}
		return writeProto(out, res)
	}
	if !o.quiet {
		fmt.Fprintf(out, "\nComplete. %d steps, %dms total", len(res.Steps), res.DurationMs)
		if u := res.Usage; u != nil && u.TotalTokens > 0 {
			fmt.Fprintf(out, ", %d tokens", u.TotalTokens)
		}
		fmt.Fprintln(out, ".")
		fmt.Fprintln(out, "\nOutput:")
	}
	return writeProto(out, res.Output)
}

// cause is the message people need from a run error: the run's own application error
// ("step \"x\": ...") without Temporal's "workflow execution error (...)" wrapper.
func cause(err error) string {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return ae.Message()
	}
	var ce *temporal.CanceledError
	if errors.As(err, &ce) {
		return "cancelled"
	}
	return err.Error()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
