package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/console"
	"github.com/weftworks/weft/internal/testkit/reviewfake"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
)

// countedReviews is reviewsTemporal's runs counting what each listing costs: pages of the
// visibility listing (Runs.Pages) and state queries. A review decided through it (the review Update) waits no more.
type countedReviews struct {
	*reviewfake.Runs
	queries atomic.Int64 // pages: Runs.Pages

	mu      sync.Mutex
	decided map[string]bool
}

func newCountedReviews(n int) *countedReviews {
	return &countedReviews{Runs: reviewsTemporal(n), decided: map[string]bool{}}
}

func (f *countedReviews) QueryWorkflow(ctx context.Context, id, run, query string, args ...any) (converter.EncodedValue, error) {
	f.queries.Add(1)
	f.mu.Lock()
	done := f.decided[id]
	f.mu.Unlock()
	if done {
		p, err := converter.GetDefaultDataConverter().ToPayload(&weftv1.ExecutionState{Workflow: "queue", Status: "running"})
		if err != nil {
			return nil, err
		}
		return encoded{p}, nil
	}
	return f.Runs.QueryWorkflow(ctx, id, run, query, args...)
}

func (f *countedReviews) UpdateWorkflow(_ context.Context, o tclient.UpdateWorkflowOptions) (tclient.WorkflowUpdateHandle, error) {
	f.mu.Lock()
	f.decided[o.WorkflowID] = true
	f.mu.Unlock()
	return decidedHandle{o.WorkflowID}, nil
}

type decidedHandle struct{ id string }

func (h decidedHandle) WorkflowID() string { return h.id }
func (h decidedHandle) RunID() string      { return "" }
func (h decidedHandle) UpdateID() string   { return "u-" + h.id }
func (h decidedHandle) Get(_ context.Context, ptr any) error {
	if d, ok := ptr.(*weftv1.ReviewDecision); ok {
		d.Id, d.Decision = "gate", "approve"
	}
	return nil
}

// polled is what one read of /api/reviews answered: the runs of the reviews it lists, and how
// many wait in all.
type polled struct {
	runs  []string
	total int
}

// readReviews reads /api/reviews as c (safe to call from any goroutine: it fails by its error).
func readReviews(c *http.Client, u string) (polled, error) {
	resp, err := c.Get(u + "/api/reviews")
	if err != nil {
		return polled{}, err
	}
	defer resp.Body.Close()
	var p struct {
		Reviews []struct {
			Run string `json:"run"`
		} `json:"reviews"`
		Total int `json:"total"`
	}
	if resp.StatusCode != http.StatusOK {
		return polled{}, fmt.Errorf("GET /api/reviews: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		return polled{}, err
	}
	out := polled{runs: []string{}, total: p.Total}
	for _, r := range p.Reviews {
		out.runs = append(out.runs, r.Run)
	}
	return out, nil
}

// pollAll reads /api/reviews once per client, all at the same time, and answers in their order.
func pollAll(t *testing.T, u string, clients []*http.Client) []polled {
	t.Helper()
	out, errs := make([]polled, len(clients)), make([]error, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() { out[i], errs[i] = readReviews(c, u) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	return out
}

// TestReviewsListingShared: tabs that poll /api/reviews at the same time, or within the fastest
// poll's interval of each other, cost one listing between them (its pages and one state query a
// run), not one each; past the interval the listing is read again.
func TestReviewsListingShared(t *testing.T) {
	const n, polls = 150, 20
	const pagesPerListing = 2 // 100 runs a page
	for _, tc := range []struct {
		name       string
		ttl        time.Duration
		concurrent bool
	}{
		{"20 polls at once, the default interval", 0, true},
		{"20 polls at once, a long interval", time.Hour, true},
		{"20 polls one after another within the interval", time.Hour, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newCountedReviews(n)
			srv := newConsole(t, console.Options{Client: weftclient.New(f, "console-test"), Reviewer: "op", ReviewListingTTL: tc.ttl})
			var got []polled
			if tc.concurrent {
				clients := make([]*http.Client, polls)
				for i := range clients {
					clients[i] = http.DefaultClient
				}
				got = pollAll(t, srv.URL, clients)
			} else {
				for range polls {
					p, err := readReviews(http.DefaultClient, srv.URL)
					require.NoError(t, err)
					got = append(got, p)
				}
			}
			for _, p := range got {
				require.Equal(t, n, p.total)
			}
			t.Logf("%d polls of %d runs waiting: %d listing pages, %d state queries (one listing: %d pages, %d queries)",
				polls, n, f.Pages.Load(), f.queries.Load(), pagesPerListing, n)
			require.Equal(t, int64(pagesPerListing), f.Pages.Load(), "one listing for every poll")
			require.Equal(t, int64(n), f.queries.Load(), "one state query a run for every poll")
		})
	}
	t.Run("past the interval the listing is read again", func(t *testing.T) {
		f := newCountedReviews(n)
		srv := newConsole(t, console.Options{Client: weftclient.New(f, "console-test"), Reviewer: "op", ReviewListingTTL: time.Millisecond})
		_, err := readReviews(http.DefaultClient, srv.URL)
		require.NoError(t, err)
		require.Equal(t, int64(pagesPerListing), f.Pages.Load())
		require.Eventually(t, func() bool {
			_, err := readReviews(http.DefaultClient, srv.URL)
			return err == nil && f.Pages.Load() >= 2*pagesPerListing
		}, 10*time.Second, 10*time.Millisecond, "a poll after the interval reads the listing again")
	})
}

// TestReviewsListingKeepsEachReadersView crosses the boundary the shared listing must hold: the
// listing is read once, of every run, and each person who polls sees only the reviews their own
// read rule gives them, whoever's poll read it and in whichever order they ask.
func TestReviewsListingKeepsEachReadersView(t *testing.T) {
	const n = 150
	loaded, keys := testKeys(t)
	f := newCountedReviews(n)
	srv := newConsole(t, console.Options{Keys: loaded, RequireLogin: true, Client: weftclient.New(f, "console-test"),
		ReviewsPerPage: 1000, ReviewListingTTL: time.Hour})
	// rita (reader) started every third run; ana (reviewer) may decide every review; carl
	// (runner) started none; env is an admin
	ritas := []string{}
	for i := 0; i < n; i += 3 {
		ritas = append(ritas, fmt.Sprintf("r%d", i))
	}
	want := map[string]int{"env": n, "rita": len(ritas), "ana": n, "carl": 0}
	clients := map[string]*http.Client{}
	for who := range want {
		clients[who], _ = loginAs(t, srv, keys[who])
	}
	check := func(who string, p polled) {
		require.Equal(t, want[who], p.total, "%s's count", who)
		require.Len(t, p.runs, want[who], "%s's reviews", who)
		if who == "rita" || who == "carl" {
			require.Subset(t, ritas, p.runs, "%s sees no review of a run bo started", who)
		}
	}
	for _, order := range [][]string{
		{"env", "rita", "carl", "ana"}, // the admin's poll reads the listing; the others are served from it
		{"carl", "rita", "ana", "env"},
	} {
		for _, who := range order {
			p, err := readReviews(clients[who], srv.URL)
			require.NoError(t, err)
			check(who, p)
		}
	}
	// 20 polls at once, of the four mixed
	var who []string
	var cs []*http.Client
	for i := range 20 {
		who = append(who, []string{"env", "rita", "carl", "ana"}[i%4])
		cs = append(cs, clients[who[i]])
	}
	for i, p := range pollAll(t, srv.URL, cs) {
		check(who[i], p)
	}
	require.Equal(t, int64(2), f.Pages.Load(), "every poll above was served from one listing")
}

// TestReviewsListingForgetsADecision: a review decided through the console leaves the shared
// listing at once: the next poll reads it again and no longer lists the review, although the
// listing's interval has not passed.
func TestReviewsListingForgetsADecision(t *testing.T) {
	f := newCountedReviews(7)
	srv := newConsole(t, console.Options{Client: weftclient.New(f, "console-test"), Reviewer: "op", ReviewListingTTL: time.Hour})
	c := srv.Client()
	p, err := readReviews(c, srv.URL)
	require.NoError(t, err)
	require.Equal(t, 7, p.total)
	require.Equal(t, "r0", p.runs[0])
	code, out := post(t, c, srv.URL+"/v1/runs/r0/reviews", csrfOf(t, c, srv.URL), srv.URL, `{"review":"gate","decision":"approve","digest":"d"}`)
	require.Equal(t, http.StatusOK, code, out)
	p, err = readReviews(c, srv.URL)
	require.NoError(t, err)
	require.Equal(t, 6, p.total, "the decided review is not counted")
	require.NotContains(t, p.runs, "r0", "the decided review is not listed")
	require.Equal(t, int64(2), f.Pages.Load(), "the listing was read again after the decision")
}

// TestReviewsListingKeptWhenNothingWasDecided: a decision that fails on a run that does not
// exist (a bogus or stale id) changed nothing, so the shared listing is kept and the next poll is
// served from it; one refused because the review was decided elsewhere (its run no longer lists
// it) drops it, so the next poll no longer lists that review.
func TestReviewsListingKeptWhenNothingWasDecided(t *testing.T) {
	f := newCountedReviews(7)
	srv := newConsole(t, console.Options{Client: weftclient.New(f, "console-test"), Reviewer: "op", ReviewListingTTL: time.Hour})
	c := srv.Client()
	csrf := csrfOf(t, c, srv.URL)
	p, err := readReviews(c, srv.URL)
	require.NoError(t, err)
	require.Equal(t, 7, p.total)
	require.Equal(t, int64(1), f.Pages.Load())

	for _, id := range []string{"no-such-run", "nor-this"} {
		code, out := post(t, c, srv.URL+"/v1/runs/"+id+"/reviews", csrf, srv.URL, `{"review":"gate","decision":"approve","digest":"d"}`)
		require.NotEqual(t, http.StatusOK, code, out)
		p, err = readReviews(c, srv.URL)
		require.NoError(t, err)
		require.Equal(t, 7, p.total)
		require.Equal(t, int64(1), f.Pages.Load(), "a failed decision on %s does not read the listing again", id)
	}

	// r1's review is decided elsewhere (the CLI, another console): deciding it here is refused,
	// and the listing is read again without it
	f.mu.Lock()
	f.decided["r1"] = true
	f.mu.Unlock()
	code, out := post(t, c, srv.URL+"/v1/runs/r1/reviews", csrf, srv.URL, `{"review":"gate","decision":"approve","digest":"d"}`)
	require.Equal(t, http.StatusConflict, code, out)
	p, err = readReviews(c, srv.URL)
	require.NoError(t, err)
	require.Equal(t, 6, p.total, "the review decided elsewhere is not counted")
	require.NotContains(t, p.runs, "r1")
	require.Equal(t, int64(2), f.Pages.Load(), "the listing was read again after the refusal")
}
