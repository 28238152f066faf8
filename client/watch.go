package client

import (
	"context"
	"sync"
)

// watches shares the history watch of a run (WatchHistory) among the Streams of one Client that
// follow it: one long poll per run and process, however many follow it there.
type watches struct {
	mu   sync.Mutex
	runs map[string]*sharedWatch
}

// sharedWatch is one run's watch and who it tells.
type sharedWatch struct {
	subs map[*watchSub]bool
	stop context.CancelFunc
}

type watchSub struct {
	changed chan<- struct{}
	ended   chan<- error
}

// watch tells changed each time run id (runID "": its newest) may have recorded events, as
// WatchHistory does, and sends ended the watch's end (once); stop ends this subscription (the
// watch ends with its last). It tells once at once: what happened before it joined a watch that
// had started already is read then.
func (c *Client) watch(id, runID string, changed chan<- struct{}, ended chan<- error) (stop func()) {
	w := &c.watches
	key := id + "\x00" + runID
	sub := &watchSub{changed: changed, ended: ended}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.runs == nil {
		w.runs = map[string]*sharedWatch{}
	}
	sw := w.runs[key]
	if sw == nil {
		ctx, cancel := context.WithCancel(context.Background())
		sw = &sharedWatch{subs: map[*watchSub]bool{}, stop: cancel}
		w.runs[key] = sw
		tell := make(chan struct{}, 1)
		go func() {
			for {
				select {
				case <-tell:
					w.mu.Lock()
					for s := range sw.subs {
						tellOnce(s.changed)
					}
					w.mu.Unlock()
				case <-ctx.Done():
					return
				}
			}
		}()
		go func() {
			err := c.WatchHistory(ctx, id, runID, tell)
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.runs[key] == sw {
				delete(w.runs, key)
			}
			for s := range sw.subs {
				tellOnce(s.changed) // what the last tells said is read before the end
				s.ended <- err
			}
			sw.subs = nil
			cancel()
		}()
	}
	sw.subs[sub] = true
	tellOnce(changed)
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if !sw.subs[sub] {
			return
		}
		delete(sw.subs, sub)
		if len(sw.subs) == 0 {
			if w.runs[key] == sw {
				delete(w.runs, key)
			}
			sw.stop()
		}
	}
}

// tellOnce puts a tell in ch unless one is waiting there already.
func tellOnce(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
