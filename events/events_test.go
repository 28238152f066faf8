package events_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/weftworks/weft/events"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
)

// TestEventJSON: an event's JSON carries its proto parts as proto JSON and reads back the same,
// whichever side (the run's query, a follower's JSONL) wrote it; a typed nil part is left out.
func TestEventJSON(t *testing.T) {
	item := 2
	for _, tc := range []struct {
		name string
		e    events.Event
		has  []string
		not  []string
	}{
		{"step", events.Event{Type: events.StepCompleted, Seq: 7, Time: time.Unix(10, 0).UTC(), Step: "a",
			StepState: &weftv1.StepState{Id: "a", Status: "completed"}, Usage: &weftv1.TokenUsage{TotalTokens: 5}},
			[]string{`"event":"step_completed"`, `"seq":7`, `"state":{"id":"a","status":"completed"}`, `"usage":{"totalTokens":`}, []string{`"review"`, `"result"`}},
		{"item", events.Event{Type: events.ItemFailed, Seq: 3, Step: "each", Key: "each[2]", Item: &item, Error: "boom", ErrorKind: "failed"},
			[]string{`"item":2`, `"errorKind":"failed"`}, []string{`"state"`}},
		{"delta", events.Event{Type: events.LLMDelta, Run: "r", After: 4, Activity: "say#1", Attempt: 1, Offset: 3, Text: "lo"},
			[]string{`"after":4`, `"offset":3`, `"run":"r"`}, []string{`"seq"`}},
		{"typed nil", events.Event{Type: events.RunCompleted, Seq: 9, Result: (*weftv1.RunResult)(nil)},
			nil, []string{`"result"`}},
		{"result", events.Event{Type: events.RunCompleted, Seq: 9, Status: "completed", Result: &weftv1.RunResult{Workflow: "w"}},
			[]string{`"result":{"workflow":"w"}`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.e)
			require.NoError(t, err)
			for _, s := range tc.has {
				require.Contains(t, string(b), s)
			}
			for _, s := range tc.not {
				require.NotContains(t, string(b), s)
			}
			var back events.Event
			require.NoError(t, json.Unmarshal(b, &back))
			require.Equal(t, tc.e.Seq, back.Seq)
			require.Equal(t, tc.e.Item, back.Item)
			require.True(t, tc.e.Time.Equal(back.Time))
			for _, p := range [][2]proto.Message{{tc.e.StepState, back.StepState}, {tc.e.Usage, back.Usage}, {tc.e.Review, back.Review}} {
				if p[0] == nil || !p[0].ProtoReflect().IsValid() {
					continue
				}
				require.True(t, proto.Equal(p[0], p[1]), "%v read back as %v", p[0], p[1])
			}
			if tc.e.Result != nil && tc.e.Result.ProtoReflect().IsValid() {
				require.True(t, proto.Equal(tc.e.Result, back.Result))
			}
		})
	}
}
