package workflows_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/events"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows"
)

// events reads every event of the run in h with the events query, page by page from since.
func readEvents(t *testing.T, h *harness, since int64) *events.Page {
	t.Helper()
	v, err := h.env.QueryWorkflow(events.Query, since)
	require.NoError(t, err)
	var p events.Page
	require.NoError(t, v.Get(&p))
	return &p
}

// lines names each event "type key" (key: the step's key, or its step).
func lines(evs []events.Event) []string {
	out := []string{}
	for _, e := range evs {
		k := e.Key
		if k == "" {
			k = e.Step
		}
		out = append(out, e.Type+" "+k)
	}
	return out
}

// index is where line l is in ls (-1: absent).
func index(ls []string, l string) int {
	for i, s := range ls {
		if s == l {
			return i
		}
	}
	return -1
}

// requireWellFormed: numbered 1..N without gaps or repeats, in time order, run_started first and
// the run's end last.
func requireWellFormed(t *testing.T, evs []events.Event) {
	t.Helper()
	require.NotEmpty(t, evs)
	for i, e := range evs {
		require.Equal(t, int64(i+1), e.Seq, "event %d: %s", i, e.Type)
		require.False(t, e.Time.IsZero(), "event %d has its time", e.Seq)
		if i > 0 {
			require.False(t, e.Time.Before(evs[i-1].Time), "event %d is not earlier than the one before", e.Seq)
		}
	}
	require.Equal(t, events.RunStarted, evs[0].Type)
	last := evs[len(evs)-1].Type
	require.Contains(t, []string{events.RunCompleted, events.RunFailed}, last)
}

// before asserts that each pair of lines occurs, the first before the second.
func before(t *testing.T, ls []string, pairs ...[2]string) {
	t.Helper()
	for _, p := range pairs {
		a, b := index(ls, p[0]), index(ls, p[1])
		require.True(t, a >= 0, "%q is missing from %v", p[0], ls)
		require.True(t, b >= 0, "%q is missing from %v", p[1], ls)
		require.Less(t, a, b, "%q comes before %q in %v", p[0], p[1], ls)
	}
}

// TestEventsAreRecordedWhereThingsHappen: the run records its events in the order they happen,
// numbered without gaps, for parallel steps, a forEach with a failing item, a review, and an
// agent's model and tool calls.
func TestEventsAreRecordedWhereThingsHappen(t *testing.T) {
	for _, tc := range []struct {
		name    string
		flow    string
		setup   func(h *harness)
		failed  bool
		pairs   [][2]string
		present []string
	}{
		{
			name: "parallel steps",
			flow: `{"name":"p","steps":[
			  {"id":"a","tool":"search","inputs":{"query":"x","collection":"c"}},
			  {"id":"b","tool":"search","inputs":{"query":"y","collection":"c"}},
			  {"id":"both","tool":"merge","inputs":{"arrays":["{{ a.output.results }}","{{ b.output.results }}"]}}]}`,
			pairs: [][2]string{
				{"step_started a", "step_completed a"}, {"step_started b", "step_completed b"},
				{"step_completed a", "step_started both"}, {"step_completed b", "step_started both"},
				{"step_completed both", "run_completed "},
			},
		},
		{
			name: "forEach with a failing item",
			flow: `{"name":"f","inputs":{"xs":{"type":"array"}},"steps":[{"id":"each","tool":"embed","forEach":"{{ inputs.xs }}","batch":false,"concurrency":1,"inputs":{"text":"{{ item }}"}}]}`,
			setup: func(h *harness) {
				h.tools.scripts["embed"] = func(in map[string]any) (any, *toolspec.Usage, error) {
					if in["text"] == "bad" {
						return nil, nil, temporal.NewNonRetryableApplicationError("cannot embed bad", toolspec.ErrInvalidInput, nil)
					}
					return map[string]any{"dimensions": 3}, nil, nil
				}
			},
			failed: true,
			pairs: [][2]string{
				{"step_started each", "item_started each[0]"}, {"item_started each[0]", "item_completed each[0]"},
				{"item_completed each[0]", "item_started each[1]"}, {"item_started each[1]", "item_failed each[1]"},
				{"item_failed each[1]", "step_failed each"}, {"step_failed each", "run_failed "},
			},
		},
		{
			name: "batched forEach with a failing item",
			flow: `{"name":"f","inputs":{"xs":{"type":"array"}},"steps":[{"id":"each","tool":"embed","forEach":"{{ inputs.xs }}","inputs":{"text":"{{ item }}"}}]}`,
			setup: func(h *harness) {
				h.tools.scripts["embed"] = func(in map[string]any) (any, *toolspec.Usage, error) {
					if in["text"] == "bad" {
						return nil, nil, temporal.NewNonRetryableApplicationError("cannot embed bad", toolspec.ErrInvalidInput, nil)
					}
					return map[string]any{"dimensions": 3}, nil, nil
				}
			},
			failed: true,
			pairs: [][2]string{
				{"step_started each", "item_started each[0]"}, {"item_started each[2]", "item_completed each[0]"},
				{"item_started each[1]", "item_failed each[1]"}, {"item_completed each[0]", "item_failed each[1]"},
				{"item_failed each[1]", "item_completed each[2]"}, {"item_completed each[2]", "step_failed each"}, {"step_failed each", "run_failed "},
			},
		},
		{
			name: "review",
			flow: `{"name":"r","steps":[{"id":"draft","tool":"generate","inputs":{"prompt":"p"}},
			  {"id":"ok","tool":"review","inputs":{"title":"Publish?","data":"{{ draft.output.text }}"}}]}`,
			setup: func(h *harness) {
				h.env.RegisterDelayedCallback(func() {
					h.env.UpdateWorkflow(runwire.UpdateReview, "d", &testsuite.TestUpdateCallback{
						OnAccept: func() {}, OnReject: func(err error) { panic(err) }, OnComplete: func(any, error) {},
					}, decision(nil, `{"step":"ok","decision":"approve","reviewer":"ana"}`))
				}, time.Minute)
			},
			pairs: [][2]string{
				{"step_completed draft", "step_started ok"}, {"usage draft", "step_completed draft"},
				{"step_started ok", "review_requested ok"}, {"review_requested ok", "review_decided ok"},
				{"review_decided ok", "step_completed ok"},
			},
		},
		{
			name: "agent tool call",
			flow: agentFlow,
			setup: func(h *harness) {
				withModel(h, &scriptedModel{answers: []func(map[string]any) map[string]any{
					callTools([3]string{"c1", "search", `{"query":"limits"}`}), say("done"),
				}})
			},
			pairs: [][2]string{
				{"step_started helper", "iteration_started helper"}, {"iteration_started helper", "llm_started helper"},
				{"llm_started helper", "llm_finished helper"}, {"llm_finished helper", "tool_call_started helper/c1"},
				{"tool_call_started helper/c1", "tool_call_finished helper/c1"}, {"tool_call_finished helper/c1", "step_completed helper"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			if tc.setup != nil {
				tc.setup(h)
			}
			var inputs map[string]any
			if tc.failed {
				inputs = map[string]any{"xs": []any{"good", "bad", "never"}}
			}
			_, err := h.run(t, tc.flow, inputs)
			require.Equal(t, tc.failed, err != nil, "run error: %v", err)
			p := readEvents(t, h, 0)
			require.True(t, p.Ended)
			requireWellFormed(t, p.Events)
			ls := lines(p.Events)
			before(t, ls, tc.pairs...)
			// Every step that started ended, once.
			for _, e := range p.Events {
				if e.Type == events.StepStarted {
					n := 0
					for _, f := range p.Events {
						if f.Step == e.Step && (f.Type == events.StepCompleted || f.Type == events.StepFailed || f.Type == events.StepCancelled) {
							n++
						}
					}
					require.Equal(t, 1, n, "step %s ended once in %v", e.Step, ls)
				}
			}
		})
	}
}

// TestEventsAgentDetails: the agent's events carry what a client shows: the model call's final
// text and activity id, the tool call's record, the review's title and decision.
func TestEventsAgentDetails(t *testing.T) {
	h := newHarness(t)
	withModel(h, &scriptedModel{answers: []func(map[string]any) map[string]any{
		callTools([3]string{"c1", "ingest", `{"text":"one","source":"1.md"}`}), say("the answer"),
	}})
	h.env.RegisterDelayedCallback(func() {
		h.env.UpdateWorkflow(runwire.UpdateReview, "d", &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(err error) { t.Errorf("refused: %v", err) }, OnComplete: func(any, error) {},
		}, decision(t, `{"id":"helper/c1","decision":"approve","reviewer":"ana"}`))
	}, time.Minute)
	_, err := h.run(t, agentFlow, nil)
	require.NoError(t, err)
	p := readEvents(t, h, 0)
	requireWellFormed(t, p.Events)
	ls := lines(p.Events)
	before(t, ls, [2]string{"tool_call_started helper/c1", "review_requested helper/c1"},
		[2]string{"review_requested helper/c1", "review_decided helper/c1"},
		[2]string{"review_decided helper/c1", "tool_call_finished helper/c1"})
	var finals []string
	for _, e := range p.Events {
		switch e.Type {
		case events.LLMFinished:
			require.Equal(t, "helper", runwire.StepOfActivity(e.Activity))
			finals = append(finals, e.Text)
		case events.ReviewRequested:
			require.Equal(t, "ingest", e.Review.Tool)
			require.Contains(t, e.Review.Title, "ingest")
		case events.ReviewDecided:
			require.Equal(t, "approve", e.Decision)
			require.Equal(t, "ana", e.Reviewer)
		case events.ToolCallFinished:
			require.Equal(t, "completed", e.Call.Status)
			require.Equal(t, "ingest", e.Call.Tool)
		case events.RunCompleted:
			require.EqualValues(t, 3, e.Usage.Calls, "two model calls and one tool call")
		}
	}
	require.Equal(t, []string{"", "the answer"}, finals)
}

// TestEventsResumeFromAnySeq: a reader that reconnects after any event gets exactly the events
// after it, none missing, none twice; the JSON it reads decodes to the same events.
func TestEventsResumeFromAnySeq(t *testing.T) {
	h := newHarness(t)
	_, err := h.run(t, `{"name":"p","steps":[
	  {"id":"a","tool":"search","inputs":{"query":"x","collection":"c"}},
	  {"id":"b","tool":"search","inputs":{"query":"{{ a.output.query }}","collection":"c"}}]}`, nil)
	require.NoError(t, err)
	all := readEvents(t, h, 0).Events
	requireWellFormed(t, all)
	for cut := range all {
		var got []events.Event
		got = append(got, all[:cut]...)
		got = append(got, readEvents(t, h, int64(cut)).Events...)
		require.Equal(t, lines(all), lines(got), "reconnect after %d", cut)
	}
	b, err := json.Marshal(all)
	require.NoError(t, err)
	var back []events.Event
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, lines(all), lines(back))
	require.Equal(t, all[len(all)-2].StepState.Summary, back[len(back)-2].StepState.Summary)
}

// TestWaitEventsRefused: a run refuses every wait Update, before and after events exist (an older
// client then reads the events query; the refusal leaves nothing in history), and the run goes on.
func TestWaitEventsRefused(t *testing.T) {
	h := newHarness(t)
	var refused []string
	wait := func(id string, since int64) {
		h.env.UpdateWorkflow(workflows.UpdateWaitEvents, id, &testsuite.TestUpdateCallback{
			OnAccept: func() { t.Errorf("wait %s was accepted", id) },
			OnReject: func(err error) { refused = append(refused, id+": "+err.Error()) }, OnComplete: func(any, error) {},
		}, since)
	}
	h.env.RegisterDelayedCallback(func() {
		last := readEvents(t, h, 0).Last
		wait("newest", last)
		wait("behind", 1)
		wait("ahead", last+1000)
	}, time.Minute)
	h.env.RegisterDelayedCallback(func() {
		h.env.UpdateWorkflow(runwire.UpdateReview, "d", &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(err error) { t.Errorf("refused: %v", err) }, OnComplete: func(any, error) {},
		}, decision(t, `{"step":"ok","decision":"approve"}`))
	}, time.Hour)
	_, err := h.run(t, `{"name":"r","steps":[{"id":"ok","tool":"review","inputs":{"title":"Go?","data":"x"}}]}`, nil)
	require.NoError(t, err)
	require.Len(t, refused, 3)
	for _, r := range refused {
		require.Contains(t, r, "takes no waits")
	}
}

// TestEventsGuardrailsAndHandoffs: an agent's guardrail that trips and a handoff are events where
// they happen: the trip (its guardrail, stage and reason) after the answer it checked and before
// the step ends; the handoff (from, to, iteration) after the transfer call and before the next
// agent's model call.
func TestEventsGuardrailsAndHandoffs(t *testing.T) {
	t.Run("guardrail", func(t *testing.T) {
		h := newHarness(t)
		withModel(h, &scriptedModel{answers: []func(map[string]any) map[string]any{say(`{"answer": 7}`)}})
		def := strings.Replace(agentFlow, `"maxIterations":4`, `"maxIterations":4,"guardrails":{"output":[{"name":"shape","schema":{"type":"object","required":["answer"],"properties":{"answer":{"type":"string"}}}}],"onTrip":"return"}`, 1)
		_, err := h.run(t, def, nil)
		require.NoError(t, err)
		p := readEvents(t, h, 0)
		requireWellFormed(t, p.Events)
		ls := lines(p.Events)
		before(t, ls, [2]string{"llm_finished helper", "guardrail_tripped helper"}, [2]string{"guardrail_tripped helper", "step_completed helper"})
		e := p.Events[index(ls, "guardrail_tripped helper")]
		require.Equal(t, "shape", e.Guardrail)
		require.Equal(t, workflows.GuardrailOutput, e.Stage)
		require.Contains(t, e.Reason, "does not fit the schema")
	})
	t.Run("handoff", func(t *testing.T) {
		h := newHarness(t)
		withModel(h, &scriptedModel{answers: []func(map[string]any) map[string]any{
			callTools([3]string{"t1", "transfer_to_billing", `{}`}), say("Refunded."),
		}})
		def := `{"name":"a","defaults":{"collection":"docs"},"steps":[
  {"id":"triage","tool":"agent","inputs":{"prompt":"I want a refund","tools":["search"],"maxIterations":5,
    "handoffs":[{"name":"billing","description":"Questions about money.","agent":{"system":"You handle billing."}}]}}
],"output":"{{ triage.output }}"}`
		_, err := h.run(t, def, nil)
		require.NoError(t, err)
		p := readEvents(t, h, 0)
		requireWellFormed(t, p.Events)
		ls := lines(p.Events)
		before(t, ls, [2]string{"tool_call_finished triage/t1", "handoff triage"})
		at := index(ls, "handoff triage")
		require.Equal(t, "iteration_started triage", ls[at+1], "billing's iteration comes after the handoff: %v", ls)
		e := p.Events[at]
		require.Equal(t, "triage", e.From)
		require.Equal(t, "billing", e.To)
		require.EqualValues(t, 1, e.Iteration)
		n := 0
		for _, l := range ls {
			if l == "handoff triage" {
				n++
			}
		}
		require.Equal(t, 1, n, "one handoff: %v", ls)
	})
}

// TestItemFailedSaysItsKind: an item_failed event carries the kind of the item's error by its
// type (workflows.ErrorKind), so that a client tells an item cancelled in flight from one whose
// own error merely reads "cancelled".
func TestItemFailedSaysItsKind(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		kind string
	}{
		{"its own error reads cancelled", temporal.NewNonRetryableApplicationError("cancelled", toolspec.ErrInvalidInput, nil), workflows.ErrorKindFailed},
		{"a cancellation", temporal.NewCanceledError("cancelled"), workflows.ErrorKindCancelled},
		{"a cancellation an item's error wraps", fmt.Errorf("item 2: %w", temporal.NewCanceledError()), workflows.ErrorKindCancelled},
		{"a timeout", temporal.NewTimeoutError(enums.TIMEOUT_TYPE_START_TO_CLOSE, nil), workflows.ErrorKindTimedOut},
		{"a timeout whose cause is the last attempt's failure", temporal.NewTimeoutError(enums.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE, temporal.NewApplicationError("provider is down", "Unavailable")), workflows.ErrorKindTimedOut},
		{"an item's error wrapping such a timeout", fmt.Errorf("item 1: %w", temporal.NewTimeoutError(enums.TIMEOUT_TYPE_HEARTBEAT, temporal.NewApplicationError("cancelled", "Unavailable"))), workflows.ErrorKindTimedOut},
		{"any other error", errors.New("canceled"), workflows.ErrorKindFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.kind, workflows.ErrorKind(tc.err))
		})
	}
	t.Run("in the run's events", func(t *testing.T) {
		h := newHarness(t)
		h.tools.scripts["embed"] = func(in map[string]any) (any, *toolspec.Usage, error) {
			if in["text"] == "bad" {
				return nil, nil, temporal.NewNonRetryableApplicationError("cancelled", toolspec.ErrInvalidInput, nil)
			}
			return map[string]any{"dimensions": 3}, nil, nil
		}
		_, err := h.run(t, `{"name":"f","inputs":{"xs":{"type":"array"}},"steps":[{"id":"each","tool":"embed","forEach":"{{ inputs.xs }}","batch":false,"concurrency":1,"inputs":{"text":"{{ item }}"}}]}`,
			map[string]any{"xs": []any{"good", "bad"}})
		require.Error(t, err)
		var failed []events.Event
		for _, e := range readEvents(t, h, 0).Events {
			if e.Type == events.ItemFailed {
				failed = append(failed, e)
			}
		}
		require.Len(t, failed, 1)
		require.Equal(t, "cancelled", failed[0].Error, "the item's own text")
		require.Equal(t, workflows.ErrorKindFailed, failed[0].ErrorKind, "its kind: it failed")
		b, err := json.Marshal(failed[0])
		require.NoError(t, err)
		require.Contains(t, string(b), `"errorKind":"failed"`, "clients read it as errorKind")
	})
	t.Run("items in flight when one fails", func(t *testing.T) {
		// three items at once: the bad one fails while the other two are running (they wait until
		// the test ends), so the step cancels them and their events say cancelled
		h := newHarness(t)
		release := make(chan struct{})
		t.Cleanup(func() { close(release) })
		h.tools.scripts["embed"] = func(in map[string]any) (any, *toolspec.Usage, error) {
			if in["text"] == "bad" {
				return nil, nil, temporal.NewNonRetryableApplicationError("bad input", toolspec.ErrInvalidInput, nil)
			}
			<-release
			return map[string]any{"dimensions": 3}, nil, nil
		}
		_, err := h.run(t, `{"name":"f","inputs":{"xs":{"type":"array"}},"steps":[{"id":"each","tool":"embed","forEach":"{{ inputs.xs }}","batch":false,"concurrency":3,"inputs":{"text":"{{ item }}"}}]}`,
			map[string]any{"xs": []any{"good", "bad", "also good"}})
		require.Error(t, err)
		kinds := map[int]string{}
		for _, e := range readEvents(t, h, 0).Events {
			if e.Type == events.ItemFailed {
				kinds[*e.Item] = e.ErrorKind
			}
		}
		require.Equal(t, map[int]string{0: workflows.ErrorKindCancelled, 1: workflows.ErrorKindFailed, 2: workflows.ErrorKindCancelled}, kinds)
	})
}
