package console

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/events"
)

// TestStreamedTextsFollowDeltas: a run page's streaming text comes from the llm_delta events
// (no read of the run): pieces add up at their offsets, a new attempt starts over, a missed
// piece or any other event asks for a read, and finished calls and ended steps leave the text.
func TestStreamedTextsFollowDeltas(t *testing.T) {
	delta := func(act, step string, offset int, text string) events.Event {
		return events.Event{Type: events.LLMDelta, Activity: act, Step: step, Offset: offset, Text: text}
	}
	shown := &Snapshot{Status: "running", State: []byte(`{"steps":[]}`), Streaming: map[string]string{"other": "kept"}}
	for _, tc := range []struct {
		name   string
		events []events.Event
		placed []bool
		want   map[string]string
	}{
		{"pieces add up", []events.Event{delta("a#1", "answer", 0, "Retries "), delta("a#1", "answer", 8, "back off")},
			[]bool{true, true}, map[string]string{"other": "kept", "answer": "Retries back off"}},
		{"a new attempt starts over", []events.Event{delta("a#1", "answer", 0, "Retries "), delta("a#1", "answer", 0, "Retry")},
			[]bool{true, true}, map[string]string{"other": "kept", "answer": "Retry"}},
		{"a missed piece asks for a read", []events.Event{delta("a#1", "answer", 4, "more")},
			[]bool{false}, map[string]string{"other": "kept"}},
		{"other events ask for a read", []events.Event{{Type: events.StepStarted, Step: "answer"}},
			[]bool{false}, map[string]string{"other": "kept"}},
		{"a finished call leaves", []events.Event{delta("a#1", "answer", 0, "done"), {Type: events.LLMFinished, Activity: "a#1", Step: "answer"}},
			[]bool{true, false}, map[string]string{"other": "kept"}},
		{"an ended step's calls leave", []events.Event{delta("a[0]#1", "each", 0, "x"), delta("a[1]#1", "each", 0, "y"), {Type: events.StepCancelled, Step: "each"}},
			[]bool{true, true, false}, map[string]string{"other": "kept"}},
		{"text read further on is kept", []events.Event{delta("o#1", "other", 0, "ke")},
			[]bool{true}, map[string]string{"other": "kept"}},
		{"text that starts over replaces it", []events.Event{delta("o#1", "other", 0, "new")},
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

// TestStreamedTextsStartOverOnANewAttempt: a model call's text that starts over (a worker died
// mid-answer and the call runs again: a new attempt at offset 0) replaces what the page shows,
// even when the text shown is further on (the dead worker's), and the snapshot says which attempt
// it is; a first attempt is not marked.
func TestStreamedTextsStartOverOnANewAttempt(t *testing.T) {
	delta := func(attempt int32, offset int, text string) events.Event {
		return events.Event{Type: events.LLMDelta, Activity: "a#1", Step: "answer", Attempt: attempt, Offset: offset, Text: text}
	}
	for _, tc := range []struct {
		name        string
		shown       *Snapshot
		events      []events.Event
		want        string
		wantAttempt map[string]int32
	}{
		{"the first attempt", &Snapshot{}, []events.Event{delta(1, 0, "Retries "), delta(1, 8, "back")}, "Retries back", nil},
		{"a new attempt replaces it", &Snapshot{}, []events.Event{delta(1, 0, "Retries back"), delta(2, 0, "Retries")},
			"Retries", map[string]int32{"answer": 2}},
		{"and goes on", &Snapshot{}, []events.Event{delta(1, 0, "Retries back"), delta(2, 0, "Retries"), delta(2, 7, " back off.")},
			"Retries back off.", map[string]int32{"answer": 2}},
		{"over the dead worker's text read with the snapshot", &Snapshot{Streaming: map[string]string{"answer": "Retries back"}},
			[]events.Event{delta(2, 0, "Retries")}, "Retries", map[string]int32{"answer": 2}},
		{"a snapshot of the new attempt further on is kept", &Snapshot{Streaming: map[string]string{"answer": "Retries back"}, StreamingAttempt: map[string]int32{"answer": 2}},
			[]events.Event{delta(2, 0, "Retries")}, "Retries back", map[string]int32{"answer": 2}},
		{"a piece of a new attempt not from its start asks for a read", &Snapshot{}, []events.Event{delta(1, 0, "Retries back"), delta(2, 7, " back")},
			"Retries back", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			texts := streamedTexts{}
			for _, e := range tc.events {
				texts.add(e)
			}
			got := texts.into(tc.shown)
			require.Equal(t, tc.want, got.Streaming["answer"])
			require.Equal(t, tc.wantAttempt, got.StreamingAttempt)
		})
	}
}
