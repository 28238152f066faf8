package starter

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/spf13/cobra"

	"github.com/weftworks/weft/activities/toolspec"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/internal/evalreport"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/workflows"
	"github.com/weftworks/weft/workflows/dsl"
)

// EvalCase is one line of an eval dataset.
type EvalCase struct {
	Name   string         `json:"name"`
	Inputs map[string]any `json:"inputs"`
	// Reviews decide the run's reviews: keyed by a review's id ("approval", "each[1]",
	// "agent/call_1"), by its step, or "*" for every review the other keys do not name. A run
	// that waits for a review the case does not decide fails the case (and is cancelled).
	Reviews map[string]EvalDecision `json:"reviews,omitempty"`
	Expect  EvalExpect              `json:"expect"`
	// line is the case's line in the dataset (0: not read from one).
	line int
}

// EvalDecision is what the eval decides for a review: approve, edit (with data) or reject
// (a comment says why). The decision is sent through the client's Review as reviewer "eval".
type EvalDecision struct {
	Decision string `json:"decision"`
	Data     any    `json:"data,omitempty"`
	Comment  string `json:"comment,omitempty"`
}

// EvalReviewer is the reviewer weft eval's decisions carry.
const EvalReviewer = "eval"

// decisionFor picks the case's decision for review r: its id first, then its step, then "*".
func (c EvalCase) decisionFor(r *weftv1.ReviewRequest) (EvalDecision, string, bool) {
	for _, k := range []string{r.GetId(), r.GetStep(), "*"} {
		if d, ok := c.Reviews[k]; ok && k != "" {
			return d, k, true
		}
	}
	return EvalDecision{}, "", false
}

// noDecision is the message for a review the case leaves undecided.
func noDecision(r *weftv1.ReviewRequest) string {
	key := r.GetId()
	if key == "" {
		key = r.GetStep()
	}
	return fmt.Sprintf("the run waits for review %q (step %q) and the case has no decision for it: add "+
		`"reviews": {%q: {"decision": "approve"}} to the case (or "edit" with "data", "reject" with "comment"; the key "*" decides every review)`,
		key, r.GetStep(), key)
}

// EvalExpect holds a case's graders; every grader given must pass.
type EvalExpect struct {
	// Path selects the part of the output the graders read ("answer", "results.0.score"); max
	// and min may name their own.
	Path   string          `json:"path,omitempty"`
	Equals json.RawMessage `json:"equals,omitempty"`
	// Contains: a string, or a list of strings that must all appear.
	Contains json.RawMessage `json:"contains,omitempty"`
	Matches  string          `json:"matches,omitempty"`
	Schema   json.RawMessage `json:"schema,omitempty"`
	// Max and Min: a number, or {"path": ..., "value": N}.
	Max   json.RawMessage `json:"max,omitempty"`
	Min   json.RawMessage `json:"min,omitempty"`
	Judge json.RawMessage `json:"judge,omitempty"`
	// Error expects the run to fail with a message that contains it (a rejected review:
	// "rejected"); the other graders read the output of a run that completes, so it stands alone.
	Error string `json:"error,omitempty"`
}

// outputGraders says whether x grades an output.
func (x EvalExpect) outputGraders() bool {
	return len(x.Equals)+len(x.Contains)+len(x.Schema)+len(x.Max)+len(x.Min)+len(x.Judge) > 0 || x.Matches != "" || x.Path != ""
}

// The report's types live in internal/evalreport, beside where reports are kept (Save, List,
// Read): the console reads them there.
type (
	// EvalGrade is one grader's verdict.
	EvalGrade = evalreport.Grade
	// EvalReview is a review decision weft eval took for a case.
	EvalReview = evalreport.Review
	// EvalCaseResult is one case's outcome.
	EvalCaseResult = evalreport.Case
	// EvalSummary adds the cases up.
	EvalSummary = evalreport.Summary
	// EvalComparison is a report against a baseline report.
	EvalComparison = evalreport.Comparison
	// EvalReport is what `weft eval --json` prints and --baseline reads.
	EvalReport = evalreport.Report
)

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
}

func newEvalCommand() *cobra.Command {
	var o evalOptions
	cmd := &cobra.Command{
		Use:   "eval FILE|TEMPLATE --dataset DATA.jsonl",
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
			"Every report is also kept in --reports-dir (default " + evalreport.DefaultDir + "), where the console's Evals\n" +
			"page lists them. A report that cannot be kept there (or written to --report) is a warning: the\n" +
			"results are printed first, and the exit status is the cases'.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, args[0]) },
	}
	o.conn.register(cmd)
	cmd.Flags().StringVar(&o.dataset, "dataset", "", "the cases, one JSON object per line (required)")
	cmd.Flags().StringVar(&o.baseline, "baseline", "", "an earlier report (weft eval --json) to compare with")
	cmd.Flags().StringVar(&o.report, "report", "", "also write the JSON report to this file")
	cmd.Flags().StringVar(&o.reportsDir, "reports-dir", envOr("WEFT_EVAL_REPORTS", evalreport.DefaultDir), "keep every report in this folder, where the console's Evals page reads them (\"off\": keep none; env WEFT_EVAL_REPORTS)")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print the report as JSON")
	cmd.Flags().IntVar(&o.concurrency, "concurrency", 4, "cases run at the same time")
	cmd.Flags().StringVar(&o.judgeModel, "judge-model", "", "model of the judge grader (default: the worker's chat model)")
	cmd.Flags().DurationVar(&o.timeout, "case-timeout", 5*time.Minute, "how long one case may run")
	return cmd
}

// ReadEvalDataset reads a JSONL dataset: every line a case with a unique name.
func ReadEvalDataset(r io.Reader, file string) ([]EvalCase, error) {
	var cases []EvalCase
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		var c EvalCase
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("%s:%d: %w (a line is {\"name\", \"inputs\", \"reviews\": {STEP|ID|\"*\": {decision, data, comment}}, \"expect\": {equals|contains|matches|schema|max|min|judge|error, path}})", file, n, err)
		}
		if c.Name == "" {
			c.Name = fmt.Sprintf("line-%d", n)
		}
		if prev, dup := seen[c.Name]; dup {
			return nil, fmt.Errorf("%s:%d: case %q is named on line %d too: names must be unique (reports compare cases by name)", file, n, c.Name, prev)
		}
		seen[c.Name] = n
		c.line = n
		if err := c.Expect.check(); err != nil {
			return nil, fmt.Errorf("%s:%d: case %q: %w", file, n, c.Name, err)
		}
		for _, k := range slices.Sorted(maps.Keys(c.Reviews)) {
			d := c.Reviews[k]
			if k == "" {
				return nil, fmt.Errorf("%s:%d: case %q: reviews: a key names a review's id, its step, or \"*\" for all", file, n, c.Name)
			}
			if err := workflows.CheckDecisionKind(d.Decision, d.Data != nil); err != nil {
				return nil, fmt.Errorf("%s:%d: case %q: reviews.%s: %w", file, n, c.Name, k, err)
			}
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("%s holds no case: write one JSON object per line", file)
	}
	return cases, nil
}

// evalReviewSteps lists the steps of w whose runs may wait for a review (review steps; agents,
// whose tool calls may wait for approval; loops over either) and those of the workflows w calls,
// resolved as a run's start resolves them: a called workflow's reviews are decided with the
// caller's, by their own ids and steps. known is false when w may call a workflow this cannot
// read (a name computed at run time, a loop over workflow steps, a name that does not resolve):
// the keys of its reviews are then not known before the run.
func evalReviewSteps(w *dsl.Workflow, resolve weftclient.Resolver) (steps []string, known bool) {
	called, err := weftclient.CalledDefinitions(w.Def, resolve)
	known = err == nil // else the run's start names what is wrong
	set := map[string]bool{}
	for _, x := range append([]*dsl.Workflow{w}, slices.Collect(maps.Values(called))...) {
		for _, cs := range x.Steps {
			kinds := []toolspec.Kind{}
			if cs.Spec != nil {
				kinds = append(kinds, cs.Spec.Kind)
			}
			nested := cs.Nested != nil && cs.Nested.Spec != nil
			if nested {
				kinds = append(kinds, cs.Nested.Spec.Kind)
			}
			for _, k := range kinds {
				switch k {
				case toolspec.KindReview, toolspec.KindAgent:
					set[cs.ID] = true
				case toolspec.KindChild:
					name, literal := cs.Inputs["workflow"].(string)
					if nested || !literal || strings.Contains(name, "{{") {
						known = false
					}
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(set)), known
}

// evalKeyStep is the step a review key names: "each[1]" and "agent/call_1" name steps each and
// agent.
func evalKeyStep(key string) string {
	if i := strings.IndexAny(key, "[/"); i > 0 {
		return key[:i]
	}
	return key
}

// CheckEvalReviews checks, before anything runs, that every key of the cases' reviews names a
// review a run of workflow may wait for: a review step, an item of one ("each[1]"), an agent's
// tool call ("agent/call_1") or "*" (steps: evalReviewSteps). A key that names none would never
// decide anything and leave its review waiting. file names the dataset in the error.
func CheckEvalReviews(file, workflow string, cases []EvalCase, steps []string) error {
	for _, c := range cases {
		for _, k := range slices.Sorted(maps.Keys(c.Reviews)) {
			if k == "*" || slices.Contains(steps, evalKeyStep(k)) {
				continue
			}
			at := fmt.Sprintf("%s:%d: case %q: reviews.%s", file, c.line, c.Name, k)
			if len(steps) == 0 {
				return fmt.Errorf(`%s: workflow %q has no step that waits for a review (a review step, an agent's tool call): remove "reviews" from the case`, at, workflow)
			}
			hint := ""
			if m := nearest(evalKeyStep(k), steps); m != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", m+strings.TrimPrefix(k, evalKeyStep(k)))
			}
			return fmt.Errorf(`%s: workflow %q has no review %q%s: a key is a step that waits for a review (%s), an item of one ("%s[0]"), an agent's tool call (AGENT/CALL_ID), or "*" for every review`,
				at, workflow, k, hint, strings.Join(steps, ", "), steps[0])
		}
	}
	return nil
}

// check says what is wrong with the graders before anything runs.
func (x EvalExpect) check() error {
	if x.Error != "" && x.outputGraders() {
		return errors.New(`error: a run that fails has no output to grade: give "error" alone, or the other graders for a run that completes`)
	}
	if x.Matches != "" {
		if _, err := regexp.Compile(x.Matches); err != nil {
			return fmt.Errorf("matches: %w", err)
		}
	}
	if len(x.Schema) > 0 {
		if _, err := compileEvalSchema(x.Schema); err != nil {
			return err
		}
	}
	if len(x.Contains) > 0 {
		if _, err := x.contains(); err != nil {
			return err
		}
	}
	for name, b := range map[string]json.RawMessage{"max": x.Max, "min": x.Min} {
		if len(b) > 0 {
			if _, _, err := bound(b); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	if len(x.Judge) > 0 {
		if _, _, err := x.judge(); err != nil {
			return err
		}
	}
	return nil
}

func (x EvalExpect) contains() ([]string, error) {
	var one string
	if json.Unmarshal(x.Contains, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(x.Contains, &many); err != nil {
		return nil, errors.New(`contains: give a string or a list of strings`)
	}
	return many, nil
}

func (x EvalExpect) judge() (rubric string, pass float64, err error) {
	if json.Unmarshal(x.Judge, &rubric) == nil && rubric != "" {
		return rubric, 0.5, nil
	}
	var j struct {
		Rubric string   `json:"rubric"`
		Pass   *float64 `json:"pass"`
	}
	if err := json.Unmarshal(x.Judge, &j); err != nil || j.Rubric == "" {
		return "", 0, errors.New(`judge: give a rubric, or {"rubric": "...", "pass": 0.7}`)
	}
	pass = 0.5
	if j.Pass != nil {
		pass = *j.Pass
	}
	return j.Rubric, pass, nil
}

// bound reads a max/min grader: a number, or {"path", "value"}.
func bound(b json.RawMessage) (path string, v float64, err error) {
	if json.Unmarshal(b, &v) == nil {
		return "", v, nil
	}
	var o struct {
		Path  string   `json:"path"`
		Value *float64 `json:"value"`
	}
	if err := json.Unmarshal(b, &o); err != nil || o.Value == nil {
		return "", 0, errors.New(`give a number, or {"path": "score", "value": 5}`)
	}
	return o.Path, *o.Value, nil
}

func compileEvalSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("expect.json", doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s, err := c.Compile("expect.json")
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return s, nil
}

// EvalAt reads path (dot-separated keys and indexes) in v.
func EvalAt(v any, path string) (any, error) {
	if path == "" {
		return v, nil
	}
	cur := v
	for _, p := range strings.Split(path, ".") {
		switch c := cur.(type) {
		case map[string]any:
			next, ok := c[p]
			if !ok {
				return nil, fmt.Errorf("the output has no %q at %s", p, path)
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(c) {
				return nil, fmt.Errorf("%s: %q is not an index of a list of %d", path, p, len(c))
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("%s: %q is inside a %T, not an object or a list", path, p, cur)
		}
	}
	return cur, nil
}

// evalText is what contains, matches and judge read: a string as it is, a model answer's text,
// anything else as JSON.
func evalText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		if t, ok := x["text"].(string); ok {
			return t
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Judge scores text against a rubric: a score from 0 to 1, why, and the tokens and cost it used.
type Judge func(ctx context.Context, rubric, text string) (score float64, reason string, tokens int64, cost float64, err error)

// GradeEval applies every grader of x to output (judge through judge; nil skips it).
func GradeEval(ctx context.Context, x EvalExpect, output any, judge Judge) (grades []EvalGrade, tokens int64, cost float64) {
	add := func(g string, pass bool, detail string) {
		s := 0.0
		if pass {
			s = 1
		}
		grades = append(grades, EvalGrade{Grader: g, Pass: pass, Score: s, Detail: detail})
	}
	if x.Error != "" {
		add("error", false, fmt.Sprintf("the run completed; the case expects it to fail with %q", x.Error))
		return grades, 0, 0
	}
	v, err := EvalAt(output, x.Path)
	if err != nil {
		add("path", false, err.Error())
		return grades, 0, 0
	}
	text := evalText(v)
	if len(x.Equals) > 0 {
		var want any
		_ = json.Unmarshal(x.Equals, &want)
		got := v
		if s, ok := want.(string); ok {
			got = text
			want = s
		}
		pass := reflect.DeepEqual(normJSON(got), normJSON(want))
		add("equals", pass, cond(pass, "", fmt.Sprintf("want %s, got %s", shortJSON(want), shortJSON(got))))
	}
	if len(x.Contains) > 0 {
		subs, _ := x.contains()
		var missing []string
		for _, s := range subs {
			if !strings.Contains(text, s) {
				missing = append(missing, strconv.Quote(s))
			}
		}
		add("contains", len(missing) == 0, cond(len(missing) == 0, "", "not found: "+strings.Join(missing, ", ")))
	}
	if x.Matches != "" {
		re := regexp.MustCompile(x.Matches)
		pass := re.MatchString(text)
		add("matches", pass, cond(pass, "", fmt.Sprintf("%q does not match %s", evalShorten(text, 80), x.Matches)))
	}
	if len(x.Schema) > 0 {
		s, _ := compileEvalSchema(x.Schema)
		err := s.Validate(normJSON(v))
		add("schema", err == nil, cond(err == nil, "", fmt.Sprint(err)))
	}
	for _, b := range []struct {
		name string
		raw  json.RawMessage
		ok   func(got, lim float64) bool
	}{{"max", x.Max, func(g, l float64) bool { return g <= l }}, {"min", x.Min, func(g, l float64) bool { return g >= l }}} {
		if len(b.raw) == 0 {
			continue
		}
		path, lim, _ := bound(b.raw)
		at, err := EvalAt(v, path)
		if err != nil {
			add(b.name, false, err.Error())
			continue
		}
		got, ok := at.(float64)
		if !ok {
			if f, perr := strconv.ParseFloat(strings.TrimSpace(evalText(at)), 64); perr == nil {
				got, ok = f, true
			}
		}
		if !ok {
			add(b.name, false, fmt.Sprintf("%s is not a number", shortJSON(at)))
			continue
		}
		pass := b.ok(got, lim)
		add(b.name, pass, cond(pass, "", fmt.Sprintf("%g is %s %g", got, cond(b.name == "max", "above", "below"), lim)))
	}
	if len(x.Judge) > 0 {
		rubric, passAt, _ := x.judge()
		if judge == nil {
			add("judge", false, "no judge: the model is not reachable")
		} else {
			score, reason, tok, c, err := judge(ctx, rubric, text)
			tokens, cost = tokens+tok, cost+c
			if err != nil {
				add("judge", false, "the judge failed: "+err.Error())
			} else {
				grades = append(grades, EvalGrade{Grader: "judge", Pass: score >= passAt, Score: score, Detail: reason})
			}
		}
	}
	return grades, tokens, cost
}

func cond(ok bool, a, b string) string {
	if ok {
		return a
	}
	return b
}

func normJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func shortJSON(v any) string {
	b, _ := json.Marshal(v)
	return evalShorten(string(b), 80)
}

func evalShorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// judgeWorkflow is the one-step workflow the judge grader runs: the model scores the answer.
func judgeWorkflow(model string) (*dsl.Workflow, error) {
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

func (o *evalOptions) run(cmd *cobra.Command, arg string) error {
	if o.dataset == "" {
		return invalid(errors.New("weft eval: --dataset DATA.jsonl is required"))
	}
	if o.concurrency < 1 {
		return invalid(fmt.Errorf("--concurrency %d: run at least 1 case at a time", o.concurrency))
	}
	w, err := loadWorkflow(arg)
	if err != nil {
		return err
	}
	f, err := os.Open(o.dataset)
	if err != nil {
		return invalid(fmt.Errorf("dataset: %w", err))
	}
	cases, err := ReadEvalDataset(f, o.dataset)
	f.Close()
	if err != nil {
		return invalid(err)
	}
	if steps, known := evalReviewSteps(w, weftclient.SourceResolver(arg)); known {
		if err := CheckEvalReviews(o.dataset, w.Def.Name, cases, steps); err != nil {
			return invalid(err)
		}
	}
	var base *EvalReport
	if o.baseline != "" {
		if base, err = readEvalReport(o.baseline); err != nil {
			return invalid(err)
		}
	}
	judge, err := judgeWorkflow(o.judgeModel)
	if err != nil {
		return fmt.Errorf("the judge's workflow: %w", err)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := o.conn.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	rep := RunEval(ctx, c, w, arg, cases, o.concurrency, o.timeout, judge)
	rep.Dataset = o.dataset
	if base != nil {
		rep.Baseline = CompareEval(base, rep)
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
}

// saveReports keeps rep in --reports-dir and writes --report. A report that cannot be saved is a
// warning naming the path and what to do: the results are printed already, and the exit status
// stays the cases'.
func (o *evalOptions) saveReports(errOut io.Writer, rep *EvalReport) {
	if o.reportsDir != "" && o.reportsDir != "off" {
		err := ignoreWeftDir(o.reportsDir)
		id := ""
		if err == nil {
			id, err = evalreport.Save(o.reportsDir, rep)
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

func readEvalReport(path string) (*EvalReport, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	var r EvalReport
	if err := json.Unmarshal(data, &r); err != nil || r.Cases == nil {
		return nil, fmt.Errorf("baseline %s is not a weft eval report (write one with weft eval --json or --report): %v", path, err)
	}
	return &r, nil
}

// RunEval runs every case through w on c's task queue, at most concurrency at a time, and grades
// them (judge: the judge's workflow, run on the same queue).
func RunEval(ctx context.Context, c *weftclient.Client, w *dsl.Workflow, source string, cases []EvalCase, concurrency int, timeout time.Duration, judge *dsl.Workflow) *EvalReport {
	start := time.Now()
	rep := &EvalReport{Workflow: w.Def.Name, StartedAt: start.UTC(), Concurrency: concurrency, Cases: make([]EvalCaseResult, len(cases))}
	var judgeFn Judge
	if judge != nil {
		judgeFn = func(ctx context.Context, rubric, text string) (float64, string, int64, float64, error) {
			res, err := c.Run(ctx, judge, weftclient.StartOptions{Inputs: map[string]any{"rubric": rubric, "answer": text}, Source: "weft eval judge"})
			if err != nil {
				return 0, "", 0, 0, err
			}
			tok, cost := res.GetUsage().GetPromptTokens()+res.GetUsage().GetCompletionTokens(), res.GetUsage().GetCostUsd()
			var v struct {
				Score  float64 `json:"score"`
				Reason string  `json:"reason"`
			}
			if err := evalDecode(res.GetOutput().AsInterface(), &v); err != nil {
				return 0, "", tok, cost, fmt.Errorf("the judge's answer: %w", err)
			}
			return math.Max(0, math.Min(1, v.Score)), v.Reason, tok, cost, nil
		}
	}
	var (
		wg         sync.WaitGroup
		sem        = make(chan struct{}, concurrency)
		mu         sync.Mutex
		judgeTok   int64
		judgeSpent float64
	)
	for i, cs := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			r := EvalCaseResult{Name: cs.Name, Inputs: cs.Inputs, Grades: []EvalGrade{}}
			r.Expect, _ = json.Marshal(cs.Expect)
			t0 := time.Now()
			run, err := c.Start(cctx, w, weftclient.StartOptions{Inputs: cs.Inputs, Source: source})
			if err == nil {
				r.RunID = run.ID
				var (
					res    *weftv1.RunResult
					runErr error
				)
				res, r.Reviews, runErr, err = followEvalRun(cctx, c, run.ID, cs)
				r.LatencyMs = time.Since(t0).Milliseconds()
				if err != nil {
					// The case ends before its run: the run is cancelled, none is left waiting.
					msg, why := evalStopReason(ctx, cctx, timeout, err)
					r.Cancelled, err = cancelEvalRun(ctx, c, run.ID, msg, why)
				}
				switch {
				case err != nil:
				case runErr != nil && cs.Expect.Error == "":
					err = fmt.Errorf("%s", weftclient.Cause(runErr))
				case runErr != nil:
					r.Error = weftclient.Cause(runErr)
					r.Grades = GradeEvalFailure(cs.Expect, r.Error)
				default:
					r.Output = res.GetOutput().AsInterface()
					grades, tok, cost := GradeEval(cctx, cs.Expect, r.Output, judgeFn)
					r.Grades = grades
					mu.Lock()
					judgeTok, judgeSpent = judgeTok+tok, judgeSpent+cost
					mu.Unlock()
				}
			}
			if r.RunID != "" {
				// what the case's run used, whether it completed, failed or was cancelled: the
				// run's usage ledger, as every surface shows it
				r.Tokens, r.CostUSD = evalRunUsage(ctx, c, r.RunID)
			}
			if err != nil {
				r.Error = err.Error()
			} else {
				r.Pass = true
				for _, g := range r.Grades {
					r.Score += g.Score
					r.Pass = r.Pass && g.Pass
				}
				if len(r.Grades) > 0 {
					r.Score /= float64(len(r.Grades))
				} else {
					r.Score = 1 // no grader: the run completing is the test
				}
			}
			rep.Cases[i] = r
		}()
	}
	wg.Wait()
	rep.Summary = summarizeEval(rep.Cases)
	rep.Summary.JudgeTokens, rep.Summary.JudgeCostUSD = judgeTok, judgeSpent
	rep.Summary.DurationMs = time.Since(start).Milliseconds()
	return rep
}

// evalRunUsage is what run id used (weftclient.Usage's Tokens and CostUSD), read from the run
// once it has ended; 0 when it cannot be read.
func evalRunUsage(ctx context.Context, c *weftclient.Client, id string) (int64, float64) {
	var u weftclient.Usage
	for range 50 { // a cancelled run closes soon after the request: its state then is final
		e, err := c.Execution(ctx, id)
		if err != nil {
			return u.Tokens, u.CostUSD
		}
		u = e.Usage
		if e.Closed || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	return u.Tokens, u.CostUSD
}

// followEvalRun follows run id until it ends, deciding each review it waits for as the case says
// (through the client's Review, as reviewer "eval"). runErr is the run's own failure, for the
// graders; err fails the case: a review the case does not decide, a decision the run refused, or
// following the run failing (ctx ending: the case's timeout). When err is set the run may still be
// running: the caller cancels it (cancelEvalRun).
func followEvalRun(ctx context.Context, c *weftclient.Client, id string, cs EvalCase) (res *weftv1.RunResult, decided []EvalReview, runErr, err error) {
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	sent := map[string]bool{}
	var stopped error
	res, runErr = c.Stream(sctx, id, weftclient.StreamOptions{NoDeltas: true}, func(e weftclient.Event) {
		r := e.Review
		if e.Type != weftclient.EventReviewRequested || r == nil || sent[r.GetId()] || stopped != nil {
			return
		}
		sent[r.GetId()] = true
		d, key, ok := cs.decisionFor(r)
		if !ok {
			stopped = &evalStop{msg: noDecision(r), why: fmt.Sprintf("it waited for review %q, which the case does not decide", r.GetId())}
			stop()
			return
		}
		rec := EvalReview{ID: r.GetId(), Step: r.GetStep(), Key: key, Decision: d.Decision, Data: d.Data, Comment: d.Comment, Reviewer: EvalReviewer}
		_, derr := c.Review(sctx, id, weftclient.Decision{ID: r.GetId(), Decision: d.Decision, Data: d.Data, Comment: d.Comment,
			Reviewer: EvalReviewer, Digest: r.GetDigest()})
		if derr != nil {
			stopped = &evalStop{msg: fmt.Sprintf("review %q: the case's decision (reviews.%s) was refused: %v", r.GetId(), key, derr),
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

// evalStop is why following a run stopped before it ended: msg for the case's error, why for
// its Cancelled.
type evalStop struct{ msg, why string }

func (e *evalStop) Error() string { return e.msg }

// evalStopReason says why a case ended before its run (err: followEvalRun's), for the case's
// error (msg) and its Cancelled (why): a review (err says), the case's context cctx running past
// timeout, the eval's ctx interrupted, or following the run failing.
func evalStopReason(ctx, cctx context.Context, timeout time.Duration, err error) (msg, why string) {
	var st *evalStop
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

// cancelEvalRun cancels run id, which a case left before it ended, through the client's Cancel as
// "weft eval". It returns the case's Cancelled (why; "" when the run had ended meanwhile) and its
// error: msg, and that the run was cancelled, or what to do when cancelling failed.
func cancelEvalRun(ctx context.Context, c *weftclient.Client, id, msg, why string) (string, error) {
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

// GradeEvalFailure grades a run that failed with cause: only an expected error passes.
func GradeEvalFailure(x EvalExpect, cause string) []EvalGrade {
	if x.Error == "" {
		return []EvalGrade{{Grader: "error", Pass: false, Detail: "the run failed: " + cause}}
	}
	pass := strings.Contains(cause, x.Error)
	g := EvalGrade{Grader: "error", Pass: pass, Detail: cond(pass, cause, fmt.Sprintf("the run failed with %q, which does not contain %q", evalShorten(cause, 200), x.Error))}
	if pass {
		g.Score = 1
	}
	return []EvalGrade{g}
}

func evalDecode(v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

func summarizeEval(cases []EvalCaseResult) EvalSummary {
	s := EvalSummary{Cases: len(cases)}
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

// CompareEval names what changed from base to cur, case by case (by name).
func CompareEval(base, cur *EvalReport) *EvalComparison {
	was := map[string]bool{}
	for _, c := range base.Cases {
		was[c.Name] = c.Pass
	}
	cmp := &EvalComparison{Regressions: []string{}, Fixed: []string{},
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

func printEval(out io.Writer, r *EvalReport) {
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
		for _, g := range c.Grades {
			if !g.Pass {
				fmt.Fprintf(out, "        %s: %s\n", g.Grader, g.Detail)
			}
		}
	}
	s := r.Summary
	fmt.Fprintf(out, "%d/%d passed (%.1f%%), mean score %.2f, latency p50 %dms p95 %dms, %d tokens, $%.6f, in %.1fs\n",
		s.Passed, s.Cases, 100*s.PassRate, s.MeanScore, s.LatencyP50Ms, s.LatencyP95Ms, s.Tokens, s.CostUSD, float64(s.DurationMs)/1000)
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
