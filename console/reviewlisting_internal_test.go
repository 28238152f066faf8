package console

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/internal/testkit/reviewfake"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// heldListing is a Temporal whose listing of the runs waiting is held until the test answers it
// (answer): each listing says it began on started, and on ended when its context ended first.
type heldListing struct {
	tclient.Client
	started chan struct{}
	answer  chan heldAnswer
	ended   chan struct{}
	lists   atomic.Int64
}

// heldAnswer answers one listing: n runs waiting (r0 …), each on one review, or err.
type heldAnswer struct {
	n   int
	err error
}

func newHeldListing() *heldListing {
	return &heldListing{started: make(chan struct{}, 10), answer: make(chan heldAnswer), ended: make(chan struct{}, 10)}
}

func (f *heldListing) ListWorkflow(ctx context.Context, _ *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	f.lists.Add(1)
	f.started <- struct{}{}
	select {
	case a := <-f.answer:
		if a.err != nil {
			return nil, a.err
		}
		resp := &workflowservice.ListWorkflowExecutionsResponse{}
		for i := range a.n {
			resp.Executions = append(resp.Executions, &workflowpb.WorkflowExecutionInfo{
				Execution: &commonpb.WorkflowExecution{WorkflowId: fmt.Sprintf("r%d", i)}, Type: &commonpb.WorkflowType{Name: runwire.WorkflowType},
				Status: enums.WORKFLOW_EXECUTION_STATUS_RUNNING})
		}
		return resp, nil
	case <-ctx.Done():
		f.ended <- struct{}{}
		return nil, ctx.Err()
	}
}

func (f *heldListing) QueryWorkflow(_ context.Context, id, _, _ string, _ ...any) (converter.EncodedValue, error) {
	return reviewfake.Value(&weftv1.ExecutionState{Workflow: "queue", Status: "awaiting_review",
		PendingReviews: []*weftv1.ReviewRequest{{Id: "gate", Title: "review of " + id}}})
}

// got is one caller's answer from the shared listing.
type got struct {
	l   weftclient.PendingReviewList
	err error
}

// ask calls c.get(ctx) apart; its answer comes on the channel.
func ask(ctx context.Context, c *reviewListing) chan got {
	ch := make(chan got, 1)
	go func() {
		l, err := c.get(ctx)
		ch <- got{l, err}
	}()
	return ch
}

// within is what arrives on ch, failing the test when nothing does in 10 s (it would hang).
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		require.FailNow(t, "nothing came in 10 s: "+what)
		var zero T
		return zero
	}
}

// waiting waits until n callers wait on the listing being read.
func waiting(t *testing.T, c *reviewListing, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.flight != nil && c.flight.waiters == n
	}, 10*time.Second, time.Millisecond, "%d callers waiting", n)
}

// TestReviewListingCancelledPollerLeavesOthers: the poll that started a listing goes away (its
// tab closed) while others wait on it: the listing is not cut short, and they get it.
func TestReviewListingCancelledPollerLeavesOthers(t *testing.T) {
	f := newHeldListing()
	c := &reviewListing{client: weftclient.New(f, "test"), ttl: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	first := ask(ctx, c)
	within(t, f.started, "the listing began")
	second, third := ask(context.Background(), c), ask(context.Background(), c)
	waiting(t, c, 3)
	cancel()
	require.ErrorIs(t, within(t, first, "the first poller's answer").err, context.Canceled)
	waiting(t, c, 2)
	f.answer <- heldAnswer{n: 2}
	for _, ch := range []chan got{second, third} {
		g := within(t, ch, "a waiting poller's answer")
		require.NoError(t, g.err)
		require.Len(t, g.l.Reviews, 2)
	}
	require.Empty(t, f.ended, "the listing ran to its end")
	require.Equal(t, int64(1), f.lists.Load(), "one listing for all three")
}

// TestReviewListingErrorNotKept: a listing that failed is not kept: the next caller reads again,
// and a listing that succeeds is kept for the one after.
func TestReviewListingErrorNotKept(t *testing.T) {
	f := newHeldListing()
	c := &reviewListing{client: weftclient.New(f, "test"), ttl: time.Hour}
	first := ask(context.Background(), c)
	within(t, f.started, "the listing began")
	f.answer <- heldAnswer{err: errors.New("visibility is down")}
	require.ErrorContains(t, within(t, first, "the failed answer").err, "visibility is down")

	second := ask(context.Background(), c)
	within(t, f.started, "the next caller reads again")
	f.answer <- heldAnswer{n: 3}
	g := within(t, second, "the second answer")
	require.NoError(t, g.err)
	require.Len(t, g.l.Reviews, 3)

	g = within(t, ask(context.Background(), c), "the kept answer")
	require.NoError(t, g.err)
	require.Len(t, g.l.Reviews, 3)
	require.Equal(t, int64(2), f.lists.Load(), "the third caller was served the kept listing")
}

// TestReviewListingDecisionDuringARead: a review decided while the listing is read: the caller
// waiting on that read gets it (they asked before the decision), but it is not kept: the next
// caller reads the listing again and sees the decision.
func TestReviewListingDecisionDuringARead(t *testing.T) {
	f := newHeldListing()
	c := &reviewListing{client: weftclient.New(f, "test"), ttl: time.Hour}
	first := ask(context.Background(), c)
	within(t, f.started, "the listing began")
	waiting(t, c, 1)
	c.forget() // a decision
	f.answer <- heldAnswer{n: 2}
	g := within(t, first, "the answer read before the decision")
	require.NoError(t, g.err)
	require.Len(t, g.l.Reviews, 2)
	require.Empty(t, f.ended, "a read someone waits on is not ended by the decision")

	second := ask(context.Background(), c)
	within(t, f.started, "the listing is read again after the decision")
	f.answer <- heldAnswer{n: 1}
	g = within(t, second, "the answer after the decision")
	require.NoError(t, g.err)
	require.Len(t, g.l.Reviews, 1, "not the listing read before the decision")
	require.Equal(t, int64(2), f.lists.Load())
}

// TestReviewListingForgottenReadEnds: a read dropped by a decision that nobody waits on any more
// is ended rather than left to run for no one: whether the last caller left before the decision
// or after it. One nobody waits on that is still current runs on (the next poll takes it).
func TestReviewListingForgottenReadEnds(t *testing.T) {
	t.Run("the caller left, then a decision", func(t *testing.T) {
		f := newHeldListing()
		c := &reviewListing{client: weftclient.New(f, "test"), ttl: time.Hour}
		ctx, cancel := context.WithCancel(context.Background())
		first := ask(ctx, c)
		within(t, f.started, "the listing began")
		cancel()
		require.ErrorIs(t, within(t, first, "the caller's answer").err, context.Canceled)
		require.Empty(t, f.ended, "a current read runs on after its callers left")
		c.forget()
		within(t, f.ended, "the forgotten read nobody waits on ended")
	})
	t.Run("a decision, then the caller left", func(t *testing.T) {
		f := newHeldListing()
		c := &reviewListing{client: weftclient.New(f, "test"), ttl: time.Hour}
		ctx, cancel := context.WithCancel(context.Background())
		first := ask(ctx, c)
		within(t, f.started, "the listing began")
		waiting(t, c, 1)
		c.forget()
		require.Empty(t, f.ended, "a read someone waits on is not ended by the decision")
		cancel()
		require.ErrorIs(t, within(t, first, "the caller's answer").err, context.Canceled)
		within(t, f.ended, "the forgotten read ended when its last caller left")
	})
}
