package client

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/events"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// TestLLMText: only llm activities with text, named by weft, each with its step's key and id.
func TestLLMText(t *testing.T) {
	got := LLMText([]PendingActivity{
		{ActivityID: "answer#1", Type: "llm", Details: "Hel"},
		{ActivityID: "summarize[2]#4", Type: "llm", Details: "Short"},
		{ActivityID: "helper#2", Type: "llm"},                      // no text yet
		{ActivityID: "ingest#3", Type: "ingest", Details: "12"},    // not a model call
		{ActivityID: "7", Type: "llm", Details: "not weft's id"},   // an id weft did not choose
		{ActivityID: "agent/c1#5", Type: "llm", Details: "nested"}, // an agent's call
	})
	require.Equal(t, []StreamedText{
		{ActivityID: "answer#1", Key: "answer", Step: "answer", Text: "Hel"},
		{ActivityID: "summarize[2]#4", Key: "summarize[2]", Step: "summarize", Text: "Short"},
		{ActivityID: "agent/c1#5", Key: "agent/c1", Step: "agent", Text: "nested"},
	}, got)
}

// TestTextFollower: each read gives what every activity added since the last; a retry that
// starts over gives its whole text again, marked Restarted; nothing new gives nothing.
func TestTextFollower(t *testing.T) {
	text := func(id, s string) StreamedText { return StreamedText{ActivityID: id, Key: id, Step: id, Text: s} }
	news := func(ds []TextDelta) []string {
		out := []string{}
		for _, d := range ds {
			s := d.ActivityID + ":" + d.New
			if d.Restarted {
				s += " (restarted)"
			}
			out = append(out, s)
		}
		return out
	}
	var f TextFollower
	for _, tc := range []struct {
		read []StreamedText
		want []string
	}{
		{[]StreamedText{text("a", "Hel")}, []string{"a:Hel"}},
		{[]StreamedText{text("a", "Hello"), text("b", "Other")}, []string{"a:lo", "b:Other"}},
		{[]StreamedText{text("a", "Hello"), text("b", "Other")}, []string{}},
		{[]StreamedText{text("a", "Hi again")}, []string{"a:Hi again (restarted)"}},
		{[]StreamedText{text("a", "Hi again!")}, []string{"a:!"}},
		{nil, []string{}},
	} {
		require.Equal(t, tc.want, news(f.Next(tc.read)), "read %v", tc.read)
	}
}

// TestEventsComeInTheOrderThingsHappen: from one state read that finds two finished steps and a
// third waiting for review, the steps' events come before the review's, and a step's review is
// requested after it started and decided before it completed.
func TestEventsComeInTheOrderThingsHappen(t *testing.T) {
	var got []string
	tr := &tracker{id: "r", fn: func(e events.Event) { got = append(got, string(e.Type)+" "+e.Step) },
		steps: map[string]string{}, reviews: map[string]*weftv1.ReviewRequest{}, calls: map[string]string{}}
	review := &weftv1.ReviewRequest{Id: "approval", Step: "approval"}
	tr.state(&weftv1.ExecutionState{
		Steps: []*weftv1.StepState{
			{Id: "bullets", Status: runwire.StatusCompleted},
			{Id: "draft", Status: runwire.StatusCompleted},
			{Id: "approval", Status: runwire.StatusAwaitingReview},
		},
		PendingReviews: []*weftv1.ReviewRequest{review},
	})
	tr.state(&weftv1.ExecutionState{
		Steps: []*weftv1.StepState{
			{Id: "bullets", Status: runwire.StatusCompleted},
			{Id: "draft", Status: runwire.StatusCompleted},
			{Id: "approval", Status: runwire.StatusCompleted},
		},
	})
	require.Equal(t, []string{
		"step_started bullets", "step_completed bullets",
		"step_started draft", "step_completed draft",
		"step_started approval", "review_requested approval",
		"review_decided approval", "step_completed approval",
	}, got)
}

// TestTextFollowerAttempts: a retry (a new Temporal attempt) whose heartbeat still holds the
// failed attempt's text shows nothing until it writes its own, which starts attempt 2 at offset 0;
// a repair (text that does not extend what was read) starts attempt 3; Final delivers the last
// piece of the current attempt, or the whole text as a new attempt when it does not extend it.
func TestTextFollowerAttempts(t *testing.T) {
	text := func(s string, attempt int32) StreamedText {
		return StreamedText{ActivityID: "a#1", Key: "a", Step: "a", Text: s, TemporalAttempt: attempt}
	}
	type got struct {
		New     string
		Attempt int32
		Offset  int
	}
	read := func(ds []TextDelta) []got {
		out := []got{}
		for _, d := range ds {
			out = append(out, got{d.New, d.Attempt, d.Offset})
		}
		return out
	}
	var f TextFollower
	for _, tc := range []struct {
		read StreamedText
		want []got
	}{
		{text("Sure", 1), []got{{"Sure", 1, 0}}},
		{text("Sure! {", 1), []got{{"! {", 1, 4}}},
		{text("Sure! {", 2), []got{}},                   // the retry's first read: the old text
		{text("{\"ti", 2), []got{{"{\"ti", 2, 0}}},      // its own text
		{text("{\"title\"", 2), []got{{"tle\"", 2, 4}}}, // goes on
		{text("Oops", 2), []got{{"Oops", 3, 0}}},        // a repair
	} {
		require.Equal(t, tc.want, read(f.Next([]StreamedText{tc.read})), "read %q (attempt %d)", tc.read.Text, tc.read.TemporalAttempt)
	}
	require.Equal(t, []got{{", fixed", 3, 4}}, read(f.Final("a#1", "Oops, fixed")))
	require.Equal(t, []got{{"{}", 4, 0}}, read(f.Final("a#1", "{}")))
	var fresh TextFollower
	require.Equal(t, []got{{"all of it", 1, 0}}, read(fresh.Final("b#1", "all of it")), "a call never read gives its whole text")
}

// TestDeltaEventsSayRestarted: the llm_delta events a Go consumer gets carry the text attempt
// and, on the first delta of an attempt after the first (a worker died mid-answer and Temporal
// retried the call; a repair), Restarted: what was shown of the call is to be discarded, and the
// texts kept by attempt add up to the answer once. Both ways Stream reads text (from the state,
// and from the run's events with the final text) say so.
func TestDeltaEventsSayRestarted(t *testing.T) {
	type got struct {
		Text      string
		Attempt   int32
		Offset    int
		Restarted bool
	}
	var evs []got
	fn := func(e events.Event) {
		require.Equal(t, events.LLMDelta, e.Type)
		evs = append(evs, got{e.Text, e.Attempt, e.Offset, e.Restarted})
	}
	pending := func(text string, attempt int32) []PendingActivity {
		return []PendingActivity{{ActivityID: "answer#1", Type: llmActivity, Attempt: attempt, Details: text}}
	}
	tr := &tracker{id: "r", fn: fn}
	tr.deltas(pending("Retries back", 1))
	tr.deltas(pending("Retries back", 2)) // the retry, before it heartbeats: the dead worker's text
	tr.deltas(pending("Retries", 2))
	tr.deltas(pending("Retries back off.", 2))
	want := []got{{"Retries back", 1, 0, false}, {"Retries", 2, 0, true}, {" back off.", 2, 7, false}}
	require.Equal(t, want, evs)

	evs = nil
	s := &streamer{id: "r", fn: fn, models: map[string]events.Event{}}
	s.follow.Next([]StreamedText{{ActivityID: "answer#1", Step: "answer", Text: "Retries back", TemporalAttempt: 1}})
	s.lastText(events.Event{Type: events.LLMFinished, Activity: "answer#1", Step: "answer", Text: "Backing off."})
	require.Equal(t, []got{{"Backing off.", 2, 0, true}}, evs, "a final text that does not extend what was read is a new attempt, restarted")

	texts := map[int32]string{}
	var last int32
	for _, e := range want {
		if e.Restarted {
			require.Greater(t, e.Attempt, last)
		}
		texts[e.Attempt] = texts[e.Attempt][:e.Offset] + e.Text
		last = max(last, e.Attempt)
	}
	require.Equal(t, "Retries back off.", texts[last], "the last attempt is the answer, once")
}
