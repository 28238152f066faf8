package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/events"
	"github.com/weftworks/weft/workflows/dsl"
)

// gatewayFlow waits for a review, then runs four templates one after the other.
const gatewayFlow = `{"name":"through-gateway","steps":[
  {"id":"gate","tool":"review","inputs":{"title":"go?","data":{"n":1}}},
  {"id":"t1","tool":"template","inputs":{"text":"{{ gate.output.decision }}"}},
  {"id":"t2","tool":"template","inputs":{"text":"{{ t1.output.text }} 2"}},
  {"id":"t3","tool":"template","inputs":{"text":"{{ t2.output.text }} 3"}},
  {"id":"t4","tool":"template","inputs":{"text":"{{ t3.output.text }} 4"}}]}`

// gatewayFollower is a Client of its own (as another process has) that follows runs through the
// stack's gateway.
func gatewayFollower(s *httpStack, queue string) *weftclient.Client {
	fc := weftclient.New(s.wc.Temporal(), queue)
	fc.FollowThrough(weftclient.Gateway{URL: s.url, Key: s.keys["rita"], HTTP: s.http})
	return fc
}

// seenLine is how a test notes an event of the run: its number, type and step.
func seenLine(e events.Event) string { return fmt.Sprintf("%d %s %s", e.Seq, e.Type, e.Step) }

// followThrough starts a run of w and follows it with the given clients from before its review
// until it ends; atReview runs once every follower saw the review, before it is approved. It
// returns the run's history length and what each follower saw of the run's numbered events.
func followThrough(t *testing.T, s *httpStack, w *dsl.Workflow, id string, followers []*weftclient.Client, atReview func()) (int, [][]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := s.wc.Start(ctx, w, weftclient.StartOptions{ID: id})
	require.NoError(t, err)
	seen := make([][]string, len(followers))
	var requested, ended sync.WaitGroup
	requested.Add(len(followers))
	ended.Add(len(followers))
	errs := make(chan error, len(followers))
	for i, fc := range followers {
		go func() {
			defer ended.Done()
			once := sync.Once{}
			res, err := fc.Stream(ctx, id, weftclient.StreamOptions{NoDeltas: true}, func(e events.Event) {
				if e.Seq > 0 {
					seen[i] = append(seen[i], seenLine(e))
				}
				if e.Type == events.ReviewRequested {
					once.Do(requested.Done)
				}
			})
			if err == nil && res == nil {
				err = fmt.Errorf("follower %d: no result", i)
			}
			errs <- err
		}()
	}
	requested.Wait()
	if atReview != nil {
		atReview()
	}
	require.Eventually(t, func() bool {
		st, err := s.wc.State(ctx, id)
		return err == nil && len(st.PendingReviews) == 1
	}, time.Minute, 10*time.Millisecond)
	_, err = s.wc.Review(ctx, id, weftclient.Decision{Step: "gate", Decision: "approve"})
	require.NoError(t, err)
	ended.Wait()
	for range followers {
		require.NoError(t, <-errs)
	}
	return historyLength(t, s.wc.Temporal(), id), seen
}

// TestStreamThroughTheGateway: a Client set to follow runs through a gateway (FollowThrough, what
// weft watch --gateway and WEFT_GATEWAY set) reads each run's events from the gateway's
// /v1/runs/{id}/events, not from the run's worker: ten such followers (ten Clients, as ten
// processes) see every event once, in order, numbered 1, 2, 3, …, as a direct follower does, with
// the run's history the same as with no follower; when the gateway drops every connection in the
// middle of a run, the followers connect again and go on after the last event they read (nothing
// twice, nothing missed); a follower that joins once the run ended reads it whole, and one that
// resumes with Since reads only what came after; one whose gateway cannot be reached follows the run directly; weft
// watch --gateway reads through the gateway.
func TestStreamThroughTheGateway(t *testing.T) {
	queue := "through-gateway"
	s := newHTTPStack(t, queue)
	w, err := dsl.Load("through-gateway.json", []byte(gatewayFlow))
	require.NoError(t, err)

	alone, _ := followThrough(t, s, w, "through-gateway-none", nil, nil)

	// ten followers through the gateway and one direct
	followers := []*weftclient.Client{weftclient.New(s.wc.Temporal(), queue)}
	for range 10 {
		followers = append(followers, gatewayFollower(s, queue))
	}
	before := s.streams.Load()
	length, seen := followThrough(t, s, w, "through-gateway-ten", followers, nil)
	require.GreaterOrEqual(t, s.streams.Load()-before, int64(10), "each follower through the gateway read its stream")
	require.Equal(t, alone, length, "the history with 11 followers is the history with none")
	want := seen[0]
	require.NotEmpty(t, want)
	for i, l := range want {
		require.Regexp(t, fmt.Sprintf("^%d ", i+1), l, "events are numbered without gaps")
	}
	require.Contains(t, want, fmt.Sprintf("%d run_completed ", len(want)), "the run's end is its last event")
	for i, got := range seen[1:] {
		require.Equal(t, want, got, "follower %d through the gateway saw the run's events once, in order", i+1)
	}

	// the gateway drops every connection while the run waits for its review
	before = s.streams.Load()
	_, seen = followThrough(t, s, w, "through-gateway-dropped", []*weftclient.Client{gatewayFollower(s, queue), gatewayFollower(s, queue)},
		s.srv.CloseClientConnections)
	require.GreaterOrEqual(t, s.streams.Load()-before, int64(4), "each follower connected again")
	for i, got := range seen {
		require.Equal(t, want, got, "follower %d saw every event once, in order, across the reconnect", i)
	}

	// a follower that joins late reads the whole run; one that resumes reads what came after
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, since := range []int64{0, 3} {
		var got []string
		res, err := gatewayFollower(s, queue).Stream(ctx, "through-gateway-dropped", weftclient.StreamOptions{NoDeltas: true, Since: since}, func(e events.Event) {
			if e.Seq > 0 {
				got = append(got, seenLine(e))
			}
		})
		require.NoError(t, err)
		require.NotNil(t, res)
		require.Equal(t, want[since:], got, "a follower from %d reads the events after it", since)
	}

	// a gateway that cannot be reached: the run is followed directly
	down := weftclient.New(s.wc.Temporal(), queue)
	down.FollowThrough(weftclient.Gateway{URL: "http://127.0.0.1:1"})
	var got []string
	_, err = down.Stream(ctx, "through-gateway-dropped", weftclient.StreamOptions{NoDeltas: true}, func(e events.Event) {
		if e.Seq > 0 {
			got = append(got, seenLine(e))
		}
	})
	require.NoError(t, err)
	require.Equal(t, want, got, "a follower whose gateway is down follows directly")

	// weft watch --gateway follows through it too
	before = s.streams.Load()
	code, out, errOut := weft(t, queue, "watch", "through-gateway-dropped", "--gateway", s.url, "--gateway-key", s.keys["rita"])
	require.Equal(t, 0, code, errOut)
	require.Equal(t, int64(1), s.streams.Load()-before, "weft watch --gateway read the gateway's stream")
	require.Contains(t, out, "t4", out)
}
