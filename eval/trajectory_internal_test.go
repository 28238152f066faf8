package eval

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/eval/report"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// execution is a closed run whose steps made these tool calls (tool names; "!" before one: a
// call a stop skipped).
func execution(steps map[string][]string, order ...string) *weftclient.Execution {
	st := &weftv1.ExecutionState{}
	for _, id := range order {
		s := &weftv1.StepState{Id: id, Status: runwire.StatusCompleted}
		for _, c := range steps[id] {
			call := &weftv1.ToolCall{Tool: strings.TrimPrefix(c, "!"), Status: runwire.StatusCompleted}
			if strings.HasPrefix(c, "!") {
				call.Status = runwire.StatusSkipped
			}
			s.ToolCalls = append(s.ToolCalls, call)
		}
		st.Steps = append(st.Steps, s)
	}
	return &weftclient.Execution{ID: "r", Status: weftclient.RunCompleted, Closed: true, State: st}
}

// TestGradeTrajectory: tools (the set called), toolOrder (a subsequence, or exact), maxToolCalls,
// on one step or the whole run in the steps' order; a call a stop skipped does not count.
func TestGradeTrajectory(t *testing.T) {
	e := execution(map[string][]string{
		"research": {"search", "search", "http", "!ingest"},
		"write":    {"ingest"},
	}, "research", "plain", "write")
	tests := []struct {
		name, expect string
		pass         bool
		detail       string
	}{
		{"the set of the run's tools", `{"tools":["http","ingest","search"]}`, true, ""},
		{"a tool not called", `{"tools":["search","rerank"],"step":"research"}`, false, "step research called http, search; not called: rerank; called too: http"},
		{"none called", `{"tools":[],"step":"plain"}`, true, ""},
		{"a skipped call is not a call", `{"tools":["http","search"],"step":"research"}`, true, ""},
		{"a subsequence", `{"toolOrder":["search","ingest"]}`, true, ""},
		{"out of order", `{"toolOrder":["http","search"]}`, false, "want in this order http → search; the run called search → search → http → ingest"},
		{"exact", `{"toolOrder":{"order":["search","search","http"],"exact":true},"step":"research"}`, true, ""},
		{"exact fails on a missing call", `{"toolOrder":{"order":["search","http"],"exact":true},"step":"research"}`, false, "want exactly search → http"},
		{"at most", `{"maxToolCalls":4}`, true, ""},
		{"too many", `{"maxToolCalls":2,"step":"research"}`, false, "step research made 3 tool calls, more than 2"},
		{"a step the run does not have", `{"maxToolCalls":2,"step":"nope"}`, false, `the run has no step "nope"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var x Expect
			require.NoError(t, json.Unmarshal([]byte(tc.expect), &x))
			require.NoError(t, x.check())
			grades := GradeTrajectory(x, e)
			require.Len(t, grades, 1)
			require.Equal(t, tc.pass, grades[0].Pass, grades[0].Detail)
			require.Contains(t, grades[0].Detail, tc.detail)
		})
	}
	require.Equal(t, "the run's state could not be read: no worker", GradeTrajectory(Expect{MaxToolCalls: new(int)}, &weftclient.Execution{StateErr: "no worker"})[0].Detail)
}

// TestReadDatasetReplayAndTrajectory: a replay case takes its name from its run and has no inputs
// of its own; the trajectory graders are checked before anything runs.
func TestReadDatasetReplayAndTrajectory(t *testing.T) {
	cases, err := ReadDataset(strings.NewReader(`{"replay":"run-7","expect":{"tools":["search"],"maxToolCalls":3}}`), "d.jsonl")
	require.NoError(t, err)
	require.Equal(t, "run-7", cases[0].Name)
	require.Equal(t, "run-7", cases[0].Replay)
	for _, tc := range []struct{ line, err string }{
		{`{"replay":"run-7","inputs":{"q":1}}`, `a replay case runs with the inputs of run run-7: remove "inputs"`},
		{`{"expect":{"step":"agent"}}`, "step: names the step whose tool calls"},
		{`{"expect":{"toolOrder":"search"}}`, "toolOrder: give a list of tools"},
		{`{"expect":{"maxToolCalls":-1}}`, "maxToolCalls -1: give 0 or more"},
	} {
		_, err := ReadDataset(strings.NewReader(tc.line), "d.jsonl")
		require.ErrorContains(t, err, tc.err, tc.line)
	}
}

// TestReplayReport: what a replay changed: the steps reused and run live, a model step whose
// answer (text, an agent's tools) changed, the calls answered from the record, and what went off
// it: a tool call the record lacks, a step the record had no output for that ran; and the steps
// taken from the record below a changed answer.
func TestReplayReport(t *testing.T) {
	val := func(v any) *structpb.Value {
		x, err := structpb.NewValue(v)
		require.NoError(t, err)
		return x
	}
	rec := &weftclient.Recording{ID: "run-1", State: &weftv1.ExecutionState{Steps: []*weftv1.StepState{
		{Id: "fetch", Status: "completed", Output: val("page")},
		{Id: "draft", Status: "completed", Output: val(map[string]any{"text": "Paris"})},
		{Id: "same", Status: "completed", Output: val(map[string]any{"text": "unchanged"})},
		{Id: "agent", Status: "completed", Output: val(map[string]any{"text": "a"}), ToolCalls: []*weftv1.ToolCall{{Tool: "search", Status: "completed"}}},
	}}}
	plan := &weftclient.ReplayPlan{From: "run-1", Model: "m2", Calls: 1, Steps: []weftclient.ReplayStep{
		{ID: "fetch"}, {ID: "draft", Live: true, Why: weftclient.ReplayModel}, {ID: "same", Live: true, Why: weftclient.ReplayModel},
		{ID: "agent", Live: true, Why: weftclient.ReplayModel}, {ID: "later", Live: true, Why: weftclient.ReplayUnrecorded},
		{ID: "post", Above: []string{"draft", "same"}}, {ID: "calm", Above: []string{"same"}}}}
	drift := runwire.ToolDrift + ": run run-1 made no call of http with these arguments"
	e := &weftclient.Execution{Closed: true, State: &weftv1.ExecutionState{Steps: []*weftv1.StepState{
		{Id: "fetch", Status: "completed", Output: val("page")},
		{Id: "draft", Status: "completed", Output: val(map[string]any{"text": "Lyon", "model": "m2"})},
		{Id: "same", Status: "completed", Output: val(map[string]any{"text": "unchanged", "model": "m2"})},
		{Id: "agent", Status: "completed", Output: val(map[string]any{"text": "a"}), ToolCalls: []*weftv1.ToolCall{
			{Tool: "search", Status: "completed"}, {Tool: "http", Status: "failed", Error: drift, Arguments: val(map[string]any{"url": "u"})}}},
		{Id: "later", Status: "completed"},
	}}}
	rep := replayReport(rec, plan, e)
	require.Equal(t, "run-1", rep.From)
	require.Equal(t, []string{"fetch", "post", "calm"}, rep.Reused)
	require.Equal(t, []report.Stale{{Step: "post", Changed: []string{"draft"}}}, rep.Stale, "below a changed answer, not below an unchanged one")
	require.Len(t, rep.Live, 4)
	require.Equal(t, 1, rep.RecordedCalls)
	require.Equal(t, 1, rep.FromRecord)
	require.Len(t, rep.Changed, 2, "the model's answer and the agent's tools changed; the unchanged step is not listed")
	require.Equal(t, "draft", rep.Changed[0].Step)
	require.Equal(t, "Paris", rep.Changed[0].Was)
	require.Equal(t, "Lyon", rep.Changed[0].Now)
	require.Equal(t, []string{"search"}, rep.Changed[1].WasTools)
	require.Equal(t, []string{"search", "http"}, rep.Changed[1].NowTools)
	require.Len(t, rep.Drift, 2)
	require.Equal(t, "http", rep.Drift[0].Tool)
	require.Equal(t, map[string]any{"url": "u"}, rep.Drift[0].Arguments)
	require.Equal(t, "later", rep.Drift[1].Step)
	require.Contains(t, rep.Drift[1].Why, "ran live")
}
