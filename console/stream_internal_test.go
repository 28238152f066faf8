package console

import (
	"testing"

	"github.com/stretchr/testify/require"

	weftclient "github.com/weftworks/weft/client"
)

// TestStreamedTextsFollowDeltas: a run page's streaming text comes from the llm_delta events
// (no read of the run): pieces add up at their offsets, a new attempt starts over, a missed
// piece or any other event asks for a read, and finished calls and ended steps leave the text.
func TestStreamedTextsFollowDeltas(t *testing.T) {
	delta := func(act, step string, offset int, text string) weftclient.Event {
		return weftclient.Event{Type: weftclient.EventLLMDelta, Activity: act, Step: step, Offset: offset, Text: text}
	}
	shown := &Snapshot{Status: "running", State: []byte(`{"steps":[]}`), Streaming: map[string]string{"other": "kept"}}
	for _, tc := range []struct {
		name   string
		events []weftclient.Event
		placed []bool
		want   map[string]string
	}{
		{"pieces add up", []weftclient.Event{delta("a#1", "answer", 0, "Retries "), delta("a#1", "answer", 8, "back off")},
			[]bool{true, true}, map[string]string{"other": "kept", "answer": "Retries back off"}},
		{"a new attempt starts over", []weftclient.Event{delta("a#1", "answer", 0, "Retries "), delta("a#1", "answer", 0, "Retry")},
			[]bool{true, true}, map[string]string{"other": "kept", "answer": "Retry"}},
		{"a missed piece asks for a read", []weftclient.Event{delta("a#1", "answer", 4, "more")},
			[]bool{false}, map[string]string{"other": "kept"}},
		{"other events ask for a read", []weftclient.Event{{Type: weftclient.EventStepStarted, Step: "answer"}},
			[]bool{false}, map[string]string{"other": "kept"}},
		{"a finished call leaves", []weftclient.Event{delta("a#1", "answer", 0, "done"), {Type: weftclient.EventLLMFinished, Activity: "a#1", Step: "answer"}},
			[]bool{true, false}, map[string]string{"other": "kept"}},
		{"an ended step's calls leave", []weftclient.Event{delta("a[0]#1", "each", 0, "x"), delta("a[1]#1", "each", 0, "y"), {Type: weftclient.EventStepCancelled, Step: "each"}},
			[]bool{true, true, false}, map[string]string{"other": "kept"}},
		{"text read further on is kept", []weftclient.Event{delta("o#1", "other", 0, "ke")},
			[]bool{true}, map[string]string{"other": "kept"}},
		{"text that starts over replaces it", []weftclient.Event{delta("o#1", "other", 0, "new")},
			[]bool{true}, map[string]string{"other": "new"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			texts := streamedTexts{}
			var placed []bool
			for _, e := range tc.events {
				placed = append(placed, texts.add(e))
			}
			require.Equal(t, tc.placed, placed)
			got := texts.into(shown)
			require.Equal(t, tc.want, got.Streaming)
			require.Equal(t, shown.State, got.State, "the state shown stays")
			require.Equal(t, map[string]string{"other": "kept"}, shown.Streaming, "the snapshot shown is not changed")
		})
	}
}
