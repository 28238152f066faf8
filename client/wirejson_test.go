package client_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	weftclient "github.com/weftworks/weft/client"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
)

// TestProtoJSONWritesInt64sAsNumbers: the one encoding every surface writes has 64-bit integers
// as numbers, at any depth (steps, tool calls, usage, a map of messages), leaves a step output's
// own keys as they are (a string "19" under "durationMs" inside an output stays a string), and
// reads back into the same message.
func TestProtoJSONWritesInt64sAsNumbers(t *testing.T) {
	out, err := structpb.NewValue(map[string]any{"durationMs": "19", "totalTokens": "7"})
	require.NoError(t, err)
	st := &weftv1.ExecutionState{
		Workflow: "w",
		Steps: []*weftv1.StepState{{
			Id: "a", Status: "completed", Attempts: 2, DurationMs: 19, Output: out,
			Usage:     &weftv1.TokenUsage{TotalTokens: 1234, Calls: 3, CostUsd: 0.5},
			ToolCalls: []*weftv1.ToolCall{{Tool: "search", DurationMs: 5, ReviewMs: 6}},
		}},
	}
	for _, tc := range []struct {
		name string
		m    proto.Message
		want string
	}{
		{"state", st, `{"workflow":"w","steps":[{"id":"a","status":"completed","attempts":2,"durationMs":19,` +
			`"output":{"durationMs":"19","totalTokens":"7"},"usage":{"totalTokens":1234,"calls":3,"costUsd":0.5},` +
			`"toolCalls":[{"tool":"search","durationMs":5,"reviewMs":6}]}]}`},
		{"result", &weftv1.RunResult{DurationMs: 42}, `{"durationMs":42}`},
		{"recorded calls in a map", &weftv1.RunRequest{RecordedCalls: map[string]*weftv1.RecordedCalls{"a": {Calls: []*weftv1.ToolCall{{DurationMs: 8}}}}},
			`{"recordedCalls":{"a":{"calls":[{"durationMs":8}]}}}`},
		{"a well-known type as it is", out, `{"durationMs":"19","totalTokens":"7"}`},
		{"nil", (*weftv1.StepState)(nil), `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := weftclient.ProtoJSON(tc.m)
			require.NoError(t, err)
			require.JSONEq(t, tc.want, string(b))
			require.True(t, json.Valid(b))
			if tc.m.ProtoReflect().IsValid() {
				back := tc.m.ProtoReflect().New().Interface()
				require.NoError(t, protojson.Unmarshal(b, back))
				require.True(t, proto.Equal(tc.m, back), "%s reads back", b)
			}
		})
	}
}
