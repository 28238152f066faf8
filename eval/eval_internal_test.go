package eval

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/eval/report"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/workflows/dsl"
)

func TestGradeEval(t *testing.T) {
	out := map[string]any{"answer": "Retries back off exponentially.", "score": 4.0, "items": []any{map[string]any{"n": 2.0}}}
	judge := func(_ context.Context, rubric, text string) (float64, string, int64, float64, error) {
		if strings.Contains(text, "exponentially") {
			return 0.9, "says how", 15, 0.001, nil
		}
		return 0.1, "vague", 15, 0.001, nil
	}
	tests := []struct {
		name   string
		expect string
		pass   bool
		detail string
	}{
		{"equals string at a path", `{"path":"answer","equals":"Retries back off exponentially."}`, true, ""},
		{"equals JSON", `{"path":"items","equals":[{"n":2}]}`, true, ""},
		{"equals fails", `{"path":"score","equals":5}`, false, "want 5, got 4"},
		{"contains list", `{"path":"answer","contains":["Retries","back off"]}`, true, ""},
		{"contains fails", `{"contains":"linear"}`, false, `not found: "linear"`},
		{"matches", `{"path":"answer","matches":"^Retries .* exponentially\\.$"}`, true, ""},
		{"schema", `{"schema":{"type":"object","required":["answer","score"]}}`, true, ""},
		{"schema fails", `{"schema":{"type":"object","required":["missing"]}}`, false, "missing"},
		{"max with a path", `{"max":{"path":"score","value":5}}`, true, ""},
		{"min fails", `{"min":{"path":"items.0.n","value":3}}`, false, "2 is below 3"},
		{"max of a non-number", `{"path":"answer","max":1}`, false, "is not a number"},
		{"judge", `{"path":"answer","judge":"explains the backoff"}`, true, "says how"},
		{"judge with a higher bar", `{"path":"answer","judge":{"rubric":"x","pass":0.95}}`, false, "says how"},
		{"a path that is not there", `{"path":"nope","equals":1}`, false, `no "nope"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var x Expect
			require.NoError(t, json.Unmarshal([]byte(tc.expect), &x))
			require.NoError(t, x.check())
			grades, _, _ := Grade(context.Background(), x, out, judge)
			require.NotEmpty(t, grades)
			pass := true
			var details []string
			for _, g := range grades {
				pass = pass && g.Pass
				details = append(details, g.Detail)
			}
			require.Equal(t, tc.pass, pass, details)
			require.Contains(t, strings.Join(details, "; "), tc.detail)
		})
	}
}

func TestReadEvalDataset(t *testing.T) {
	_, err := ReadDataset(strings.NewReader("{\"name\":\"a\",\"inputs\":{}}\n{\"name\":\"a\"}\n"), "d.jsonl")
	require.ErrorContains(t, err, `d.jsonl:2: case "a" is named on line 1 too`)
	_, err = ReadDataset(strings.NewReader(`{"name":"a","expect":{"matches":"("}}`), "d.jsonl")
	require.ErrorContains(t, err, "matches:")
	_, err = ReadDataset(strings.NewReader(`{"name":"a","expect":{"equal":1}}`), "d.jsonl")
	require.ErrorContains(t, err, `unknown field "equal"`)
	cases, err := ReadDataset(strings.NewReader("# comment\n\n{\"inputs\":{\"q\":1},\"expect\":{\"max\":3}}\n"), "d.jsonl")
	require.NoError(t, err)
	require.Equal(t, "line-3", cases[0].Name)
}

func TestCompareEval(t *testing.T) {
	base := &report.Report{Cases: []report.Case{{Name: "a", Pass: true}, {Name: "b", Pass: false}, {Name: "c", Pass: true}}}
	cur := &report.Report{Cases: []report.Case{{Name: "a", Pass: false}, {Name: "b", Pass: true}, {Name: "d", Pass: true}}}
	base.Summary, cur.Summary = summarize(base.Cases), summarize(cur.Cases)
	cmp := Compare(base, cur)
	require.Equal(t, []string{"a"}, cmp.Regressions)
	require.Equal(t, []string{"b"}, cmp.Fixed)
	require.Equal(t, []string{"d"}, cmp.New)
	require.Equal(t, []string{"c"}, cmp.Missing)
}

func TestEvalReviewCases(t *testing.T) {
	tests := []struct {
		name string
		line string
		err  string
	}{
		{"approve by step", `{"name":"a","reviews":{"approval":{"decision":"approve"}}}`, ""},
		{"edit with data", `{"name":"a","reviews":{"approval":{"decision":"edit","data":{"text":"x"}}}}`, ""},
		{"reject every review", `{"name":"a","reviews":{"*":{"decision":"reject","comment":"no"}},"expect":{"error":"rejected"}}`, ""},
		{"edit without data", `{"name":"a","reviews":{"approval":{"decision":"edit"}}}`, `case "a": reviews.approval:`},
		{"an unknown decision", `{"name":"a","reviews":{"approval":{"decision":"ok"}}}`, `reviews.approval: decision "ok" is not approve, edit or reject`},
		{"a reviewer of its own", `{"name":"a","reviews":{"approval":{"decision":"approve","reviewer":"ana"}}}`, `unknown field "reviewer"`},
		{"an empty key", `{"name":"a","reviews":{"":{"decision":"approve"}}}`, `a key names a review's id, its step, or "*"`},
		{"error with output graders", `{"name":"a","expect":{"error":"rejected","contains":"x"}}`, `give "error" alone`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadDataset(strings.NewReader(tc.line), "d.jsonl")
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.err)
		})
	}
}

func TestEvalDecisionFor(t *testing.T) {
	cs := Case{Reviews: map[string]Decision{
		"each[1]": {Decision: "reject"}, "each": {Decision: "edit", Data: "x"}, "*": {Decision: "approve"},
	}}
	tests := []struct {
		id, step string
		decision string
		key      string
	}{
		{"each[1]", "each", "reject", "each[1]"},
		{"each[0]", "each", "edit", "each"},
		{"approval", "approval", "approve", "*"},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			d, key, ok := cs.decisionFor(&weftv1.ReviewRequest{Id: tc.id, Step: tc.step})
			require.True(t, ok)
			require.Equal(t, tc.decision, d.Decision)
			require.Equal(t, tc.key, key)
		})
	}
	_, _, ok := Case{Reviews: map[string]Decision{"other": {Decision: "approve"}}}.decisionFor(&weftv1.ReviewRequest{Id: "approval", Step: "approval"})
	require.False(t, ok)
	msg := noDecision(&weftv1.ReviewRequest{Id: "approval", Step: "approval"})
	require.Contains(t, msg, `review "approval" (step "approval")`)
	require.Contains(t, msg, `"reviews": {"approval": {"decision": "approve"}}`)
}

func TestGradeEvalError(t *testing.T) {
	tests := []struct {
		name   string
		expect Expect
		cause  string // "" : the run completed
		pass   bool
		detail string
	}{
		{"a reject expected", Expect{Error: "rejected"}, `step "approval": rejected by eval: no`, true, "rejected by eval"},
		{"another failure", Expect{Error: "rejected"}, `step "fetch": timeout`, false, `does not contain "rejected"`},
		{"a failure not expected", Expect{}, `step "fetch": timeout`, false, "the run failed"},
		{"a completion when a failure is expected", Expect{Error: "rejected"}, "", false, "the run completed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var grades []report.Grade
			if tc.cause == "" {
				grades, _, _ = Grade(context.Background(), tc.expect, map[string]any{"text": "ok"}, nil)
			} else {
				grades = GradeFailure(tc.expect, tc.cause)
			}
			require.Len(t, grades, 1)
			require.Equal(t, "error", grades[0].Grader)
			require.Equal(t, tc.pass, grades[0].Pass)
			require.Contains(t, grades[0].Detail, tc.detail)
		})
	}
}

// TestCheckEvalReviews: before anything runs, every key of a case's reviews must name a review a
// run may wait for (a review step, an item of one, an agent's tool call, a called workflow's review
// step, "*"); a key that names none is an error naming the dataset's line, the key, the keys that
// exist and the nearest. A workflow that calls one by a computed name is not checked.
func TestCheckEvalReviews(t *testing.T) {
	load := func(name, text string) *dsl.Workflow {
		w, err := dsl.Load(name+".json", []byte(text))
		require.NoError(t, err)
		return w
	}
	child := load("signoff", `{"name": "signoff", "steps": [{"id": "sign", "tool": "review", "inputs": {"title": "Sign?"}}]}`)
	resolve := func(name string) (*dsl.Workflow, error) {
		if name == "signoff" {
			return child, nil
		}
		return weftclient.FileResolver("")(name)
	}
	w := load("reviewed", `{"name": "reviewed", "inputs": {"items": {"type": "array"}},
  "steps": [{"id": "approval", "tool": "review", "inputs": {"title": "Publish?"}},
    {"id": "each", "tool": "review", "forEach": "{{ inputs.items }}", "inputs": {"title": "Item?", "data": "{{ item }}"}},
    {"id": "agent", "tool": "agent", "inputs": {"prompt": "go", "tools": ["search", "ingest"], "approve": ["ingest"]}},
    {"id": "answer", "tool": "llm", "inputs": {"prompt": "hi"}},
    {"id": "sub", "tool": "workflow", "inputs": {"workflow": "signoff"}}]}`)
	steps, known := ReviewSteps(w, resolve)
	require.True(t, known)
	require.Equal(t, []string{"agent", "approval", "each", "sign"}, steps)

	tests := []struct {
		name, dataset string
		err           []string
	}{
		{"steps, items, tool calls, a child's step, *", `{"name": "a", "reviews": {"approval": {"decision": "approve"}, "each[1]": {"decision": "reject"}, ` +
			`"agent/call_1": {"decision": "approve"}, "sign": {"decision": "approve"}, "*": {"decision": "approve"}}}`, nil},
		{"a typo", "{\"name\": \"a\"}\n{\"name\": \"b\", \"reviews\": {\"aproval\": {\"decision\": \"approve\"}}}",
			[]string{`d.jsonl:2: case "b": reviews.aproval: workflow "reviewed" has no review "aproval" (did you mean "approval"?)`, "(agent, approval, each, sign)"}},
		{"a typo in an item's key", `{"name": "a", "reviews": {"eahc[0]": {"decision": "approve"}}}`, []string{`did you mean "each[0]"?`}},
		{"a step that waits for no review", `{"name": "a", "reviews": {"answer": {"decision": "approve"}}}`, []string{`has no review "answer"`}},
		{"nothing near", `{"name": "a", "reviews": {"publish-step": {"decision": "approve"}}}`, []string{`has no review "publish-step": a key is`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cases, err := ReadDataset(strings.NewReader(tc.dataset), "d.jsonl")
			require.NoError(t, err)
			err = CheckReviews("d.jsonl", w.Def.Name, cases, steps)
			if tc.err == nil {
				require.NoError(t, err)
				return
			}
			for _, e := range tc.err {
				require.ErrorContains(t, err, e)
			}
			require.NotContains(t, err.Error(), "did you mean \"publish")
		})
	}

	none := load("plain", `{"name": "plain", "steps": [{"id": "answer", "tool": "llm", "inputs": {"prompt": "hi"}}]}`)
	steps, known = ReviewSteps(none, resolve)
	require.True(t, known)
	cases, err := ReadDataset(strings.NewReader(`{"name": "a", "reviews": {"answer": {"decision": "approve"}}}`), "d.jsonl")
	require.NoError(t, err)
	require.ErrorContains(t, CheckReviews("d.jsonl", "plain", cases, steps), `workflow "plain" has no step that waits for a review`)

	dynamic := load("dynamic", `{"name": "dynamic", "inputs": {"wf": {"type": "string"}},
  "steps": [{"id": "sub", "tool": "workflow", "inputs": {"workflow": "{{ inputs.wf }}"}}]}`)
	_, known = ReviewSteps(dynamic, resolve)
	require.False(t, known, "a workflow called by a computed name: its reviews are not known before the run")
}
