package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enums "go.temporal.io/api/enums/v1"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/eval/report"
	"github.com/weftworks/weft/internal/testkit/fakellm"
	"github.com/weftworks/weft/worker"
)

// TestEvalTwentyCases runs `weft eval` on 20 cases with the scripted model: every grader kind,
// a report, then the same dataset against that report as a baseline after the model got two
// answers wrong: exit 1 with the two regressions named.
func TestEvalTwentyCases(t *testing.T) {
	c := dial(t)
	queue := "eval-20"
	var broken atomic.Bool
	fake := fakellm.New()
	defer fake.Close()
	fake.Respond = func(r fakellm.Request) fakellm.Reply {
		all := fmt.Sprint(r.Messages)
		if strings.Contains(all, "You grade answers") {
			if strings.Contains(all, "unsure") {
				return fakellm.Text(`{"score":0.2,"reason":"it hedges"}`)
			}
			return fakellm.Text(`{"score":0.9,"reason":"it answers"}`)
		}
		var n int
		_, _ = fmt.Sscanf(all[strings.Index(all, "question ")+len("question "):], "%d", &n)
		if broken.Load() && (n == 7 || n == 13) {
			return fakellm.Text("unsure")
		}
		return fakellm.Text(fmt.Sprintf("%d", n*10))
	}
	cfg := activities.Config{OpenAIBaseURL: fake.BaseURL, OpenAIAPIKey: "k", ChatModel: "gpt-4o-mini"}
	w, err := worker.New(c, worker.Options{TaskQueue: queue, Config: cfg})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	dir := t.TempDir()
	file := filepath.Join(dir, "qa.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"name": "qa", "inputs": {"n": {"type": "number", "required": true}},
  "steps": [{"id": "answer", "tool": "llm", "inputs": {"prompt": "Answer question {{ inputs.n }} with a number"}}],
  "output": {"text": "{{ answer.output.text }}", "model": "{{ answer.output.model }}"}}`), 0o644))
	var lines []string
	for n := 1; n <= 20; n++ {
		want := fmt.Sprintf("%d", n*10)
		var expect string
		switch n % 6 {
		case 0:
			expect = fmt.Sprintf(`{"path":"text","equals":%q}`, want)
		case 1:
			expect = fmt.Sprintf(`{"contains":%q}`, want)
		case 2:
			expect = `{"path":"text","matches":"^[0-9]+$"}`
		case 3:
			expect = `{"schema":{"type":"object","required":["text","model"],"properties":{"text":{"type":"string","pattern":"^[0-9]+$"}}}}`
		case 4:
			expect = fmt.Sprintf(`{"path":"text","min":%d,"max":{"value":%d}}`, n*10, n*10)
		case 5:
			expect = `{"path":"text","judge":"answers with a number, without hedging"}`
		}
		lines = append(lines, fmt.Sprintf(`{"name":"q%02d","inputs":{"n":%d},"expect":%s}`, n, n, expect))
	}
	data := filepath.Join(dir, "cases.jsonl")
	require.NoError(t, os.WriteFile(data, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	base := filepath.Join(dir, "base.json")

	start := time.Now()
	code, out, errOut := weft(t, queue, "eval", file, "--dataset", data, "--report", base, "--concurrency", "8", "--reports-dir", filepath.Join(dir, "evals"))
	took := time.Since(start)
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "20/20 passed (100.0%)")
	require.Contains(t, out, "judge: ")
	t.Logf("20 cases, 8 at a time: %v\n%s", took, out)
	var rep report.Report
	b, err := os.ReadFile(base)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Len(t, rep.Cases, 20)
	require.EqualValues(t, 20*15, rep.Summary.Tokens, "15 tokens per scripted call")
	require.Greater(t, rep.Summary.CostUSD, 0.0)
	require.Greater(t, rep.Cases[0].LatencyMs, int64(0))
	graders := map[string]bool{}
	for _, c := range rep.Cases {
		require.True(t, c.Pass, c.Name)
		require.NotEmpty(t, c.RunID)
		for _, g := range c.Grades {
			graders[g.Grader] = true
		}
	}
	require.Len(t, graders, 7, "equals, contains, matches, schema, max, min, judge: %v", graders)

	broken.Store(true)
	start = time.Now()
	code, out, errOut = weft(t, queue, "eval", file, "--dataset", data, "--baseline", base, "--json", "--reports-dir", "off")
	t.Logf("again against the baseline: %v", time.Since(start))
	require.Equal(t, 1, code, out+errOut)
	require.Contains(t, errOut, "2 regression(s) against "+base+": q07, q13")
	var again report.Report
	require.NoError(t, json.Unmarshal([]byte(out), &again))
	require.Equal(t, []string{"q07", "q13"}, again.Baseline.Regressions)
	require.InDelta(t, -0.1, again.Baseline.PassRateDelta, 1e-9)
	for _, c := range again.Cases {
		if c.Name == "q07" { // 7 % 6 == 1: contains
			require.Equal(t, "contains", c.Grades[0].Grader)
			require.Contains(t, c.Grades[0].Detail, `not found: "70"`)
		}
	}
}

// TestEvalReviewCases runs `weft eval` on a workflow with two review steps: each case decides the
// reviews (by step, by "*") through the client's review operation as reviewer "eval", and grades
// the output after the decisions or the failure a reject ends in; a case that leaves a review
// undecided fails, naming it, and its run is cancelled rather than left waiting. The report is
// kept in --reports-dir.
func TestEvalReviewCases(t *testing.T) {
	c := dial(t)
	queue := "eval-reviews"
	w, err := worker.New(c, worker.Options{TaskQueue: queue, Config: activities.Config{}})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	dir := t.TempDir()
	file := filepath.Join(dir, "reviewed.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"name": "reviewed", "inputs": {"text": {"type": "string", "required": true}},
  "steps": [{"id": "approval", "tool": "review", "inputs": {"title": "Publish?", "data": "{{ inputs.text }}"}},
    {"id": "confirm", "tool": "review", "inputs": {"title": "Sure?", "data": "{{ approval.output.data }}"}}],
  "output": {"text": "{{ confirm.output.data }}", "first": "{{ approval.output.decision }}", "reviewer": "{{ approval.output.reviewer }}"}}`), 0o644))
	tests := []struct {
		name    string
		reviews string
		expect  string
		pass    bool
		// failure is in the case's error; grade in its first grade's detail
		failure, grade string
		decided        []string // decisions sent, in order
		cancelled      bool
	}{
		{name: "approve-all", reviews: `{"*": {"decision": "approve"}}`,
			expect: `{"equals": {"text": "hello", "first": "approve", "reviewer": "eval"}}`, pass: true, decided: []string{"approve", "approve"}},
		{name: "edit-then-approve", reviews: `{"approval": {"decision": "edit", "data": "changed"}, "confirm": {"decision": "approve"}}`,
			expect: `{"path": "text", "equals": "changed"}`, pass: true, decided: []string{"edit", "approve"}},
		{name: "reject", reviews: `{"approval": {"decision": "reject", "comment": "not now"}}`,
			expect: `{"error": "rejected by eval: not now"}`, pass: true, failure: "rejected by eval: not now", decided: []string{"reject"}},
		{name: "reject-unexpected", reviews: `{"*": {"decision": "reject"}}`,
			expect: `{"path": "text", "equals": "hello"}`, failure: "rejected by eval", decided: []string{"reject"}},
		{name: "approve-when-a-reject-is-expected", reviews: `{"*": {"decision": "approve"}}`,
			expect: `{"error": "rejected"}`, grade: "the run completed", decided: []string{"approve", "approve"}},
		{name: "undecided", reviews: `{"approval": {"decision": "approve"}}`, expect: `{}`,
			failure: `waits for review "confirm" (step "confirm") and the case has no decision for it: add "reviews": {"confirm": {"decision": "approve"}}`,
			decided: []string{"approve"}, cancelled: true},
	}
	var lines []string
	for _, tc := range tests {
		lines = append(lines, fmt.Sprintf(`{"name": %q, "inputs": {"text": "hello"}, "reviews": %s, "expect": %s}`, tc.name, tc.reviews, tc.expect))
	}
	data := filepath.Join(dir, "cases.jsonl")
	require.NoError(t, os.WriteFile(data, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	reports := filepath.Join(dir, "evals")

	code, out, errOut := weft(t, queue, "eval", file, "--dataset", data, "--json", "--reports-dir", reports, "--case-timeout", "2m")
	require.Equal(t, 1, code, out+errOut)
	require.Contains(t, errOut, "3 of 6 cases failed")
	require.Contains(t, errOut, "report kept as "+reports)
	var rep report.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.False(t, rep.StartedAt.IsZero())
	byName := map[string]report.Case{}
	for _, cs := range rep.Cases {
		byName[cs.Name] = cs
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := byName[tc.name]
			require.True(t, ok)
			require.Equal(t, tc.pass, got.Pass, "%+v", got)
			require.NotEmpty(t, got.RunID)
			require.Equal(t, map[string]any{"text": "hello"}, got.Inputs)
			require.NotEmpty(t, got.Expect)
			var decided []string
			for _, d := range got.Reviews {
				require.Equal(t, "eval", d.Reviewer)
				decided = append(decided, d.Decision)
			}
			require.Equal(t, tc.decided, decided)
			if tc.failure != "" {
				require.Contains(t, got.Error, tc.failure)
			} else {
				require.Empty(t, got.Error)
			}
			if tc.grade != "" {
				require.NotEmpty(t, got.Grades)
				require.Contains(t, got.Grades[0].Detail, tc.grade)
			}
			d, err := c.DescribeWorkflowExecution(context.Background(), got.RunID, "")
			require.NoError(t, err)
			status := d.GetWorkflowExecutionInfo().GetStatus()
			if tc.cancelled {
				require.Equal(t, enums.WORKFLOW_EXECUTION_STATUS_CANCELED, status, "an undecided run is not left waiting")
				require.Contains(t, got.Cancelled, `it waited for review "confirm", which the case does not decide`)
				require.Contains(t, got.Error, "the run was cancelled")
			} else {
				require.NotEqual(t, enums.WORKFLOW_EXECUTION_STATUS_RUNNING, status)
				require.Empty(t, got.Cancelled)
			}
		})
	}
	kept, err := report.List(reports, 0)
	require.NoError(t, err)
	require.Len(t, kept, 1)
	require.Equal(t, "reviewed", kept[0].Workflow)
	require.Equal(t, 3, kept[0].Summary.Passed)

	// The text report says what was decided and why a case failed.
	code, out, errOut = weft(t, queue, "eval", file, "--dataset", data, "--reports-dir", "off")
	require.Equal(t, 1, code, out+errOut)
	require.Contains(t, out, "reviews decided: approval edit, confirm approve")
	require.Contains(t, out, `error: the run waits for review "confirm"`)
	require.NotContains(t, errOut, "report kept")

	// A report that cannot be kept loses nothing: the results are printed, a warning names the
	// folder and what to do, and the exit status is the cases'.
	blocked := filepath.Join(data, "evals") // under a file: no folder can be made there
	code, out, errOut = weft(t, queue, "eval", file, "--dataset", data, "--reports-dir", blocked, "--report", filepath.Join(dir, "missing", "r.json"))
	require.Equal(t, 1, code, out+errOut)
	require.Contains(t, out, "3/6 passed")
	require.Contains(t, out, "reviews decided: approval edit, confirm approve")
	require.Contains(t, errOut, "warning: the report was not kept in "+blocked)
	require.Contains(t, errOut, "--reports-dir off")
	require.Contains(t, errOut, "warning: the report was not written to "+filepath.Join(dir, "missing", "r.json"))
	require.Contains(t, errOut, "3 of 6 cases failed")

	// A review key that names no review of the workflow is an invalid dataset: nothing runs.
	typo := filepath.Join(dir, "typo.jsonl")
	require.NoError(t, os.WriteFile(typo, []byte(lines[0]+"\n"+`{"name": "typo", "inputs": {"text": "hello"}, "reviews": {"aproval": {"decision": "approve"}}}`+"\n"), 0o644))
	code, out, errOut = weft(t, queue, "eval", file, "--dataset", typo, "--reports-dir", "off")
	require.Equal(t, 2, code, out+errOut)
	require.Contains(t, errOut, typo+`:2: case "typo": reviews.aproval: workflow "reviewed" has no review "aproval" (did you mean "approval"?)`)
	require.Contains(t, errOut, "(approval, confirm)")
	require.Empty(t, out)
}

// TestEvalCaseTimeout: a case that runs past --case-timeout fails, and its run is cancelled
// rather than left running; the case's result says so and why.
func TestEvalCaseTimeout(t *testing.T) {
	c := dial(t)
	queue := "eval-timeout"
	release := make(chan struct{})
	fake := fakellm.New()
	defer fake.Close()
	defer close(release) // before the fake closes: the model answers nobody any more
	fake.Respond = func(fakellm.Request) fakellm.Reply {
		<-release // a model that does not answer while the case runs
		return fakellm.Text("late")
	}
	startWorkerWithConfig(t, queue, activities.Config{OpenAIBaseURL: fake.BaseURL, OpenAIAPIKey: "k", ChatModel: "gpt-4o-mini"}, nil)

	dir := t.TempDir()
	file := filepath.Join(dir, "slow.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"name": "slow", "steps": [{"id": "answer", "tool": "llm", "inputs": {"prompt": "take your time"}}],
  "output": "{{ answer.output.text }}"}`), 0o644))
	data := filepath.Join(dir, "cases.jsonl")
	require.NoError(t, os.WriteFile(data, []byte(`{"name": "slow", "expect": {"contains": "late"}}`+"\n"), 0o644))

	code, out, errOut := weft(t, queue, "eval", file, "--dataset", data, "--json", "--reports-dir", "off", "--case-timeout", "3s")
	require.Equal(t, 1, code, out+errOut)
	var rep report.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Cases, 1)
	got := rep.Cases[0]
	require.False(t, got.Pass)
	require.NotEmpty(t, got.RunID)
	require.Equal(t, "the case ran past --case-timeout 3s", got.Cancelled)
	require.Equal(t, "the case ran past --case-timeout 3s; the run was cancelled", got.Error)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.Error(t, c.GetWorkflow(ctx, got.RunID, "").Get(ctx, nil), "the run ends, cancelled")
	d, err := c.DescribeWorkflowExecution(ctx, got.RunID, "")
	require.NoError(t, err)
	require.Equal(t, enums.WORKFLOW_EXECUTION_STATUS_CANCELED, d.GetWorkflowExecutionInfo().GetStatus())
}
