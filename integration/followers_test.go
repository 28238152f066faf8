package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/events"
	"github.com/weftworks/weft/workflows/dsl"
)

// followersFlow waits for a review, then runs four searches one after the other (each reads the
// one before): the same history each time, whoever follows it.
const followersFlow = `{"name":"followed","defaults":{"collection":"docs"},"steps":[
  {"id":"gate","tool":"review","inputs":{"title":"go?","data":{"n":1}}},
  {"id":"s1","tool":"search","inputs":{"query":"{{ gate.output.decision }}"}},
  {"id":"s2","tool":"search","inputs":{"query":"{{ s1.output.query }} 2"}},
  {"id":"s3","tool":"search","inputs":{"query":"{{ s2.output.query }} 3"}},
  {"id":"s4","tool":"search","inputs":{"query":"{{ s3.output.query }} 4"}}]}`

// followRun starts a run of w, follows it with n followers from before its review until it ends,
// approves the review once every follower saw it, and returns the run's history length and
// what each follower saw (sequence number and type of each of the run's events).
func followRun(t testing.TB, c client.Client, wc *weftclient.Client, w *dsl.Workflow, id string, n int) (int, [][]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := wc.Start(ctx, w, weftclient.StartOptions{ID: id})
	require.NoError(t, err)
	seen := make([][]string, n)
	var requested, ended sync.WaitGroup
	requested.Add(n)
	ended.Add(n)
	errs := make(chan error, n)
	for i := range n {
		go func() {
			defer ended.Done()
			once := sync.Once{}
			_, err := wc.Stream(ctx, id, weftclient.StreamOptions{NoDeltas: true}, func(e events.Event) {
				if e.Seq > 0 {
					seen[i] = append(seen[i], fmt.Sprintf("%d %s %s", e.Seq, e.Type, e.Step))
				}
				if e.Type == events.ReviewRequested {
					once.Do(requested.Done)
				}
			})
			errs <- err
		}()
	}
	requested.Wait()
	require.Eventually(t, func() bool {
		st, err := wc.State(ctx, id)
		return err == nil && len(st.PendingReviews) == 1
	}, time.Minute, 10*time.Millisecond)
	_, err = wc.Review(ctx, id, weftclient.Decision{Step: "gate", Decision: "approve"})
	require.NoError(t, err)
	require.NoError(t, c.GetWorkflow(ctx, id, "").Get(ctx, nil))
	ended.Wait()
	for range n {
		require.NoError(t, <-errs)
	}
	return historyLength(t, c, id), seen
}

// TestFollowersAddNoHistory: following a run writes nothing to it: a run followed by no client,
// one, ten or a hundred has the same number of history events, and every follower sees every event
// of the run once, in order, numbered 1, 2, 3, ….
func TestFollowersAddNoHistory(t *testing.T) {
	c := dial(t)
	queue := "followers"
	startWorker(t, c, queue, map[string]activities.Handler{"search": fakeSearch})
	wc := weftclient.New(c, queue)
	w, err := dsl.Load("followed.json", []byte(followersFlow))
	require.NoError(t, err)
	counts := []int{0, 1, 10, 100}
	lengths := map[int]int{}
	var want []string
	for _, n := range counts {
		length, seen := followRun(t, c, wc, w, fmt.Sprintf("followers-%d", n), n)
		lengths[n] = length
		for i, s := range seen {
			if want == nil {
				want = s
			}
			require.Equal(t, want, s, "follower %d of %d saw the run's events once, in order", i, n)
		}
	}
	t.Logf("history events with 0/1/10/100 followers: %v", lengths)
	require.NotEmpty(t, want)
	for i, l := range want {
		require.Regexp(t, fmt.Sprintf("^%d ", i+1), l, "events are numbered without gaps")
	}
	for _, n := range counts {
		require.Equal(t, lengths[0], lengths[n], "the history with %d followers is the history with none", n)
	}
}
