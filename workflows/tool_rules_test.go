package workflows_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/events"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows"
)

// ruleFlow: an agent whose calls of ingest wait for approval; its model calls ingest three times
// (one call per answer: a, b, c), then answers.
const ruleFlow = `{"name":"r","steps":[
  {"id":"helper","tool":"agent","inputs":{"prompt":"file the notes","tools":["search","ingest"],"approve":["ingest"],"maxIterations":6}}
],"output":"{{ helper.output }}"}`

func threeIngests() *scriptedModel {
	return &scriptedModel{answers: []func(map[string]any) map[string]any{
		callTools([3]string{"a", "ingest", `{"text":"one","source":"1.md"}`}),
		callTools([3]string{"b", "ingest", `{"text":"two","source":"2.md"}`}),
		callTools([3]string{"c", "ingest", `{"text":"three","source":"3.md"}`}),
		say("filed"),
	}}
}

// decide sends decision d by the review Update at delay; refused says it must be refused.
func decide(t *testing.T, h *harness, at time.Duration, d string, refused bool) {
	h.env.RegisterDelayedCallback(func() {
		h.env.UpdateWorkflow(runwire.UpdateReview, d, &testsuite.TestUpdateCallback{
			OnAccept: func() {
				if refused {
					t.Errorf("%s was accepted", d)
				}
			},
			OnReject: func(err error) {
				if !refused {
					t.Errorf("%s refused: %v", d, err)
				}
			},
			OnComplete: func(any, error) {},
		}, decision(t, d))
	}, at)
}

// requested is the ids of the run's review_requested events.
func requested(t *testing.T, h *harness) []string {
	var out []string
	for _, e := range readEvents(t, h, 0).Events {
		if e.Type == events.ReviewRequested {
			out = append(out, e.Key)
		}
	}
	return out
}

// TestToolRuleDecidesLaterCalls: an approve or reject with scope "run" decides that call and the
// later calls of the same tool in the run without waiting (no review is opened for them), each
// recorded with the rule, who made it and when; an always-reject answers the model with the
// refusal. The run refuses the scope on an edit and an unknown scope. Recorded before
// ChangeToolRules, each call waits for its own decision (issue 44, item 5).
func TestToolRuleDecidesLaterCalls(t *testing.T) {
	for _, tc := range []struct {
		decision, status, rule string
	}{
		{runwire.DecisionApprove, "completed", "approved by rule of ana at "},
		{runwire.DecisionReject, "rejected", "rejected by rule of ana at "},
	} {
		t.Run(tc.decision+" always", func(t *testing.T) {
			h := newHarness(t)
			m := threeIngests()
			withModel(h, m)
			decide(t, h, time.Second, `{"id":"helper/a","decision":"edit","data":{"text":"x","source":"1.md"},"scope":"run"}`, true)
			decide(t, h, time.Second, `{"id":"helper/a","decision":"approve","scope":"forever"}`, true)
			decide(t, h, time.Second, `{"id":"helper/a","decision":"`+tc.decision+`","reviewer":"ana","scope":"run"}`, false)
			res, err := h.run(t, ruleFlow, nil)
			require.NoError(t, err)
			require.Equal(t, []string{"helper/a"}, requested(t, h), "b and c were decided by the rule: no review opened")
			calls := agentOutput(t, res)["toolCalls"].([]any)
			require.Len(t, calls, 3)
			first := calls[0].(map[string]any)
			require.Equal(t, tc.status, first["status"])
			require.Equal(t, "ana", first["reviewer"])
			require.Nil(t, first["rule"], "the first call was decided by the person")
			for _, c := range calls[1:] {
				rec := c.(map[string]any)
				require.Equal(t, tc.status, rec["status"], rec["id"])
				require.Equal(t, tc.decision, rec["decision"])
				require.Equal(t, "ana", rec["reviewer"])
				require.True(t, strings.HasPrefix(rec["rule"].(string), tc.rule), rec["rule"])
				_, err := time.Parse(time.RFC3339, strings.TrimPrefix(rec["rule"].(string), tc.rule))
				require.NoError(t, err, "the rule says when it was made")
				require.EqualValues(t, 0, rec["reviewMs"], "nobody was waited for")
			}
			want := 3
			if tc.decision == runwire.DecisionReject {
				want = 0
				// The model is told each later call was refused, by the rule.
				last := m.seen[3][len(m.seen[3])-1].(map[string]any)
				require.Equal(t, "tool", last["role"])
				require.Contains(t, last["content"], "a person refused every call of ingest in this run (rejected by rule of ana at ")
			}
			require.Equal(t, want, h.tools.count("ingest"))
		})
	}
	t.Run("before ChangeToolRules", func(t *testing.T) {
		h := newHarness(t)
		h.env.OnGetVersion(workflows.ChangeToolRules, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
		withModel(h, threeIngests())
		decide(t, h, time.Second, `{"id":"helper/a","decision":"approve","reviewer":"ana","scope":"run"}`, false)
		decide(t, h, time.Minute, `{"id":"helper/b","decision":"approve","reviewer":"bo"}`, false)
		decide(t, h, time.Hour, `{"id":"helper/c","decision":"approve","reviewer":"bo"}`, false)
		res, err := h.run(t, ruleFlow, nil)
		require.NoError(t, err)
		require.Equal(t, []string{"helper/a", "helper/b", "helper/c"}, requested(t, h), "each call waited")
		for _, c := range agentOutput(t, res)["toolCalls"].([]any)[1:] {
			require.Equal(t, "bo", c.(map[string]any)["reviewer"])
			require.Nil(t, c.(map[string]any)["rule"])
		}
	})
}

// TestToolRuleDecidesPendingCalls: parallel calls of the same tool wait together; an always on
// one decides the others of that tool too, by the rule (issue 44, item 5).
func TestToolRuleDecidesPendingCalls(t *testing.T) {
	h := newHarness(t)
	withModel(h, &scriptedModel{answers: []func(map[string]any) map[string]any{
		callTools([3]string{"a", "ingest", `{"text":"one","source":"1.md"}`}, [3]string{"b", "ingest", `{"text":"two","source":"2.md"}`}),
		say("filed"),
	}})
	decide(t, h, time.Second, `{"id":"helper/b","decision":"approve","reviewer":"ana","scope":"run"}`, false)
	res, err := h.run(t, ruleFlow, nil)
	require.NoError(t, err)
	calls := agentOutput(t, res)["toolCalls"].([]any)
	require.Equal(t, "completed", calls[0].(map[string]any)["status"])
	require.Contains(t, calls[0].(map[string]any)["rule"], "approved by rule of ana at ")
	require.Nil(t, calls[1].(map[string]any)["rule"])
	require.Equal(t, 2, h.tools.count("ingest"))
}

// TestToolRuleScopeIsForToolCalls: a review step's gate refuses scope "run".
func TestToolRuleScopeIsForToolCalls(t *testing.T) {
	h := newHarness(t)
	decide(t, h, time.Second, `{"step":"check","decision":"approve","scope":"run"}`, true)
	decide(t, h, time.Minute, `{"step":"check","decision":"approve"}`, false)
	_, err := h.run(t, `{"name":"r","steps":[{"id":"check","tool":"review","inputs":{"title":"ok?","data":{"a":1}}}]}`, nil)
	require.NoError(t, err)
}
