package client

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/auth"
	"github.com/weftworks/weft/internal/testkit/reviewfake"
)

// waitingRuns lists n runs waiting on a review as visibility does (reviewfake.Runs): run r{i}
// started i minutes after the first and asked its review then; every third run (r0, r3, …) was
// started by ana, the others by bo.
func waitingRuns(n int) *reviewfake.Runs {
	return &reviewfake.Runs{N: n, MemoKey: MemoStartedBy, StartedBy: func(i int) string {
		if i%3 == 0 {
			return "ana"
		}
		return "bo"
	}}
}

// TestPendingReviewsPages: with 150 runs waiting, listed newest first a page at a time, the
// reviews are read from every page up to the bound asked (the longest waiting first), the list
// says when the bound left runs out, and a reader's reviews are counted among all the runs read.
func TestPendingReviewsPages(t *testing.T) {
	const n = 150
	runsOf := func(l []PendingReview) []string {
		var out []string
		for _, r := range l {
			out = append(out, r.Run.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name        string
		limit       int
		reviews     int
		first, last string
		capped      bool
	}{
		{"the bound well above the runs waiting", MaxReviewRuns, n, "r0", "r149", false},
		{"the bound at the runs waiting", n, n, "r0", "r149", false},
		{"the default bound: the 100 newest", 0, 100, "r50", "r149", true},
		{"a bound inside a page", 120, 120, "r30", "r149", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := waitingRuns(n)
			c := New(f, "test")
			l, err := c.ListPendingReviews(context.Background(), ListOptions{Limit: tc.limit})
			require.NoError(t, err)
			runs := runsOf(l.Reviews)
			require.Len(t, runs, tc.reviews)
			require.Equal(t, tc.first, runs[0], "the longest waiting first")
			require.Equal(t, tc.last, runs[len(runs)-1])
			require.Equal(t, tc.capped, l.Capped)
			require.Equal(t, tc.reviews, l.Runs)
			require.Greater(t, f.Pages.Load(), int64(1), "the listing is read a page at a time")

			plain, err := c.PendingReviews(context.Background(), ListOptions{Limit: tc.limit})
			require.NoError(t, err)
			require.Equal(t, runs, runsOf(plain), "PendingReviews answers the same reviews")
		})
	}
	t.Run("a reader's reviews among all the runs", func(t *testing.T) {
		l, err := New(waitingRuns(n), "test").ListPendingReviews(context.Background(), ListOptions{Limit: MaxReviewRuns})
		require.NoError(t, err)
		mine := ReadableReviews(&auth.Identity{Name: "ana", Roles: []string{auth.RoleReader}}, l.Reviews)
		require.Len(t, mine, n/3, "every third run is ana's")
		require.Equal(t, "r0", mine[0].Run.ID, "the oldest of them first")
	})
}

// TestPendingReviewsCut: a listing the bound cut says so, with how many wait at least and how
// many runs it read, and how to read more (or, when the reader cannot, that the older ones are
// listed once newer ones are decided); a reader shown none is told that, not "at least 0"; one
// that read every run waiting says nothing.
func TestPendingReviewsCut(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int
		limit int
		shown int // what a reader's rule kept (-1: every review read)
		more  string
		want  string
	}{
		{"every run read", 150, MaxReviewRuns, -1, "", ""},
		{"the bound at the runs waiting", 100, 100, -1, "read more.", ""},
		{"the CLI's bound", 150, 100, -1, "weft reviews --limit 1000 reads more.", "At least 100 waiting: the reviews of the 100 newest runs waiting are listed; older runs wait too, and they may have waited longest. weft reviews --limit 1000 reads more."},
		{"the MCP prompt's bound, a reader's share", 150, 50, 17, "", "At least 17 waiting: the reviews of the 50 newest runs waiting are listed; older runs wait too, and they may have waited longest. The older ones are listed once newer ones are decided."},
		{"a reader shown none", 150, 20, 0, "", "No review you may see waits in the 20 newest runs waiting; older runs wait too, and they may have waited longest. The older ones are listed once newer ones are decided."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := New(waitingRuns(tc.n), "test").ListPendingReviews(context.Background(), ListOptions{Limit: tc.limit})
			require.NoError(t, err)
			shown := tc.shown
			if shown < 0 {
				shown = len(l.Reviews)
			}
			require.Equal(t, tc.want, l.Cut(shown, tc.more))
		})
	}
}
