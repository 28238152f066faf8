package starter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/eval"
	"github.com/weftworks/weft/eval/report"
	"github.com/weftworks/weft/internal/english"
	"github.com/weftworks/weft/workflows/dsl"
)

// `weft eval` is a thin command over package eval (the engine): its flags, printing the report,
// keeping it (eval/report) and the exit status.
type evalOptions struct {
	conn        connFlags
	dataset     string
	baseline    string
	report      string
	reportsDir  string
	asJSON      bool
	concurrency int
	judgeModel  string
	timeout     time.Duration
	replayRuns  []string
	replaySince time.Duration
	replayLimit int
	model       string
}

func newEvalCommand() *cobra.Command {
	var o evalOptions
	cmd := &cobra.Command{
		Use:   "eval [FILE|TEMPLATE] --dataset DATA.jsonl | --replay-runs ID,ID | --replay-since 24h",
		Short: "Run a dataset of cases through a workflow and grade the outputs",
		Long: "Each line of the dataset is {\"name\", \"inputs\", \"expect\"}: the inputs run through the workflow on the\n" +
			"workers of the task queue (the real interpreter and the configured model), and expect's graders\n" +
			"check the output: equals (a JSON value), contains (a string or a list), matches (a regular\n" +
			"expression), schema (a JSON Schema), max / min (a number, or {\"path\", \"value\"}), judge (a rubric the\n" +
			"model scores from 0 to 1; {\"rubric\", \"pass\"} sets the passing score, default 0.5); \"path\" picks\n" +
			"part of the output. Per case: pass, score, latency, tokens, cost; then a summary. --baseline REPORT\n" +
			"(an earlier --json report) names the regressions. Exit status: 1 when a case that passed in the\n" +
			"baseline fails (without --baseline: when any case fails), 2 for an invalid file or dataset.\n\n" +
			"A workflow that pauses for review: the case decides each review in \"reviews\", keyed by the review's\n" +
			"id (\"approval\", \"each[1]\", \"agent/call_1\"), its step, or \"*\" for every other review:\n" +
			"  {\"name\": \"edited\", \"inputs\": {...}, \"reviews\": {\"approval\": {\"decision\": \"edit\", \"data\": \"new text\"}},\n" +
			"   \"expect\": {\"path\": \"text\", \"equals\": \"new text\"}}\n" +
			"  {\"name\": \"refused\", \"reviews\": {\"*\": {\"decision\": \"reject\", \"comment\": \"no\"}}, \"expect\": {\"error\": \"rejected\"}}\n" +
			"Decisions go through the client's review operation as reviewer \"eval\"; expect's \"error\" passes\n" +
			"when the run fails with a message containing it. A key that names no review of the workflow is an\n" +
			"invalid dataset (checked before anything runs). A case that ends before its run (the run waits for a\n" +
			"review the case does not decide, --case-timeout) fails, and the run is cancelled: the case's\n" +
			"\"cancelled\" says why.\n\n" +
			"Every report is also kept in --reports-dir (default " + report.DefaultDir + "), where the console's Evals\n" +
			"page lists them. A report that cannot be kept there (or written to --report) is a warning: the\n" +
			"results are printed first, and the exit status is the cases'.\n\n" +
			"Replays: a case {\"replay\": RUN} (or --replay-runs ID,ID, --replay-since 24h for FILE's runs that\n" +
			"completed since) re-runs a recorded run with its inputs: its model steps (llm, generate, an agent's\n" +
			"model turns) run for real, with --model or FILE's changed prompts (FILE: a changed definition,\n" +
			"steps matched by id; without it, the run's own), while every other step's output and every agent\n" +
			"tool call's result come from the record (steps computed from their inputs, such as template, are\n" +
			"computed again). A tool call the record does not hold (the same tool, the same arguments) is not\n" +
			"run: the model is told \"tool drift: not in the record\" as the tool's error. Per case the report\n" +
			"says which model answers changed and what went off the record, so a model regression is told\n" +
			"apart from tool drift. Trajectory graders read the run's tool calls: \"tools\" (the set called),\n" +
			"\"toolOrder\" (in this order; {\"order\", \"exact\": true} for exactly these), \"maxToolCalls\",\n" +
			"on \"step\" or the whole run.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			arg := ""
			if len(args) == 1 {
				arg = args[0]
			}
			return o.run(cmd, arg)
		},
	}
	o.conn.register(cmd)
	cmd.Flags().StringVar(&o.dataset, "dataset", "", "the cases, one JSON object per line (required)")
	cmd.Flags().StringVar(&o.baseline, "baseline", "", "an earlier report (weft eval --json) to compare with")
	cmd.Flags().StringVar(&o.report, "report", "", "also write the JSON report to this file")
	cmd.Flags().StringVar(&o.reportsDir, "reports-dir", envOr("WEFT_EVAL_REPORTS", report.DefaultDir), "keep every report in this folder, where the console's Evals page reads them (\"off\": keep none; env WEFT_EVAL_REPORTS)")
	jsonFlag(cmd, &o.asJSON, "print the report as JSON")
	cmd.Flags().IntVar(&o.concurrency, "concurrency", 4, "cases run at the same time")
	cmd.Flags().StringVar(&o.judgeModel, "judge-model", "", "model of the judge grader (default: the worker's chat model)")
	cmd.Flags().DurationVar(&o.timeout, "case-timeout", eval.DefaultCaseTimeout, "how long one case may run")
	cmd.Flags().StringSliceVar(&o.replayRuns, "replay-runs", nil, "replay these recorded runs (completed ones), one case each")
	cmd.Flags().DurationVar(&o.replaySince, "replay-since", 0, "replay FILE's runs that completed and started within this long ago (24h)")
	cmd.Flags().IntVar(&o.replayLimit, "replay-limit", 20, "with --replay-since: replay at most this many runs, newest first")
	cmd.Flags().StringVar(&o.model, "model", "", "the model of the replay cases' model steps (default: the definition's)")
	return cmd
}

func (o *evalOptions) run(cmd *cobra.Command, arg string) error {
	replaying := len(o.replayRuns) > 0 || o.replaySince > 0
	switch {
	case o.dataset == "" && !replaying:
		return invalid(errors.New("weft eval: --dataset DATA.jsonl is required (or --replay-runs ID,ID, --replay-since 24h)"))
	case o.concurrency < 1:
		return invalid(fmt.Errorf("--concurrency %d: run at least 1 case at a time", o.concurrency))
	case o.replaySince < 0:
		return invalid(fmt.Errorf("--replay-since %s: give how long ago, such as 24h", o.replaySince))
	case o.replaySince > 0 && arg == "":
		return invalid(errors.New("--replay-since replays the runs of a workflow: name it (weft eval FILE|TEMPLATE --replay-since 24h)"))
	case o.replaySince > 0 && o.replayLimit < 1:
		return invalid(fmt.Errorf("--replay-limit %d: replay at least 1 run", o.replayLimit))
	}
	var w *dsl.Workflow
	if arg != "" {
		var err error
		if w, err = loadWorkflow(arg); err != nil {
			return err
		}
	}
	cases := eval.ReplayCases(o.replayRuns)
	if o.dataset != "" {
		f, err := os.Open(o.dataset)
		if err != nil {
			return invalid(fmt.Errorf("dataset: %w", err))
		}
		read, err := eval.ReadDataset(f, o.dataset)
		f.Close()
		if err != nil {
			return invalid(err)
		}
		cases = append(read, cases...)
	}
	replays := 0
	for _, c := range cases {
		if c.Replay != "" {
			replays++
		} else if w == nil {
			return invalid(fmt.Errorf("%s: case %q runs inputs through a workflow: name it (weft eval FILE|TEMPLATE --dataset %s), or make every case a replay", o.dataset, c.Name, o.dataset))
		}
	}
	if o.model != "" && replays == 0 && o.replaySince == 0 {
		return invalid(errors.New("--model changes the model of replay cases, and there is none: add {\"replay\": RUN} cases, --replay-runs or --replay-since"))
	}
	if w != nil {
		if steps, known := eval.ReviewSteps(w, weftclient.SourceResolver(arg)); known {
			if err := eval.CheckReviews(o.dataset, w.Def.Name, cases, steps); err != nil {
				return invalid(err)
			}
		}
	}
	var base *report.Report
	if o.baseline != "" {
		var err error
		if base, err = readBaseline(o.baseline); err != nil {
			return invalid(err)
		}
	}
	judge, err := eval.JudgeWorkflow(o.judgeModel)
	if err != nil {
		return fmt.Errorf("the judge's workflow: %w", err)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return o.conn.with(ctx, func(c *weftclient.Client) error {
		if o.replaySince > 0 {
			since, err := eval.ReplaySince(ctx, c, w.Def.Name, time.Now().Add(-o.replaySince), o.replayLimit)
			if err != nil {
				return err
			}
			cases = append(cases, since...)
		}
		rep := eval.Run(ctx, c, w, cases, eval.Options{Source: arg, Concurrency: o.concurrency, CaseTimeout: o.timeout, Judge: judge, Model: o.model})
		rep.Dataset = o.dataset
		if rep.Dataset == "" {
			rep.Dataset = "replays"
		}
		if rep.Workflow == "" {
			rep.Workflow = replayedWorkflow(ctx, c, cases)
		}
		if base != nil {
			rep.Baseline = eval.Compare(base, rep)
			rep.Baseline.File = o.baseline
		}
		// The results are printed first: a report that cannot be saved warns, and loses nothing.
		out := cmd.OutOrStdout()
		var printErr error
		if o.asJSON {
			printErr = writeJSON(out, rep)
		} else {
			printEval(out, rep)
		}
		o.saveReports(cmd.ErrOrStderr(), rep)
		if printErr != nil {
			return printErr
		}
		switch {
		case rep.Baseline != nil && len(rep.Baseline.Regressions) > 0:
			return &ExitError{Code: ExitFailed, Err: fmt.Errorf("%d regression(s) against %s: %s", len(rep.Baseline.Regressions), o.baseline, strings.Join(rep.Baseline.Regressions, ", "))}
		case rep.Baseline == nil && rep.Summary.Failed > 0:
			return &ExitError{Code: ExitFailed, Err: fmt.Errorf("%d of %d cases failed", rep.Summary.Failed, rep.Summary.Cases)}
		}
		return nil
	})
}

// saveReports keeps rep in --reports-dir and writes --report. A report that cannot be saved is a
// warning naming the path and what to do: the results are printed already, and the exit status
// stays the cases'.
func (o *evalOptions) saveReports(errOut io.Writer, rep *report.Report) {
	if o.reportsDir != "" && o.reportsDir != "off" {
		err := ignoreWeftDir(o.reportsDir)
		id := ""
		if err == nil {
			id, err = report.Save(o.reportsDir, rep)
		}
		if err != nil {
			fmt.Fprintf(errOut, "warning: the report was not kept in %s: %v (the results are printed; make the folder writable, "+
				"pick another with --reports-dir DIR or WEFT_EVAL_REPORTS, or keep none with --reports-dir off)\n", o.reportsDir, err)
		} else {
			fmt.Fprintf(errOut, "report kept as %s (the console's Evals page: /evals/%s)\n", filepath.Join(o.reportsDir, id+".json"), id)
		}
	}
	if o.report != "" {
		data, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(o.report, append(data, '\n'), 0o644); err != nil {
			fmt.Fprintf(errOut, "warning: the report was not written to %s: %v (the results are printed; give --report a file in a folder that exists and is writable)\n", o.report, err)
		}
	}
}

func readBaseline(path string) (*report.Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	var r report.Report
	if err := json.Unmarshal(data, &r); err != nil || r.Cases == nil {
		return nil, fmt.Errorf("baseline %s is not a weft eval report (write one with weft eval --json or --report): %v", path, err)
	}
	return &r, nil
}

func printEval(out io.Writer, r *report.Report) {
	fmt.Fprintf(out, "eval %s on %s: %d cases, %d at a time\n", r.Workflow, r.Dataset, r.Summary.Cases, r.Concurrency)
	for _, c := range r.Cases {
		mark := "PASS"
		if !c.Pass {
			mark = "FAIL"
		}
		fmt.Fprintf(out, "  %s  %-24s score %.2f  %6dms  %6d tokens  $%.6f\n", mark, c.Name, c.Score, c.LatencyMs, c.Tokens, c.CostUSD)
		if len(c.Reviews) > 0 {
			var ds []string
			for _, d := range c.Reviews {
				ds = append(ds, d.ID+" "+d.Decision)
			}
			fmt.Fprintf(out, "        reviews decided: %s\n", strings.Join(ds, ", "))
		}
		if c.Error != "" {
			fmt.Fprintf(out, "        error: %s\n", c.Error)
		}
		printReplay(out, c.Replay)
		for _, g := range c.Grades {
			if !g.Pass {
				fmt.Fprintf(out, "        %s: %s\n", g.Grader, g.Detail)
			}
		}
	}
	s := r.Summary
	fmt.Fprintf(out, "%d/%d passed (%.1f%%), mean score %.2f, latency p50 %dms p95 %dms, %d tokens, $%.6f, in %.1fs\n",
		s.Passed, s.Cases, 100*s.PassRate, s.MeanScore, s.LatencyP50Ms, s.LatencyP95Ms, s.Tokens, s.CostUSD, float64(s.DurationMs)/1000)
	if s.Replayed > 0 {
		fmt.Fprintf(out, "replays: %d, model answers changed in %d, tool drift in %d\n", s.Replayed, s.ModelChanged, s.Drifted)
	}
	if s.JudgeTokens > 0 {
		fmt.Fprintf(out, "judge: %d tokens, $%.6f\n", s.JudgeTokens, s.JudgeCostUSD)
	}
	if b := r.Baseline; b != nil {
		fmt.Fprintf(out, "against %s: pass rate %+.1f points, mean score %+.2f, cost %+.6f, latency p50 %+dms\n",
			b.File, 100*b.PassRateDelta, b.MeanScoreDelta, b.CostDelta, b.LatencyP50Diff)
		if len(b.Regressions) > 0 {
			fmt.Fprintf(out, "  regressions (passed, fail now): %s\n", strings.Join(b.Regressions, ", "))
		}
		if len(b.Fixed) > 0 {
			fmt.Fprintf(out, "  fixed: %s\n", strings.Join(b.Fixed, ", "))
		}
		if len(b.New) > 0 {
			fmt.Fprintf(out, "  new cases: %s\n", strings.Join(b.New, ", "))
		}
		if len(b.Missing) > 0 {
			fmt.Fprintf(out, "  not in this dataset: %s\n", strings.Join(b.Missing, ", "))
		}
	}
}

// printReplay prints what a replay case did: where it came from, which model answers changed,
// and what went off the record.
func printReplay(out io.Writer, r *report.Replay) {
	if r == nil {
		return
	}
	model := ""
	if r.Model != "" {
		model = " with model " + r.Model
	}
	fmt.Fprintf(out, "        replay of %s%s: %s from the record, %d live; %d of %s answered\n",
		r.From, model, english.Count(len(r.Reused), "step"), len(r.Live), r.FromRecord, english.Count(r.RecordedCalls, "recorded tool call"))
	if len(r.Changed) == 0 {
		fmt.Fprintf(out, "        model answers: unchanged\n")
	}
	for _, ch := range r.Changed {
		fmt.Fprintf(out, "        model answer of %s changed: %q -> %q\n", ch.Step, truncate(ch.Was, 60), truncate(ch.Now, 60))
		if strings.Join(ch.WasTools, ",") != strings.Join(ch.NowTools, ",") {
			fmt.Fprintf(out, "          tools: %s -> %s\n", toolList(ch.WasTools), toolList(ch.NowTools))
		}
	}
	for _, st := range r.Stale {
		fmt.Fprintf(out, "        taken from the record although %s above it answered differently: %s\n", strings.Join(st.Changed, ", "), st.Step)
	}
	for _, d := range r.Drift {
		if d.Tool != "" {
			args, _ := json.Marshal(d.Arguments)
			fmt.Fprintf(out, "        %s: %s %s %s (not run)\n", d.Why, d.Step, d.Tool, truncate(string(args), 80))
		} else {
			fmt.Fprintf(out, "        off the record: step %s %s\n", d.Step, d.Why)
		}
	}
}

func toolList(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, " → ")
}

// replayedWorkflow names the workflow of a replay-only eval: that of its first case's run.
func replayedWorkflow(ctx context.Context, c *weftclient.Client, cases []eval.Case) string {
	for _, cs := range cases {
		if d, err := c.Describe(ctx, cs.Replay); err == nil && d.Workflow != "" {
			return d.Workflow
		}
	}
	return ""
}
