package client

import (
	"context"
	"strconv"
	"sync"
	"time"
)

// texts shares the reads of a run's streamed model text (its description, read every
// DeltaInterval while a model call runs) among the Streams of one Client that follow it: one read
// per interval and process however many follow the run there (a gateway's hundred streams ask the
// server twenty times a second, not two thousand).
type texts struct {
	mu   sync.Mutex
	runs map[string]*sharedText
}

// sharedText is one run's reader and whom it gives each read.
type sharedText struct {
	subs map[chan *Description]bool
	stop context.CancelFunc
}

// readTexts gives ch run id's description every interval (the newest only: a slow reader skips
// reads) until stop; the Streams that ask for the same run and interval share the reads. The
// descriptions are shared: read them, do not change them.
func (c *Client) readTexts(id string, every time.Duration, ch chan *Description) (stop func()) {
	t := &c.texts
	key := id + "\x00" + strconv.FormatInt(int64(every), 10)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.runs == nil {
		t.runs = map[string]*sharedText{}
	}
	st := t.runs[key]
	if st == nil {
		ctx, cancel := context.WithCancel(context.Background())
		st = &sharedText{subs: map[chan *Description]bool{}, stop: cancel}
		t.runs[key] = st
		go func() {
			tick := time.NewTicker(every)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				d, err := c.Describe(ctx, id)
				if err != nil {
					continue
				}
				t.mu.Lock()
				for sub := range st.subs {
					select { // the newest only
					case <-sub:
					default:
					}
					sub <- d
				}
				t.mu.Unlock()
			}
		}()
	}
	st.subs[ch] = true
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if !st.subs[ch] {
			return
		}
		delete(st.subs, ch)
		if len(st.subs) == 0 {
			if t.runs[key] == st {
				delete(t.runs, key)
			}
			st.stop()
		}
	}
}
