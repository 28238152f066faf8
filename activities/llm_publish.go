package activities

import (
	"sync"
	"time"
)

// textPublisher publishes the text a streaming model call has so far (as the activity's heartbeat
// details, which clients read while the call runs), at most once per every: encoding the details
// costs the text's length, so publishing per token would cost a long answer its length squared. A
// piece that comes sooner than every after the last publish is published when every has passed, so a
// model that pauses after it (thinking, a stalled network) does not hold it back until its next
// piece. Every keepalive it publishes again, so the heartbeat timeout notices a dead worker in
// seconds even while the model has not started answering.
type textPublisher struct {
	every, keepalive time.Duration
	send             func(text string)

	mu       sync.Mutex
	text     string
	sent     time.Time
	trailing *time.Timer // publishes the newest text when a piece came too soon
	ended    bool        // stop was called: nothing more is sent
	done     chan struct{}
}

// newTextPublisher starts the keepalive; stop ends it.
func newTextPublisher(every, keepalive time.Duration, send func(text string)) *textPublisher {
	p := &textPublisher{every: every, keepalive: keepalive, send: send, done: make(chan struct{})}
	go p.keepAlive()
	return p
}

// delta takes the text so far.
func (p *textPublisher) delta(text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.text = text
	if p.ended {
		return
	}
	if wait := p.every - time.Since(p.sent); wait > 0 {
		if p.trailing == nil {
			p.trailing = time.AfterFunc(wait, p.publishNewest)
		}
		return
	}
	p.sent = time.Now()
	p.send(text)
}

func (p *textPublisher) publishNewest() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.trailing = nil
	if !p.ended {
		p.sent = time.Now()
		p.send(p.text)
	}
}

func (p *textPublisher) keepAlive() {
	tick := time.NewTicker(p.keepalive)
	defer tick.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-tick.C:
			p.mu.Lock()
			if !p.ended {
				p.send(p.text)
			}
			p.mu.Unlock()
		}
	}
}

// stop ends the publishing: after it returns nothing is sent.
func (p *textPublisher) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return
	}
	p.ended = true
	if p.trailing != nil {
		p.trailing.Stop()
	}
	close(p.done)
}
