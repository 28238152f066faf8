package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/events"
	"github.com/weftworks/weft/internal/testkit/fakellm"
	"github.com/weftworks/weft/workflows/dsl"
)

// TestStreamAfterARepair: an llm step whose first answer does not satisfy its responseFormat
// is asked again (a repair, inside the one activity): Stream's events come in order (numbered
// 1..N, the model call's start before its text, its text before its end, the step's end after),
// the repaired answer's text is a new attempt starting at offset 0 (never appended to the
// rejected one), each attempt's deltas are contiguous, and the last attempt adds up to the
// answer, last piece included.
func TestStreamAfterARepair(t *testing.T) {
	queue := "stream-repair"
	bad := "Sure! Here is a good title for the page about retries and backoff, as you asked."
	good := `{"title": "Retries back off"}`
	fake := fakellm.New(
		fakellm.Reply{Text: bad, ChunkDelay: 60 * time.Millisecond},
		fakellm.Reply{Text: good, ChunkDelay: 60 * time.Millisecond},
	)
	defer fake.Close()
	startWorkerWithConfig(t, queue, activities.Config{OpenAIBaseURL: fake.BaseURL, ChatModel: "m"}, nil)
	wc := weftclient.New(dial(t), queue)
	w, err := dsl.Load("repair.json", []byte(`{"name":"repair","steps":[
	  {"id":"draft","tool":"llm","inputs":{"prompt":"a title for the page, please","responseFormat":
	    {"type":"object","properties":{"title":{"type":"string"}},"required":["title"],"additionalProperties":false}}}],
	  "output":"{{ draft.output.json.title }}"}`))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := wc.Start(ctx, w, weftclient.StartOptions{Source: "repair"})
	require.NoError(t, err)
	var evs []events.Event
	_, err = wc.Stream(ctx, run.ID, weftclient.StreamOptions{DeltaInterval: 20 * time.Millisecond}, func(e events.Event) { evs = append(evs, e) })
	require.NoError(t, err)
	require.Len(t, fake.Requests(), 2, "the first answer was repaired")

	var order []string
	seq := int64(0)
	texts := map[int32]string{} // by attempt
	var attempts []int32
	for _, e := range evs {
		if e.Seq > 0 {
			seq++
			require.Equal(t, seq, e.Seq, "events are numbered without gaps or repeats: %s", e.Type)
		}
		switch e.Type {
		case events.LLMStarted, events.LLMFinished, events.StepCompleted, events.RunCompleted:
			order = append(order, e.Type)
		case events.LLMDelta:
			if len(order) == 0 || order[len(order)-1] != "text" {
				order = append(order, "text")
			}
			if len(attempts) == 0 || attempts[len(attempts)-1] != e.Attempt {
				require.True(t, len(attempts) == 0 || e.Attempt > attempts[len(attempts)-1], "attempts only go up: %d after %v", e.Attempt, attempts)
				attempts = append(attempts, e.Attempt)
			}
			require.Equal(t, len(texts[e.Attempt]), e.Offset, "attempt %d's text goes on where it was: %q at %d", e.Attempt, e.Text, e.Offset)
			texts[e.Attempt] += e.Text
		}
	}
	require.Equal(t, []string{events.LLMStarted, "text", events.LLMFinished, events.StepCompleted, events.RunCompleted}, order)
	require.GreaterOrEqual(t, len(attempts), 2, "the rejected answer streamed, then the repaired one as a new attempt: %v", texts)
	first, last := attempts[0], attempts[len(attempts)-1]
	require.True(t, strings.HasPrefix(bad, texts[first]), "the first attempt is the rejected answer: %q", texts[first])
	require.Equal(t, good, texts[last], "the repaired answer, whole and alone (not appended to the rejected one)")
	for _, a := range attempts[1:] {
		require.NotContains(t, texts[a], "Sure!", "attempt %d starts over", a)
	}
	t.Logf("attempts %v: first %q, last %q", attempts, texts[first], texts[last])
}
