package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/events"
)

// TestStreamFollowsAContinuedSession: client.Stream follows a chat session across its
// continue-as-new (two turns per run, three turns sent): every event of the first run once, in
// order (1..N, as that run's own events query has them), then continued_as_new naming the new
// run, then the new run's events from 1, none lost or repeated. A second Stream resumed in the
// first run (Since, SinceRun) after it continued gets the rest of it and then the new run's.
func TestStreamFollowsAContinuedSession(t *testing.T) {
	c := dial(t)
	queue := "stream-continued"
	startWorker(t, c, queue, map[string]activities.Handler{"llm": chatLLM, "search": fakeSearch})
	wc := weftclient.New(c, queue)
	id := "stream-continued-1"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, _, err := wc.StartChat(ctx, id, weftclient.ChatOptions{Tools: []string{"search"}, Collection: "docs", TurnsPerRun: 2})
	require.NoError(t, err)
	start, err := wc.Events(ctx, id, 0)
	require.NoError(t, err)
	firstRun := start.Run
	require.NotEmpty(t, firstRun, "the events query names the run that answered")

	all := &collector{}
	sctx, stop := context.WithCancel(ctx)
	followed := make(chan error, 1)
	go func() {
		_, err := wc.Stream(sctx, id, weftclient.StreamOptions{NoDeltas: true}, all.add)
		followed <- err
	}()
	for i := 1; i <= 3; i++ {
		turn, err := wc.Send(ctx, id, fmt.Sprintf("question %d", i), "")
		require.NoError(t, err, "turn %d", i)
		require.Equal(t, i, turn.N)
	}
	newPage, err := wc.Events(ctx, id, 0)
	require.NoError(t, err)
	require.NotEqual(t, firstRun, newPage.Run, "the third turn ran in the session's next run")
	require.NotEmpty(t, newPage.Events)
	oldPage, err := wc.EventsOf(ctx, id, firstRun, 0)
	require.NoError(t, err)
	require.NotEmpty(t, oldPage.Events)

	// what each run recorded, as Stream shows it
	lines := func(evs []events.Event) []string {
		out := []string{}
		for _, e := range evs {
			out = append(out, fmt.Sprintf("%d %s %s", e.Seq, e.Type, e.Key+"|"+e.Step))
		}
		return out
	}
	want := append(lines(oldPage.Events), "continued_as_new "+newPage.Run)
	want = append(want, lines(newPage.Events)...)
	got := func(c *collector) []string {
		c.mu.Lock()
		defer c.mu.Unlock()
		out := []string{}
		for _, e := range c.evs {
			switch {
			case e.Type == events.ContinuedAsNew:
				out = append(out, e.Type+" "+e.RunID)
			case e.Seq > 0:
				out = append(out, fmt.Sprintf("%d %s %s", e.Seq, e.Type, e.Key+"|"+e.Step))
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return len(got(all)) >= len(want) }, time.Minute, 20*time.Millisecond,
		"Stream delivers the new run's events: %v", got(all))
	stop()
	require.ErrorIs(t, <-followed, context.Canceled)
	require.Equal(t, want, got(all), "every event of both runs once, in order, the new run's numbered from 1")

	// resumed in the first run after it continued: its rest, then the new run's
	mid := oldPage.Events[len(oldPage.Events)/2].Seq
	resumed := &collector{}
	rctx, stopResumed := context.WithCancel(ctx)
	defer stopResumed()
	go func() {
		_, err := wc.Stream(rctx, id, weftclient.StreamOptions{NoDeltas: true, Since: mid, SinceRun: firstRun}, resumed.add)
		followed <- err
	}()
	wantResumed := want[mid:]
	require.Eventually(t, func() bool { return len(got(resumed)) >= len(wantResumed) }, time.Minute, 20*time.Millisecond,
		"the resumed Stream delivers the rest: %v", got(resumed))
	stopResumed()
	require.ErrorIs(t, <-followed, context.Canceled)
	require.Equal(t, wantResumed, got(resumed))
}
