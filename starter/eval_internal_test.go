package starter

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
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
			var x EvalExpect
			require.NoError(t, json.Unmarshal([]byte(tc.expect), &x))
			require.NoError(t, x.check())
			grades, _, _ := GradeEval(context.Background(), x, out, judge)
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
	_, err := ReadEvalDataset(strings.NewReader("{\"name\":\"a\",\"inputs\":{}}\n{\"name\":\"a\"}\n"), "d.jsonl")
	require.ErrorContains(t, err, `d.jsonl:2: case "a" is named on line 1 too`)
	_, err = ReadEvalDataset(strings.NewReader(`{"name":"a","expect":{"matches":"("}}`), "d.jsonl")
	require.ErrorContains(t, err, "matches:")
	_, err = ReadEvalDataset(strings.NewReader(`{"name":"a","expect":{"equal":1}}`), "d.jsonl")
	require.ErrorContains(t, err, `unknown field "equal"`)
	cases, err := ReadEvalDataset(strings.NewReader("# comment\n\n{\"inputs\":{\"q\":1},\"expect\":{\"max\":3}}\n"), "d.jsonl")
	require.NoError(t, err)
	require.Equal(t, "line-3", cases[0].Name)
}

func TestCompareEval(t *testing.T) {
	base := &EvalReport{Cases: []EvalCaseResult{{Name: "a", Pass: true}, {Name: "b", Pass: false}, {Name: "c", Pass: true}}}
	cur := &EvalReport{Cases: []EvalCaseResult{{Name: "a", Pass: false}, {Name: "b", Pass: true}, {Name: "d", Pass: true}}}
	base.Summary, cur.Summary = summarizeEval(base.Cases), summarizeEval(cur.Cases)
	cmp := CompareEval(base, cur)
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
			_, err := ReadEvalDataset(strings.NewReader(tc.line), "d.jsonl")
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.err)
		})
	}
}

func TestEvalDecisionFor(t *testing.T) {
	cs := EvalCase{Reviews: map[string]EvalDecision{
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
	_, _, ok := EvalCase{Reviews: map[string]EvalDecision{"other": {Decision: "approve"}}}.decisionFor(&weftv1.ReviewRequest{Id: "approval", Step: "approval"})
	require.False(t, ok)
	msg := noDecision(&weftv1.ReviewRequest{Id: "approval", Step: "approval"})
	require.Contains(t, msg, `review "approval" (step "approval")`)
	require.Contains(t, msg, `"reviews": {"approval": {"decision": "approve"}}`)
}

func TestGradeEvalError(t *testing.T) {
	tests := []struct {
		name   string
		expect EvalExpect
		cause  string // "" : the run completed
		pass   bool
		detail string
	}{
		{"a reject expected", EvalExpect{Error: "rejected"}, `step "approval": rejected by eval: no`, true, "rejected by eval"},
		{"another failure", EvalExpect{Error: "rejected"}, `step "fetch": timeout`, false, `does not contain "rejected"`},
		{"a failure not expected", EvalExpect{}, `step "fetch": timeout`, false, "the run failed"},
		{"a completion when a failure is expected", EvalExpect{Error: "rejected"}, "", false, "the run completed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var grades []EvalGrade
			if tc.cause == "" {
				grades, _, _ = GradeEval(context.Background(), tc.expect, map[string]any{"text": "ok"}, nil)
			} else {
				grades = GradeEvalFailure(tc.expect, tc.cause)
			}
			require.Len(t, grades, 1)
			require.Equal(t, "error", grades[0].Grader)
			require.Equal(t, tc.pass, grades[0].Pass)
			require.Contains(t, grades[0].Detail, tc.detail)
		})
	}
}
