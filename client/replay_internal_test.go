package client

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/workflows/dsl"
)

const replayFlow = `{"name":"r","inputs":{"q":{"type":"string"}},"steps":[
  {"id":"fetch","tool":"http","inputs":{"url":"https://example.com/{{ inputs.q }}"}},
  {"id":"draft","tool":"llm","inputs":{"prompt":"Sum up {{ fetch.output }}"}},
  {"id":"shape","tool":"template","inputs":{"text":"{{ draft.output.text }}"}},
  {"id":"agent","tool":"agent","inputs":{"prompt":"{{ draft.output.text }}","tools":["search"]}},
  {"id":"later","tool":"http","inputs":{"url":"https://example.com/b"}},
  {"id":"post","tool":"http","inputs":{"url":"https://example.com/{{ shape.output.text }}"}}
],"output":"{{ agent.output.text }}"}`

// TestReplayPlan: a replay runs the model steps (with the model it is given) and the steps
// computed from their inputs, takes every other step's recorded output, runs one the record
// has no output for or whose definition changed, and carries each agent's recorded tool calls
// (the text the model read, skipped calls left out); a reused step names the model steps above it.
func TestReplayPlan(t *testing.T) {
	w, err := dsl.Load("r", []byte(replayFlow))
	require.NoError(t, err)
	val := func(v any) *structpb.Value {
		x, err := structpb.NewValue(v)
		require.NoError(t, err)
		return x
	}
	st := &weftv1.ExecutionState{Steps: []*weftv1.StepState{
		{Id: "fetch", Status: "completed", Output: val(map[string]any{"body": "page"})},
		{Id: "draft", Status: "completed", Output: val(map[string]any{"text": "old"})},
		{Id: "shape", Status: "completed", Output: val("old")},
		{Id: "agent", Status: "completed", Output: val(map[string]any{"text": "a", "toolCalls": []any{
			map[string]any{"tool": "search", "arguments": map[string]any{"query": "x"}, "result": `{"results":[]}`, "status": "completed"},
			map[string]any{"tool": "search", "arguments": map[string]any{"query": "y"}, "error": "boom", "status": "failed"},
			map[string]any{"tool": "search", "arguments": map[string]any{"query": "z"}, "status": "skipped", "error": "skipped"},
		}})},
		{Id: "later", Status: "skipped"},
		{Id: "post", Status: "completed", Output: val(map[string]any{"status": 200.0})},
	}}
	rec := &Recording{ID: "run-1", Workflow: w, State: st}
	changed, err := dsl.Load("r", []byte(`{"name":"r","inputs":{"q":{"type":"string"}},"steps":[
  {"id":"fetch","tool":"http","inputs":{"url":"https://example.com/other"}}],"output":"{{ fetch.output }}"}`))
	require.NoError(t, err)
	tests := []struct {
		name  string
		w     *dsl.Workflow
		steps []ReplayStep
		reuse []string
		calls int
	}{
		{"the recorded definition", w, []ReplayStep{{ID: "fetch"}, {ID: "draft", Live: true, Why: ReplayModel},
			{ID: "shape", Live: true, Why: ReplayComputed}, {ID: "agent", Live: true, Why: ReplayModel},
			{ID: "later", Live: true, Why: ReplayUnrecorded}, {ID: "post", Above: []string{"draft"}}}, []string{"fetch", "post"}, 2},
		{"a changed step runs", changed, []ReplayStep{{ID: "fetch", Live: true, Why: ReplayChanged}}, []string{}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan, reuse, calls := replayPlan(rec, tc.w)
			require.Equal(t, tc.steps, plan.Steps)
			require.Equal(t, tc.calls, plan.Calls)
			var reused []string
			for id := range reuse {
				reused = append(reused, id)
			}
			require.ElementsMatch(t, tc.reuse, reused)
			if tc.calls > 0 {
				require.Len(t, calls, 1, "the llm step carries no calls, the agent does")
				got := calls["agent"].GetCalls()
				require.Equal(t, "search", got[0].GetTool())
				require.Equal(t, `{"results":[]}`, got[0].GetResult().GetStringValue())
				require.Equal(t, "y", got[1].GetArguments().GetStructValue().AsMap()["query"])
				require.Equal(t, "boom", got[1].GetError())
			}
		})
	}
}

// TestReplayWithModel: --model sets the model of every llm and agent step, a loop's nested one
// too, and nothing else.
func TestReplayWithModel(t *testing.T) {
	w, err := dsl.Load("r", []byte(`{"name":"r","steps":[
  {"id":"a","tool":"llm","inputs":{"prompt":"p","model":"old"}},
  {"id":"b","tool":"agent","inputs":{"prompt":"p","tools":["search"]}},
  {"id":"c","tool":"loop","inputs":{"items":[1,2],"as":"n","step":{"tool":"llm","inputs":{"prompt":"{{ n }}"}}}},
  {"id":"d","tool":"template","inputs":{"text":"x"}}
],"output":"{{ a.output.text }}"}`))
	require.NoError(t, err)
	got, err := withModel(w, "new-model")
	require.NoError(t, err)
	models := map[string]any{}
	for _, s := range got.Def.Steps {
		models[s.ID] = s.Inputs["model"]
		if s.ID == "c" {
			models[s.ID] = s.Inputs["step"].(map[string]any)["inputs"].(map[string]any)["model"]
		}
	}
	require.Equal(t, map[string]any{"a": "new-model", "b": "new-model", "c": "new-model", "d": nil}, models)
}

// TestRecordedCallsFromTheState: an agent step whose output the state does not hold (too large)
// gives its calls from the state's tool calls; skipped ones are left out; a step the record has
// not is no call.
func TestRecordedCallsFromTheState(t *testing.T) {
	args, err := structpb.NewValue(map[string]any{"query": "x"})
	require.NoError(t, err)
	st := &weftv1.ExecutionState{Steps: []*weftv1.StepState{{Id: "agent", Status: "completed", OutputTruncated: true, ToolCalls: []*weftv1.ToolCall{
		{Tool: "search", Arguments: args, Result: structpb.NewStringValue("capped"), Status: "completed"},
		{Tool: "search", Status: "skipped", Error: "skipped"},
	}}}}
	got := recordedCalls(st, "agent").GetCalls()
	require.Len(t, got, 1)
	require.Equal(t, "capped", got[0].GetResult().GetStringValue())
	require.Equal(t, "x", got[0].GetArguments().GetStructValue().AsMap()["query"])
	require.Empty(t, recordedCalls(st, "other").GetCalls())
}
