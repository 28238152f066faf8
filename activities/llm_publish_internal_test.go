package activities

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// recorder is a publisher's send, kept.
type recorder struct {
	mu   sync.Mutex
	sent []string
}

func (r *recorder) send(text string) { r.mu.Lock(); r.sent = append(r.sent, text); r.mu.Unlock() }

func (r *recorder) texts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.sent...)
}

// TestTextPublisherSendsAPieceBeforeAPause: a piece that comes sooner than the interval after the
// last publish is sent once the interval has passed, though no piece follows it (the model pauses):
// before, it waited for the next piece or the keepalive (5 s).
func TestTextPublisherSendsAPieceBeforeAPause(t *testing.T) {
	var r recorder
	p := newTextPublisher(20*time.Millisecond, time.Hour, r.send)
	defer p.stop()
	p.delta("one ")
	p.delta("one two ") // too soon: held, then sent
	require.Equal(t, []string{"one "}, r.texts(), "the first piece goes at once, the second waits for the interval")
	require.Eventually(t, func() bool { return len(r.texts()) == 2 }, 2*time.Second, time.Millisecond,
		"the held piece is sent when the interval has passed, with no piece after it")
	require.Equal(t, []string{"one ", "one two "}, r.texts())
}

// TestTextPublisherBoundsItsSends: a burst of pieces is one send at once and one for the newest
// when the interval has passed, not a send per piece.
func TestTextPublisherBoundsItsSends(t *testing.T) {
	var r recorder
	p := newTextPublisher(time.Hour, time.Hour, r.send)
	text := ""
	for i := 0; i < 1000; i++ {
		text += "w "
		p.delta(text)
	}
	require.Equal(t, []string{"w "}, r.texts(), "within the interval only the first piece is sent")
	p.stop()
	p.delta(text + "late")
	require.Len(t, r.texts(), 1, "after stop nothing is sent")
}

// TestTextPublisherKeepsAlive: with no piece, the text so far is sent every keepalive (the
// heartbeat that tells Temporal the worker lives), and not after stop.
func TestTextPublisherKeepsAlive(t *testing.T) {
	var r recorder
	p := newTextPublisher(time.Hour, 5*time.Millisecond, r.send)
	require.Eventually(t, func() bool { return len(r.texts()) >= 2 }, 2*time.Second, time.Millisecond)
	p.stop()
	n := len(r.texts())
	p.stop() // twice is fine
	p.delta("after")
	require.Len(t, r.texts(), n, "stop holds the lock a keepalive sends under, and marks the end")
}
