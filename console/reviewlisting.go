package console

import (
	"context"
	"sync"
	"time"

	weftclient "github.com/weftworks/weft/client"
)

// ReviewsPollInterval is how often the reviews page reads /api/reviews again (console.js
// reviewsPage; the nav's count reads it every 10 s): the fastest poll, and the default of
// Options.ReviewListingTTL.
const ReviewsPollInterval = 2 * time.Second

// reviewListingTimeout bounds one shared listing. It runs apart from the request that started
// it (others wait on it too), so that request's end does not cut it short.
const reviewListingTimeout = time.Minute

// reviewListing shares one listing of the pending reviews (weftclient.ListPendingReviews, up to
// MaxReviewRuns waiting runs and a state query each) between every tab that polls: callers that
// ask while it is read wait for that read, and callers within ttl of it get its answer. It holds
// the listing as the client returns it, of every run, read without anyone's identity: each caller
// applies its own read rule to it (Server.pendingReviews), so no one's filtered view is shared.
type reviewListing struct {
	client *weftclient.Client
	ttl    time.Duration

	mu     sync.Mutex
	gen    uint64 // bumped by forget: a read started before it is not kept
	l      weftclient.PendingReviewList
	at     time.Time // when l was read (zero: none kept)
	flight *reviewRead
}

// reviewRead is a listing being read; done is closed when l and err are set.
type reviewRead struct {
	gen    uint64
	done   chan struct{}
	cancel context.CancelFunc // ends the read: forgotten, and nobody waits on it any more
	// waiters is how many callers wait on it (under reviewListing.mu)
	waiters int
	l       weftclient.PendingReviewList
	err     error
}

// get answers the shared listing: the one read within ttl, else the one being read, else a new
// read. ctx ends only this caller's wait.
func (c *reviewListing) get(ctx context.Context) (weftclient.PendingReviewList, error) {
	c.mu.Lock()
	if !c.at.IsZero() && time.Since(c.at) < c.ttl {
		l := c.l
		c.mu.Unlock()
		return l, nil
	}
	f := c.flight
	if f == nil || f.gen != c.gen {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reviewListingTimeout)
		f = &reviewRead{gen: c.gen, done: make(chan struct{}), cancel: cancel}
		c.flight = f
		go c.read(rctx, f)
	}
	f.waiters++
	c.mu.Unlock()
	select {
	case <-f.done:
		c.leave(f)
		return f.l, f.err
	case <-ctx.Done():
		c.leave(f)
		return weftclient.PendingReviewList{}, ctx.Err()
	}
}

// leave is a caller done waiting on f. A read forgotten (forget) that nobody waits on any more
// is ended: its answer is kept by no one. One still current runs on for the next caller.
func (c *reviewListing) leave(f *reviewRead) {
	c.mu.Lock()
	f.waiters--
	if f.waiters == 0 && c.flight != f {
		f.cancel()
	}
	c.mu.Unlock()
}

func (c *reviewListing) read(ctx context.Context, f *reviewRead) {
	defer f.cancel()
	f.l, f.err = c.client.ListPendingReviews(ctx, weftclient.ListOptions{Limit: weftclient.MaxReviewRuns})
	c.mu.Lock()
	if c.flight == f {
		c.flight = nil
	}
	// kept only when nothing was decided since it started, and not when it failed (the next
	// caller tries again)
	if f.err == nil && f.gen == c.gen {
		c.l, c.at = f.l, time.Now()
	}
	c.mu.Unlock()
	close(f.done)
}

// forget drops the listing kept and any being read: a review was decided (or a run cancelled)
// through this console, and whoever did it must see that on their next read, not ttl later. A
// read nobody waits on is ended; those waiting on one get its answer (they asked before).
func (c *reviewListing) forget() {
	c.mu.Lock()
	c.gen++
	c.at = time.Time{}
	if f := c.flight; f != nil && f.waiters == 0 {
		f.cancel()
	}
	c.flight = nil
	c.mu.Unlock()
}
