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
	gen  uint64
	done chan struct{}
	l    weftclient.PendingReviewList
	err  error
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
		f = &reviewRead{gen: c.gen, done: make(chan struct{})}
		c.flight = f
		go c.read(context.WithoutCancel(ctx), f)
	}
	c.mu.Unlock()
	select {
	case <-f.done:
		return f.l, f.err
	case <-ctx.Done():
		return weftclient.PendingReviewList{}, ctx.Err()
	}
}

func (c *reviewListing) read(ctx context.Context, f *reviewRead) {
	ctx, cancel := context.WithTimeout(ctx, reviewListingTimeout)
	defer cancel()
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
// through this console, and whoever did it must see that on their next read, not ttl later.
func (c *reviewListing) forget() {
	c.mu.Lock()
	c.gen++
	c.at = time.Time{}
	c.flight = nil
	c.mu.Unlock()
}
