package starter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/activity"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/internal/safefile"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/templates"
	"github.com/weftworks/weft/workflows"
	"github.com/weftworks/weft/workflows/dsl"
)

// fixture is one `weft test` case: a workflow run on the real interpreter with tool outputs
// mocked. Its JSON Schema, derived from this type (fixtureSchema), is what a fixture file is
// checked against before it is decoded: every field may be left out, none may be added.
type fixture struct {
	Name        string                    `json:"name,omitempty"`
	Description string                    `json:"description,omitempty"`
	Workflow    string                    `json:"workflow,omitempty"`
	Inputs      map[string]any            `json:"inputs,omitempty"`
	Mocks       map[string]any            `json:"mocks,omitempty"`
	Reviews     map[string]map[string]any `json:"reviews,omitempty"`
	Expect      struct {
		Steps map[string]struct {
			Status string `json:"status,omitempty"`
		} `json:"steps,omitempty"`
		Output   any    `json:"output,omitempty"`
		NoErrors bool   `json:"noErrors,omitempty"`
		Error    string `json:"error,omitempty"`
	} `json:"expect,omitzero"`
}

// fixtureSchema is the JSON Schema of a fixture file, derived from the fixture type.
var fixtureSchema = sync.OnceValues(func() (any, error) {
	doc, err := toolspec.SchemaOf(reflect.TypeFor[fixture]())
	if err != nil {
		return nil, err
	}
	var sch any
	return sch, json.Unmarshal([]byte(doc), &sch)
})

// parseFixture reads a fixture file: bad JSON, a field no fixture has (at any depth) and a value
// of the wrong type are each a problem at its line and column, with a did-you-mean, as validate
// reports a workflow file's.
func parseFixture(path string, data []byte) (*dsl.Source, fixture, []string) {
	var fx fixture
	src, err := dsl.ParseJSON(path, data)
	if err != nil {
		return nil, fx, diagLines(err)
	}
	sch, err := fixtureSchema()
	if err != nil {
		return nil, fx, []string{fmt.Sprintf("%s: internal: the fixture schema: %v", path, err)}
	}
	if _, ok := src.Root.(map[string]any); !ok {
		return nil, fx, []string{src.At("", "a fixture is a JSON object", `{"inputs": {...}, "mocks": {...}, "expect": {...}}`).String()}
	}
	if ds := src.Check("", sch); len(ds) > 0 {
		return nil, fx, diagLines(ds)
	}
	if err := json.Unmarshal(src.Data, &fx); err != nil {
		// The schema took the file, so this is weft's bug: say so rather than guess.
		return nil, fx, []string{src.At("", "internal: the fixture passed its schema and could not be read: "+err.Error(), "").String()}
	}
	return src, fx, nil
}

// diagLines prints a Diagnostics error one problem a line (any other error as its text).
func diagLines(err error) []string {
	var ds dsl.Diagnostics
	if !errors.As(err, &ds) {
		return []string{err.Error()}
	}
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.String()
	}
	return out
}

func newTestCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "test FIXTURE|DIR...",
		Short: "Run workflow files on the real interpreter with mocked tool outputs",
		Long: "Each fixture (*.test.json) names a workflow (a path, a template name, or by default the\n" +
			"part of its file name before the first dot: multi-collection-search.basic.test.json runs\n" +
			"multi-collection-search), inputs, mocks {tool: output} ({\"$error\": \"msg\"} makes the tool fail),\n" +
			"reviews {step: {decision, data, reviewer, comment}} and expectations: steps {id: {status}},\n" +
			"output (objects match when every expected key matches), noErrors, or error (a substring).\n" +
			"Pure local tools (chunk, estimate, explain, models: no network, no store) run for real when\n" +
			"not mocked, and the case's line says which did; every other tool needs a mock.\n" +
			"A mock or review key that names no step (or, for mocks, no tool), a typo'd key in a\n" +
			"decision or a mock, a mock the tool could never return (a field its output does not have,\n" +
			"a value of the wrong type), and a fixture field that is unknown or of the wrong type fail\n" +
			"the case before it runs, with their line and a did-you-mean.\n" +
			"Prints one line per case and `N passed, N failed`; exit 1 if any failed.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := fixtureFiles(args)
			if err != nil {
				return invalid(err)
			}
			out := cmd.OutOrStdout()
			passed, failed := 0, 0
			for _, f := range files {
				name, problems, warnings, real := runFixture(f)
				ran := ""
				if len(real) > 0 {
					ran = " (ran for real, unmocked: " + strings.Join(real, ", ") + ")"
				}
				if len(problems) == 0 {
					passed++
					fmt.Fprintf(out, "✔ %s%s\n", name, ran)
					for _, w := range warnings {
						fmt.Fprintf(out, "    %s\n", w)
					}
					continue
				}
				failed++
				fmt.Fprintf(out, "✗ %s%s\n", name, ran)
				for _, p := range append(problems, warnings...) {
					fmt.Fprintf(out, "    %s\n", p)
				}
			}
			fmt.Fprintf(out, "%d passed, %d failed\n", passed, failed)
			if failed > 0 {
				return &ExitError{Code: ExitFailed, Silent: true}
			}
			return nil
		},
	}
}

func fixtureFiles(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, fmt.Errorf("fixture %s: %w", a, err)
		}
		if !st.IsDir() {
			files = append(files, a)
			continue
		}
		found, err := filepath.Glob(filepath.Join(a, "*.test.json"))
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("no *.test.json fixtures in %s", a)
		}
		files = append(files, found...)
	}
	sort.Strings(files)
	return files, nil
}

// MaxFixtureBytes caps a fixture file (its inputs, mocked outputs and expectations).
const MaxFixtureBytes = 8 << 20

// runFixture runs one fixture file and returns its display name, every failed expectation and
// the pure tools that ran for real because the fixture does not mock them.
func runFixture(path string) (name string, problems, warnings, real []string) {
	data, err := safefile.ReadHint(path, MaxFixtureBytes, "fixture",
		"mock smaller outputs, or split the cases into several fixtures")
	if err != nil {
		return path, []string{err.Error()}, nil, nil
	}
	return runFixtureReal(path, data)
}

// runFixtureData runs a fixture read from path.
func runFixtureData(path string, data []byte) (string, []string) {
	name, problems, _, _ := runFixtureReal(path, data)
	return name, problems
}

// runFixtureReal runs a fixture read from path; real lists the pure tools run unmocked.
func runFixtureReal(path string, data []byte) (name string, problems, warnings, real []string) {
	fsrc, fx, problems := parseFixture(path, data)
	if len(problems) > 0 {
		return path, problems, nil, nil
	}
	name = filepath.Base(path)
	if fx.Name != "" {
		name = fx.Name + " (" + filepath.Base(path) + ")"
	}
	src, def, err := fixtureWorkflow(path, fx.Workflow)
	if err != nil {
		return name, []string{err.Error()}, warnings, real
	}
	w, err := dsl.Load(src, def)
	if err != nil {
		return name, []string{err.Error()}, warnings, real
	}
	problems, warnings = checkFixture(fsrc, fx, w)
	if len(problems) > 0 {
		return name, problems, warnings, nil
	}
	inputs, err := dsl.ResolveInputs(w.Def, nil, fx.Inputs)
	if err != nil {
		return name, []string{err.Error()}, warnings, real
	}
	res, missing, real, runErr := executeFixture(w, src, inputs, fx)
	for _, m := range missing {
		if strings.HasPrefix(m, "reviews.") {
			problems = append(problems, m)
			continue
		}
		problems = append(problems, fmt.Sprintf("review %q is waiting and the fixture has no reviews.%s decision", m, m))
	}
	if len(missing) > 0 {
		return name, problems, warnings, real
	}
	if fx.Expect.Error != "" {
		if runErr == nil || !strings.Contains(runErr.Error(), fx.Expect.Error) {
			problems = append(problems, fmt.Sprintf("expected the run to fail with %q, got %v", fx.Expect.Error, runErr))
		}
		return name, problems, warnings, real
	}
	if runErr != nil {
		return name, append(problems, "run failed: "+runErr.Error()), warnings, real
	}
	got := map[string]*weftv1.StepState{}
	for _, s := range res.Steps {
		got[s.Id] = s
	}
	ids := make([]string, 0, len(fx.Expect.Steps))
	for id := range fx.Expect.Steps {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		s, ok := got[id]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("expect.steps.%s: the workflow has no such step", id))
		case s.Status != fx.Expect.Steps[id].Status:
			problems = append(problems, fmt.Sprintf("step %s: status %s, want %s%s", id, s.Status, fx.Expect.Steps[id].Status, detail(s)))
		}
	}
	if fx.Expect.NoErrors {
		for _, s := range res.Steps {
			if s.Error != "" {
				problems = append(problems, fmt.Sprintf("step %s failed: %s", s.Id, s.Error))
			}
		}
	}
	if fx.Expect.Output != nil {
		actual := res.Output.AsInterface()
		if msg := match("output", fx.Expect.Output, actual); msg != "" {
			problems = append(problems, msg)
		}
	}
	return name, problems, warnings, real
}

func detail(s *weftv1.StepState) string {
	switch {
	case s.Error != "":
		return " (" + s.Error + ")"
	case s.Reason != "":
		return " (" + s.Reason + ")"
	}
	return ""
}

// fixtureWorkflow finds the workflow a fixture runs.
func fixtureWorkflow(fixturePath, ref string) (string, []byte, error) {
	dir := filepath.Dir(fixturePath)
	if ref == "" {
		ref = strings.SplitN(filepath.Base(fixturePath), ".", 2)[0]
	}
	for _, p := range []string{ref, filepath.Join(dir, ref), filepath.Join(dir, ref+".json"), filepath.Join(dir, ref+".weft.json")} {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			data, err := dsl.ReadFile(p)
			return p, data, err
		}
	}
	t, err := templates.Get(ref)
	if err != nil {
		return "", nil, fmt.Errorf("workflow %q: no such file next to the fixture and no built-in template of that name", ref)
	}
	return t.Name, t.Data, nil
}

// executeFixture runs the workflow in Temporal's test environment. Review decisions from the
// fixture are signalled once their step is waiting; reviews without one are reported and the run
// is cancelled. Pure tools (toolspec.Spec.Pure: no network, no store) that the fixture does not
// mock run for real; real lists them.
func executeFixture(w *dsl.Workflow, src string, inputs map[string]any, fx fixture) (res *weftv1.RunResult, missing, real []string, err error) {
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(tlog.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(30 * time.Second)
	// as on weft's workers: a large forEach renders its items in one workflow task
	env.SetWorkerOptions(sdkworker.Options{DeadlockDetectionTimeout: workflows.DeadlockDetectionTimeout})
	env.RegisterWorkflowWithOptions(workflows.Run, workflow.RegisterOptions{Name: workflows.WorkflowType})
	env.RegisterWorkflowWithOptions(workflows.Batch, workflow.RegisterOptions{Name: workflows.BatchWorkflowType})
	var mu sync.Mutex
	calls := map[string]int{}
	ranForReal := map[string]bool{}
	handlers := new(activities.Tools).Handlers()
	for _, s := range toolspec.All() {
		if s.Kind != toolspec.KindActivity {
			continue
		}
		tool := s.Name
		var pure func(context.Context, map[string]any) (toolspec.Result, error)
		if h := handlers[tool]; s.Pure && h != nil {
			pure = activities.Activity(s, h)
		}
		call := func(ctx context.Context, in map[string]any) (toolspec.Result, error) {
			mu.Lock()
			defer mu.Unlock()
			// A mock is keyed by the step's id (activity ids name their step) or by the tool.
			key := workflows.StepOfActivity(activity.GetInfo(ctx).ActivityID)
			out, ok := fx.Mocks[key]
			if !ok {
				key = tool
				out, ok = fx.Mocks[tool]
			}
			if !ok && pure != nil {
				ranForReal[tool] = true
				return pure(ctx, in)
			}
			if !ok {
				return toolspec.Result{}, temporal.NewNonRetryableApplicationError(
					fmt.Sprintf("no mock for tool %q: add \"mocks\": {\"%s\": <output>} (or keyed by the step's id) to the fixture", tool, tool), toolspec.ErrMissingConfig, nil)
			}
			if m, ok := out.(map[string]any); ok {
				if seq, ok := m["$calls"].([]any); ok {
					// One output per call, in order (an agent's model answers, for example).
					n := calls[key]
					if n >= len(seq) {
						return toolspec.Result{}, temporal.NewNonRetryableApplicationError(
							fmt.Sprintf("mock %s.$calls has %d outputs and the run made call %d: add outputs", key, len(seq), n+1), toolspec.ErrMissingConfig, nil)
					}
					out = seq[n]
					calls[key] = n + 1
				}
			}
			if m, ok := out.(map[string]any); ok {
				if msg, ok := m["$error"].(string); ok {
					return toolspec.Result{}, temporal.NewNonRetryableApplicationError(msg, "MockError", nil)
				}
			}
			return toolspec.Result{Output: out, Attempt: activity.GetInfo(ctx).Attempt}, nil
		}
		env.RegisterActivityWithOptions(call, activity.RegisterOptions{Name: tool})
		if s.Batch != nil {
			// A forEach over a batching tool calls its batch activity: each item gets the mock
			// (or the pure tool's own output), as one call per item would.
			perItem := activities.PerItemBatch(s, func(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
				r, err := call(ctx, in)
				return r.Output, r.Usage, err
			}, 1) // one at a time: a mock's $calls answer in item order
			env.RegisterActivityWithOptions(activities.BatchActivity(s, perItem), activity.RegisterOptions{Name: s.BatchActivity()})
		}
	}
	var invalidReviews []string
	sent := map[string]bool{}
	var tick func()
	tick = func() {
		v, err := env.QueryWorkflow(workflows.QueryState)
		if err != nil {
			return
		}
		var st weftv1.ExecutionState
		if v.Get(&st) != nil {
			return
		}
		for _, rv := range st.PendingReviews {
			if sent[rv.Id] {
				continue
			}
			// A decision is keyed by the review's id ("step[1]", "agent/call_1") or by its step.
			d, ok := fx.Reviews[rv.Id]
			if !ok {
				d, ok = fx.Reviews[rv.Step]
			}
			if !ok {
				missing = append(missing, rv.Id)
				env.CancelWorkflow()
				return
			}
			if msg := checkFixtureDecision(d); msg != "" {
				invalidReviews = append(invalidReviews, fmt.Sprintf("reviews.%s: %s", rv.Id, msg))
				env.CancelWorkflow()
				return
			}
			dd := map[string]any{}
			for k, v := range d {
				dd[k] = v
			}
			dd["id"] = rv.Id
			delete(dd, "step")
			raw, _ := json.Marshal(dd)
			sent[rv.Id] = true
			env.SignalWorkflow(workflows.SignalReview, json.RawMessage(raw))
		}
		if !env.IsWorkflowCompleted() {
			env.RegisterDelayedCallback(tick, time.Minute)
		}
	}
	env.RegisterDelayedCallback(tick, time.Second)
	req, err := workflows.NewRequest(w, src, inputs, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	env.ExecuteWorkflow(workflows.WorkflowType, req)
	missing = append(missing, invalidReviews...)
	real = slices.Sorted(maps.Keys(ranForReal))
	if err := env.GetWorkflowError(); err != nil {
		return nil, missing, real, err
	}
	var result weftv1.RunResult
	if err := env.GetWorkflowResult(&result); err != nil {
		return nil, missing, real, err
	}
	return &result, missing, real, nil
}

// checkFixtureDecision says what is wrong with a fixture's review decision ("" when nothing).
func checkFixtureDecision(d map[string]any) string {
	kind, ok := d["decision"].(string)
	if !ok {
		kind = compact(d["decision"])
	}
	if err := workflows.CheckDecisionKind(kind, d["data"] != nil); err != nil {
		return err.Error()
	}
	return ""
}

// match compares an expectation with a value: objects match when every expected key matches,
// arrays element by element, numbers by value.
func match(path string, want, got any) string {
	if c, ok := shapeConstraint(want); ok {
		return c.check(path, got)
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: got %s, want an object", path, compact(got))
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if msg := match(path+"."+k, w[k], g[k]); msg != "" {
				return msg
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: got %s, want %s", path, compact(got), compact(want))
		}
		for i := range w {
			if msg := match(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); msg != "" {
				return msg
			}
		}
		return ""
	}
	if reflect.DeepEqual(want, got) {
		return ""
	}
	return fmt.Sprintf("%s: got %s, want %s", path, compact(got), compact(want))
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// constraint is a vai-style expectation of a value's shape: {"type": "array", "minLength": 3}.
type constraint struct {
	typ       string
	minLength int
	hasMin    bool
}

// shapeConstraint reads an expectation that is exactly a shape constraint: an object with "type"
// (array, string, number, boolean, object) and optionally "minLength", nothing else. Any other
// object is compared as a value.
func shapeConstraint(want any) (constraint, bool) {
	m, ok := want.(map[string]any)
	if !ok {
		return constraint{}, false
	}
	typ, _ := m["type"].(string)
	switch typ {
	case "array", "string", "number", "boolean", "object":
	default:
		return constraint{}, false
	}
	c := constraint{typ: typ}
	for k, v := range m {
		switch k {
		case "type":
		case "minLength":
			n, ok := v.(float64)
			if !ok {
				return constraint{}, false
			}
			c.minLength, c.hasMin = int(n), true
		default:
			return constraint{}, false
		}
	}
	return c, true
}

func (c constraint) check(path string, got any) string {
	var n int
	var actual string
	switch g := got.(type) {
	case []any:
		actual, n = "array", len(g)
	case string:
		actual, n = "string", len([]rune(g))
	case float64:
		actual = "number"
	case bool:
		actual = "boolean"
	case map[string]any:
		actual, n = "object", len(g)
	case nil:
		actual = "null"
	default:
		actual = fmt.Sprintf("%T", got)
	}
	if actual != c.typ {
		return fmt.Sprintf("%s: want a %s, got %s %s", path, c.typ, actual, shorten(compact(got)))
	}
	if c.hasMin && n < c.minLength {
		unit := "items"
		if c.typ == "string" {
			unit = "characters"
		}
		return fmt.Sprintf("%s: want at least %d %s, got %d: %s", path, c.minLength, unit, n, shorten(compact(got)))
	}
	return ""
}

func shorten(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
