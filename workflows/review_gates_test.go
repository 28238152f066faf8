package workflows_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"google.golang.org/protobuf/types/known/structpb"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows"
)

// updates sends review decisions as Updates and records what each answered.
type updates struct {
	t       *testing.T
	h       *harness
	refused map[string]string // decision -> the validator's message
}

func newUpdates(t *testing.T, h *harness) *updates {
	return &updates{t: t, h: h, refused: map[string]string{}}
}

// refuse sends d and fails the test when it is accepted; the refusal's message is kept.
func (u *updates) refuse(d string) {
	u.h.env.UpdateWorkflow(runwire.UpdateReview, fmt.Sprint("refuse", len(u.refused)), &testsuite.TestUpdateCallback{
		OnAccept:   func() { u.t.Errorf("update %.200s was accepted", d) },
		OnReject:   func(err error) { u.refused[d] = err.Error() },
		OnComplete: func(any, error) {},
	}, decision(u.t, d))
	if _, ok := u.refused[d]; !ok {
		u.refused[d] = "" // accepted (reported above)
	}
}

// accept sends d and fails the test when it is refused.
func (u *updates) accept(d string) {
	u.h.env.UpdateWorkflow(runwire.UpdateReview, "ok "+d[:min(len(d), 60)], &testsuite.TestUpdateCallback{
		OnAccept:   func() {},
		OnReject:   func(err error) { u.t.Errorf("update %.200s refused: %v", d, err) },
		OnComplete: func(any, error) {},
	}, decision(u.t, d))
}

func pendingState(t *testing.T, h *harness) *weftv1.ExecutionState {
	t.Helper()
	v, err := h.env.QueryWorkflow(runwire.QueryState)
	require.NoError(t, err)
	var state weftv1.ExecutionState
	require.NoError(t, v.Get(&state))
	return &state
}

func toValueJSON(s string) (*structpb.Value, error) {
	v := &structpb.Value{}
	return v, v.UnmarshalJSON([]byte(s))
}

func stepOutput(t *testing.T, res *weftv1.RunResult, id string) map[string]any {
	t.Helper()
	for _, s := range res.Steps {
		if s.Id == id {
			out, _ := s.Output.AsInterface().(map[string]any)
			return out
		}
	}
	t.Fatalf("no step %q in the result", id)
	return nil
}

// TestReviewDigestBindsTheDecision: a gate carries the digest of the data it shows; a decision
// naming another digest is refused (the data changed since it was shown), the right one passes,
// and the step's output records it.
func TestReviewDigestBindsTheDecision(t *testing.T) {
	h := newHarness(t)
	u := newUpdates(t, h)
	var state *weftv1.ExecutionState
	h.env.RegisterDelayedCallback(func() {
		state = pendingState(t, h)
		digest := state.PendingReviews[0].Digest
		u.refuse(`{"step":"approve_it","decision":"approve","digest":"` + strings.Repeat("0", 64) + `"}`)
		u.accept(`{"step":"approve_it","decision":"approve","reviewer":"ana","digest":"` + digest + `"}`)
	}, time.Hour)
	res, err := h.run(t, reviewFlow, nil)
	require.NoError(t, err)
	require.Len(t, state.PendingReviews, 1)
	gate := state.PendingReviews[0]
	require.Equal(t, workflows.DataDigest(gate.Data), gate.Digest)
	// sha256 of the canonical JSON of "proposal": printf '"proposal"' | sha256sum
	require.Equal(t, "705a654d181601b5a5069400774a16ef9c5b370347666be4bdeae44173217053", gate.Digest)
	for _, msg := range u.refused {
		require.Contains(t, msg, `the data of review "approve_it" changed since it was shown (digest 0000`)
		require.Contains(t, msg, "read the review again and decide on what it shows now")
	}
	out := stepOutput(t, res, "approve_it")
	require.Equal(t, gate.Digest, out["digest"])
	require.Equal(t, false, out["authenticated"])
}

// TestDataDigestIsCanonical: the digest does not depend on the order of an object's keys.
func TestDataDigestIsCanonical(t *testing.T) {
	a, err := toValueJSON(`{"b":1,"a":[true,"x"]}`)
	require.NoError(t, err)
	b, err := toValueJSON(`{"a":[true,"x"],"b":1.0}`)
	require.NoError(t, err)
	c, err := toValueJSON(`{"a":[true,"y"],"b":1}`)
	require.NoError(t, err)
	require.Equal(t, workflows.DataDigest(a), workflows.DataDigest(b))
	require.NotEqual(t, workflows.DataDigest(a), workflows.DataDigest(c))
	require.Len(t, workflows.DataDigest(nil), 64)
}

// TestReviewReviewers: a review that names its reviewers refuses an authenticated caller who is
// not one of them, with a message naming who may decide; a listed name, a listed role and admin
// pass; a decision nobody authenticated (the operator's CLI) passes with its reviewer as a label.
// The Signal path cannot refuse: it ignores the decision and the gate stays pending.
func TestReviewReviewers(t *testing.T) {
	const def = `{"name":"pay","steps":[
	  {"id":"pay","tool":"review","inputs":{"title":"Pay?","data":{"amount":120},"reviewers":["role:finance","ana"]}}
	],"output":"{{ pay.output }}"}`
	bo := `{"step":"pay","decision":"approve","reviewer":"bo","reviewerRoles":["reviewer"],"authenticated":true}`
	tests := []struct {
		name, ok      string
		authenticated bool
	}{
		{"listed name", `{"step":"pay","decision":"approve","reviewer":"ana","authenticated":true}`, true},
		{"listed role", `{"step":"pay","decision":"approve","reviewer":"cy","reviewerRoles":["reviewer","finance"],"authenticated":true}`, true},
		{"admin", `{"step":"pay","decision":"approve","reviewer":"root","reviewerRoles":["admin"],"authenticated":true}`, true},
		{"operator label", `{"step":"pay","decision":"approve","reviewer":"bo"}`, false},
	}
	for _, tt := range tests {
		for _, via := range []string{"update", "signal"} {
			t.Run(tt.name+" by "+via, func(t *testing.T) {
				h := newHarness(t)
				u := newUpdates(t, h)
				var state *weftv1.ExecutionState
				h.env.RegisterDelayedCallback(func() {
					if via == "update" {
						u.refuse(bo)
						u.refuse(`{"step":"pay","decision":"approve","reviewer":"ana2","authenticated":true}`)
						u.accept(tt.ok)
						return
					}
					h.env.SignalWorkflow(runwire.SignalReview, decision(t, bo)) // ignored
				}, time.Hour)
				if via == "signal" {
					h.env.RegisterDelayedCallback(func() {
						state = pendingState(t, h)
						h.env.SignalWorkflow(runwire.SignalReview, decision(t, tt.ok))
					}, 2*time.Hour)
				}
				res, err := h.run(t, def, nil)
				require.NoError(t, err)
				if via == "update" {
					require.Len(t, u.refused, 2)
					require.Contains(t, u.refused[bo], `review "pay" may be decided only by ana or anyone with the role finance (or an admin); "bo" (roles: reviewer) may not`)
				} else {
					require.Len(t, state.PendingReviews, 1, "the refused signal left the gate pending")
					require.Equal(t, []string{"role:finance", "ana"}, state.PendingReviews[0].Reviewers)
				}
				out := stepOutput(t, res, "pay")
				var want map[string]any
				require.NoError(t, json.Unmarshal([]byte(tt.ok), &want))
				require.Equal(t, want["reviewer"], out["reviewer"])
				require.Equal(t, tt.authenticated, out["authenticated"])
			})
		}
	}
}

// TestToolCallGateHasDigest: an agent's tool-call gate carries the digest of its arguments, and
// an approval bound to other arguments is refused.
func TestToolCallGateHasDigest(t *testing.T) {
	h := newHarness(t)
	withModel(h, &scriptedModel{answers: []func(map[string]any) map[string]any{
		callTools([3]string{"a", "ingest", `{"text":"one","source":"1.md"}`}), say("done"),
	}})
	u := newUpdates(t, h)
	var state *weftv1.ExecutionState
	h.env.RegisterDelayedCallback(func() {
		state = pendingState(t, h)
		other, err := toValueJSON(`{"text":"two","source":"1.md"}`)
		require.NoError(t, err)
		u.refuse(`{"id":"helper/a","decision":"approve","digest":"` + workflows.DataDigest(other) + `"}`)
		u.accept(`{"id":"helper/a","decision":"approve","digest":"` + state.PendingReviews[0].Digest + `"}`)
	}, time.Second)
	_, err := h.run(t, agentFlow, nil)
	require.NoError(t, err)
	require.Len(t, state.PendingReviews, 1)
	args, err := toValueJSON(`{"source":"1.md","text":"one"}`)
	require.NoError(t, err)
	require.Equal(t, workflows.DataDigest(args), state.PendingReviews[0].Digest)
	require.Len(t, u.refused, 1)
	require.Equal(t, 1, h.tools.count("ingest"))
}

// TestReviewEditTooLarge: an edit over MaxEditBytes is refused by the validator with its size,
// the limit and what to do, before it reaches history; the review is still pending after it.
func TestReviewEditTooLarge(t *testing.T) {
	h := newHarness(t)
	u := newUpdates(t, h)
	big := `{"step":"approve_it","decision":"edit","data":"` + strings.Repeat("x", 2500<<10) + `"}`
	h.env.RegisterDelayedCallback(func() {
		u.refuse(big)
		u.accept(`{"step":"approve_it","decision":"edit","data":"short"}`)
	}, time.Hour)
	res, err := h.run(t, reviewFlow, nil)
	require.NoError(t, err)
	require.Equal(t, `"edit: short"`, outputJSON(t, res.Output))
	msg := u.refused[big]
	require.Contains(t, msg, `edited data for "approve_it" is too large: 2.4 MB of JSON, more than a review edit may carry (1.0 MB)`)
	require.Contains(t, msg, "send a shorter edit")
}

// TestForEachReviewKeepsEveryDecision: each item's decision (approve, edit with data, reject
// with comment) is that item's output; the step completes when every item is decided, with or
// without continueOnError. With rejectFails the first reject fails the step, and its output
// still lists the decisions made and the items left undecided.
func TestForEachReviewKeepsEveryDecision(t *testing.T) {
	const def = `{"name":"fe","steps":[
	  {"id":"ok","tool":"review","forEach":"{{ ['a','b','c'] }}",ONERROR"inputs":{"title":"Approve {{ item }}?","data":"{{ item }}"REJECTFAILS}},
	  {"id":"after","tool":"template","inputs":{"text":"{{ ok.output.results[0].decision }},{{ ok.output.results[1].decision }},{{ ok.output.results[2].decision }}"}}
	],"output":"{{ after.output.text }}"}`
	type item struct{ decision, data, comment string }
	tests := []struct {
		name            string
		continueOnError bool
		rejectFails     bool
		err             string
		items           []item
	}{
		{"default", false, false, "", []item{{"reject", "a", "not a"}, {"edit", "B", ""}, {"approve", "c", ""}}},
		{"continueOnError", true, false, "", []item{{"reject", "a", "not a"}, {"edit", "B", ""}, {"approve", "c", ""}}},
		{"rejectFails", false, true, `step "ok": item 0 rejected by cy: not a`, nil},
		{"rejectFails, continueOnError", true, true, "", []item{{"reject", "a", "not a"}, {"edit", "B", ""}, {"undecided", "", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := def
			d = strings.Replace(d, "ONERROR", map[bool]string{true: `"continueOnError":true,`}[tt.continueOnError], 1)
			d = strings.Replace(d, "REJECTFAILS", map[bool]string{true: `,"rejectFails":true`}[tt.rejectFails], 1)
			h := newHarness(t)
			u := newUpdates(t, h)
			h.env.RegisterDelayedCallback(func() {
				u.accept(`{"id":"ok[1]","decision":"edit","data":"B","reviewer":"ana"}`)
				u.accept(`{"id":"ok[0]","decision":"reject","reviewer":"cy","comment":"not a"}`)
			}, time.Hour)
			h.env.RegisterDelayedCallback(func() {
				if st := pendingState(t, h); len(st.PendingReviews) > 0 {
					u.accept(`{"id":"ok[2]","decision":"approve","reviewer":"ana"}`)
				}
			}, 2*time.Hour)
			res, err := h.run(t, d, nil)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			var want []string
			for _, it := range tt.items {
				want = append(want, it.decision)
			}
			out := stepOutput(t, res, "ok")
			require.NotNil(t, out, "the step's output holds the decisions")
			results, _ := out["results"].([]any)
			require.Len(t, results, len(tt.items))
			for i, it := range tt.items {
				r := results[i].(map[string]any)
				require.Equal(t, it.decision, r["decision"], "item %d", i)
				if it.data != "" {
					require.Equal(t, it.data, r["data"], "item %d", i)
				}
				if it.comment != "" {
					require.Equal(t, it.comment, r["comment"], "item %d", i)
				}
			}
			require.Equal(t, `"`+strings.Join(want, ",")+`"`, outputJSON(t, res.Output), "a later step reads every decision")
			if tt.rejectFails {
				require.Equal(t, "failed", statuses(res)["ok"])
			} else {
				require.Equal(t, "completed", statuses(res)["ok"])
			}
		})
	}
}

// TestReviewUpdateAnswerIsPlainJSON: the review Update's answer is json/plain, so the temporal
// CLI (which decodes an Update's result into an interface) can print it: a protobuf answer made
// `temporal workflow update execute --name review` exit 1 with "must be a concrete type" although
// the decision was applied. The weft client still decodes it into a ReviewDecision.
func TestReviewUpdateAnswerIsPlainJSON(t *testing.T) {
	h := newHarness(t)
	var answer any
	h.env.RegisterDelayedCallback(func() {
		h.env.UpdateWorkflow(runwire.UpdateReview, "ok", &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(err error) { t.Errorf("refused: %v", err) },
			OnComplete: func(v any, err error) {
				require.NoError(t, err)
				answer = v
			},
		}, decision(t, `{"step":"approve_it","decision":"reject","comment":"not yet","reviewer":"ana"}`))
	}, time.Hour)
	_, err := h.run(t, reviewFlow, nil)
	require.ErrorContains(t, err, "rejected by ana: not yet")
	require.NotNil(t, answer)
	p, err := converter.GetDefaultDataConverter().ToPayload(answer)
	require.NoError(t, err)
	require.Equal(t, "json/plain", string(p.Metadata["encoding"]))
	var asCLI any
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(p, &asCLI), "the temporal CLI decodes into an interface")
	require.Equal(t, map[string]any{"id": "approve_it", "step": "approve_it", "decision": "reject", "reviewer": "ana", "comment": "not yet"}, asCLI)
	var asClient weftv1.ReviewDecision
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(p, &asClient), "the weft client decodes into a ReviewDecision")
	require.Equal(t, "approve_it", asClient.Id)
	require.Equal(t, "reject", asClient.Decision)
	require.Equal(t, "ana", asClient.Reviewer)
}
