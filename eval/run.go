package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/weftworks/weft/events"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/weftworks/weft/activities/toolspec"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/eval/report"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/workflows/dsl"
)

// JudgeWorkflow is the one-step workflow the judge grader runs: the model scores the answer.
func JudgeWorkflow(model string) (*dsl.Workflow, error) {
	in := dsl.In{
		"system": "You grade answers against a rubric. Reply with JSON: {\"score\": a number from 0 (fails the rubric) to 1 (meets it fully), \"reason\": one sentence}.",
		"prompt": "Rubric:\n{{ inputs.rubric }}\n\nAnswer to grade:\n{{ inputs.answer }}",
		"responseFormat": map[string]any{"type": "object", "required": []any{"score", "reason"},
			"properties": map[string]any{"score": map[string]any{"type": "number", "minimum": 0, "maximum": 1}, "reason": map[string]any{"type": "string"}}},
		"temperature": 0,
	}
	if model != "" {
		in["model"] = model
	}
	return dsl.New("eval-judge").Input("rubric", "string", dsl.Required()).Input("answer", "string", dsl.Required()).
		Step("judge", toolspec.LLM, in).Output("{{ judge.output.json }}").Compile()
}

// DefaultCaseTimeout is how long one case may run when Options.CaseTimeout is not set (weft
// eval's --case-timeout default).
const DefaultCaseTimeout = 5 * time.Minute

// Options are how Run runs a dataset.
type Options struct {
	// Source names the workflow in each run's start (a file's path, a template's name).
	Source string
	// Concurrency is how many cases run at the same time (below 1: one).
	Concurrency int
	// CaseTimeout is how long one case may run (0: DefaultCaseTimeout); a case that runs past
	// it fails and its run is cancelled.
	CaseTimeout time.Duration
	// Judge is the judge grader's workflow (JudgeWorkflow), run on the same queue; nil fails
	// every judge grader ("no judge").
	Judge *dsl.Workflow
	// Model is the model a replay case's model steps run with ("": the definition's).
	Model string
}

// Run runs every case through w on c's task queue, at most o.Concurrency at a time, deciding the
// reviews each run waits for as its case says, and grades them. Every case ends its run: a case
// that stops first (a review it does not decide, its timeout, ctx ending) cancels it. A replay
// case re-runs its recorded run (replay.go) with w's definition, or its own when w is nil (w may
// be nil only when every case is a replay).
func Run(ctx context.Context, c *weftclient.Client, w *dsl.Workflow, cases []Case, o Options) *report.Report {
	if o.Concurrency < 1 {
		o.Concurrency = 1
	}
	if o.CaseTimeout <= 0 {
		o.CaseTimeout = DefaultCaseTimeout
	}
	start := time.Now()
	rep := &report.Report{StartedAt: start.UTC(), Concurrency: o.Concurrency, Cases: make([]report.Case, len(cases))}
	if w != nil {
		rep.Workflow = w.Def.Name
	}
	r := &runner{c: c, w: w, o: o}
	if o.Judge != nil {
		r.judge = r.runJudge
	}
	var (
		wg  sync.WaitGroup
		sem = make(chan struct{}, o.Concurrency)
	)
	for i, cs := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			rep.Cases[i] = r.runCase(ctx, cs)
		}()
	}
	wg.Wait()
	rep.Summary = summarize(rep.Cases)
	rep.Summary.JudgeTokens, rep.Summary.JudgeCostUSD = r.judgeTok, r.judgeSpent
	rep.Summary.DurationMs = time.Since(start).Milliseconds()
	return rep
}

// runner is one Run: what every case shares, and the judge's spending (under mu).
type runner struct {
	c     *weftclient.Client
	w     *dsl.Workflow
	o     Options
	judge Judge

	mu         sync.Mutex
	judgeTok   int64
	judgeSpent float64
}

// runJudge is the judge grader: o.Judge scores text against rubric.
func (r *runner) runJudge(ctx context.Context, rubric, text string) (float64, string, int64, float64, error) {
	res, err := r.c.Run(ctx, r.o.Judge, weftclient.StartOptions{Inputs: map[string]any{"rubric": rubric, "answer": text}, Source: "weft eval judge"})
	if err != nil {
		return 0, "", 0, 0, err
	}
	tok, cost := res.GetUsage().GetPromptTokens()+res.GetUsage().GetCompletionTokens(), res.GetUsage().GetCostUsd()
	var v struct {
		Score  float64 `json:"score"`
		Reason string  `json:"reason"`
	}
	if err := decode(res.GetOutput().AsInterface(), &v); err != nil {
		return 0, "", tok, cost, fmt.Errorf("the judge's answer: %w", err)
	}
	return math.Max(0, math.Min(1, v.Score)), v.Reason, tok, cost, nil
}

// runCase runs one case and grades it.
func (r *runner) runCase(ctx context.Context, cs Case) report.Case {
	cctx, cancel := context.WithTimeout(ctx, r.o.CaseTimeout)
	defer cancel()
	res := report.Case{Name: cs.Name, Inputs: cs.Inputs, Grades: []report.Grade{}}
	res.Expect, _ = json.Marshal(cs.Expect)
	t0 := time.Now()
	var (
		run  *weftclient.Run
		rec  *weftclient.Recording
		plan *weftclient.ReplayPlan
		err  error
	)
	if cs.Replay != "" {
		rec, run, plan, err = r.startReplay(cctx, cs)
		if rec != nil {
			res.Inputs = rec.Request.GetInputs().AsMap()
		}
	} else {
		run, err = r.c.Start(cctx, r.w, weftclient.StartOptions{Inputs: cs.Inputs, Source: r.o.Source})
	}
	var ended *weftv1.RunResult
	if err == nil {
		res.RunID = run.ID
		ended, err = r.followCase(ctx, cctx, cs, t0, &res)
	}
	var e *weftclient.Execution
	if res.RunID != "" {
		// what the case's run used, whether it completed, failed or was cancelled: the
		// run's usage ledger, as every surface shows it
		e = finalExecution(ctx, r.c, res.RunID, ended)
		if e != nil {
			res.Tokens, res.CostUSD = e.Usage.Tokens, e.Usage.CostUSD
		}
	}
	if plan != nil {
		res.Replay = replayReport(rec, plan, e)
	}
	if err != nil {
		res.Error = err.Error()
		return res
	}
	if cs.Expect.trajectoryGraders() {
		res.Grades = append(res.Grades, GradeTrajectory(cs.Expect, e)...)
	}
	res.Pass = true
	for _, g := range res.Grades {
		res.Score += g.Score
		res.Pass = res.Pass && g.Pass
	}
	if len(res.Grades) > 0 {
		res.Score /= float64(len(res.Grades))
	} else {
		res.Score = 1 // no grader: the run completing is the test
	}
	return res
}

// followCase follows the case's run (res.RunID, started at t0) to its end and grades what it
// ended with into res; the error fails the case. ended is the run's result when it completed.
func (r *runner) followCase(ctx, cctx context.Context, cs Case, t0 time.Time, res *report.Case) (ended *weftv1.RunResult, err error) {
	out, reviews, runErr, err := follow(cctx, r.c, res.RunID, cs)
	res.Reviews = reviews
	res.LatencyMs = time.Since(t0).Milliseconds()
	if err != nil {
		// The case ends before its run: the run is cancelled, none is left waiting.
		msg, why := stopReason(ctx, cctx, r.o.CaseTimeout, err)
		res.Cancelled, err = cancelRun(ctx, r.c, res.RunID, msg, why)
	}
	switch {
	case err != nil:
		return nil, err
	case runErr != nil && cs.Expect.Error == "":
		return nil, fmt.Errorf("%s", weftclient.Cause(runErr))
	case runErr != nil:
		res.Error = weftclient.Cause(runErr)
		res.Grades = GradeFailure(cs.Expect, res.Error)
	default:
		res.Output = out.GetOutput().AsInterface()
		grades, tok, cost := Grade(cctx, cs.Expect, res.Output, r.judge)
		res.Grades = grades
		r.mu.Lock()
		r.judgeTok, r.judgeSpent = r.judgeTok+tok, r.judgeSpent+cost
		r.mu.Unlock()
	}
	return out, nil
}

// finalExecution is run id as it ended (its usage ledger, its steps' outputs and tool calls):
// read once it has closed; the last answer when it does not close soon, nil when it cannot
// be read. ended, the result of a run that completed, stands in for a state the run does not
// answer (no worker answered the query in time): resolved the same way (weftclient.Resolve).
func finalExecution(ctx context.Context, c *weftclient.Client, id string, ended *weftv1.RunResult) *weftclient.Execution {
	var last *weftclient.Execution
	for range 50 { // a cancelled run closes soon after the request: its state then is final
		e, err := c.Execution(ctx, id)
		if err != nil {
			return last
		}
		if e.State == nil && e.Closed && ended != nil {
			e = weftclient.Resolve(id, e.Description, &weftv1.ExecutionState{Workflow: ended.GetWorkflow(), Status: weftclient.RunCompleted,
				Steps: ended.GetSteps(), Usage: ended.GetUsage()})
		}
		last = e
		if e.Closed || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	return last
}

// follow follows run id until it ends, deciding each review it waits for as the case says
// (through the client's Review, as reviewer "eval"). runErr is the run's own failure, for the
// graders; err fails the case: a review the case does not decide, a decision the run refused, or
// following the run failing (ctx ending: the case's timeout). When err is set the run may still be
// running: the caller cancels it (cancelRun).
func follow(ctx context.Context, c *weftclient.Client, id string, cs Case) (res *weftv1.RunResult, decided []report.Review, runErr, err error) {
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	sent := map[string]bool{}
	var stopped error
	res, runErr = c.Stream(sctx, id, weftclient.StreamOptions{NoDeltas: true}, func(e events.Event) {
		r := e.Review
		if e.Type != events.ReviewRequested || r == nil || sent[r.GetId()] || stopped != nil {
			return
		}
		sent[r.GetId()] = true
		d, key, ok := cs.decisionFor(r)
		if !ok {
			stopped = &caseStop{msg: noDecision(r), why: fmt.Sprintf("it waited for review %q, which the case does not decide", r.GetId())}
			stop()
			return
		}
		rec := report.Review{ID: r.GetId(), Step: r.GetStep(), Key: key, Decision: d.Decision, Data: d.Data, Comment: d.Comment, Reviewer: Reviewer}
		_, derr := c.Review(sctx, id, weftclient.Decision{ID: r.GetId(), Decision: d.Decision, Data: d.Data, Comment: d.Comment,
			Reviewer: Reviewer, Digest: r.GetDigest()})
		if derr != nil {
			stopped = &caseStop{msg: fmt.Sprintf("review %q: the case's decision (reviews.%s) was refused: %v", r.GetId(), key, derr),
				why: fmt.Sprintf("the run refused the case's decision for review %q", r.GetId())}
			stop()
			return
		}
		decided = append(decided, rec)
	})
	if stopped != nil {
		return nil, decided, nil, stopped
	}
	if runErr != nil && ctx.Err() != nil {
		return nil, decided, nil, fmt.Errorf("following the run: %w", runErr)
	}
	return res, decided, runErr, nil
}

// caseStop is why following a run stopped before it ended: msg for the case's error, why for
// its Cancelled.
type caseStop struct{ msg, why string }

func (e *caseStop) Error() string { return e.msg }

// stopReason says why a case ended before its run (err: follow's), for the case's
// error (msg) and its Cancelled (why): a review (err says), the case's context cctx running past
// timeout, the eval's ctx interrupted, or following the run failing.
func stopReason(ctx, cctx context.Context, timeout time.Duration, err error) (msg, why string) {
	var st *caseStop
	switch {
	case errors.As(err, &st):
		return st.msg, st.why
	case ctx.Err() != nil:
		return "weft eval was interrupted", "weft eval was interrupted"
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		why = fmt.Sprintf("the case ran past --case-timeout %s", timeout)
		return why, why
	}
	return err.Error(), "following the run failed"
}

// cancelRun cancels run id, which a case left before it ended, through the client's Cancel as
// "weft eval". It returns the case's Cancelled (why; "" when the run had ended meanwhile) and its
// error: msg, and that the run was cancelled, or what to do when cancelling failed.
func cancelRun(ctx context.Context, c *weftclient.Client, id, msg, why string) (string, error) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	err := c.Cancel(cctx, id, "weft eval")
	var fin *weftclient.FinishedError
	switch {
	case errors.As(err, &fin):
		return "", fmt.Errorf("%s (the run ended by itself meanwhile: %s)", msg, fin.Status)
	case err != nil:
		return "", fmt.Errorf("%s; cancelling the run failed: %v (cancel it with weft cancel %s)", msg, err, id)
	}
	return why, fmt.Errorf("%s; the run was cancelled", msg)
}

func decode(v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

func summarize(cases []report.Case) report.Summary {
	s := report.Summary{Cases: len(cases)}
	lat := make([]int64, 0, len(cases))
	for _, c := range cases {
		if c.Pass {
			s.Passed++
		}
		s.MeanScore += c.Score
		s.Tokens += c.Tokens
		s.CostUSD += c.CostUSD
		lat = append(lat, c.LatencyMs)
	}
	for _, c := range cases {
		if c.Replay != nil {
			s.Replayed++
			if len(c.Replay.Changed) > 0 {
				s.ModelChanged++
			}
			if len(c.Replay.Drift) > 0 {
				s.Drifted++
			}
		}
	}
	s.Failed = s.Cases - s.Passed
	if s.Cases > 0 {
		s.PassRate = float64(s.Passed) / float64(s.Cases)
		s.MeanScore /= float64(s.Cases)
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		s.LatencyP50Ms = lat[(len(lat)-1)/2]
		s.LatencyP95Ms = lat[int(math.Ceil(0.95*float64(len(lat))))-1]
	}
	return s
}

// Compare names what changed from base to cur, case by case (by name).
func Compare(base, cur *report.Report) *report.Comparison {
	was := map[string]bool{}
	for _, c := range base.Cases {
		was[c.Name] = c.Pass
	}
	cmp := &report.Comparison{Regressions: []string{}, Fixed: []string{},
		PassRateDelta:  cur.Summary.PassRate - base.Summary.PassRate,
		MeanScoreDelta: cur.Summary.MeanScore - base.Summary.MeanScore,
		CostDelta:      cur.Summary.CostUSD - base.Summary.CostUSD,
		LatencyP50Diff: cur.Summary.LatencyP50Ms - base.Summary.LatencyP50Ms}
	now := map[string]bool{}
	for _, c := range cur.Cases {
		now[c.Name] = true
		passed, known := was[c.Name]
		switch {
		case !known:
			cmp.New = append(cmp.New, c.Name)
		case passed && !c.Pass:
			cmp.Regressions = append(cmp.Regressions, c.Name)
		case !passed && c.Pass:
			cmp.Fixed = append(cmp.Fixed, c.Name)
		}
	}
	for _, c := range base.Cases {
		if !now[c.Name] {
			cmp.Missing = append(cmp.Missing, c.Name)
		}
	}
	return cmp
}
