package workflows

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/events"
)

// TestEventRing: past EventRing events the ring keeps the newest, in order, and a page starts
// after the seq asked for (or at the oldest kept when that one is gone).
func TestEventRing(t *testing.T) {
	var l eventLog
	total := EventRing*2 + 7
	for i := 1; i <= total; i++ {
		l.seq++
		l.add(events.Event{Seq: l.seq, Type: events.StepStarted})
	}
	seqs := func(p *events.Page) []int64 {
		out := make([]int64, len(p.Events))
		for i, e := range p.Events {
			out[i] = e.Seq
		}
		return out
	}
	oldest := int64(total - EventRing + 1)
	cases := []struct {
		since       int64
		first, last int64
	}{
		{0, oldest, oldest + events.PageMax - 1},                 // gone: from the oldest kept
		{oldest + 10, oldest + 11, oldest + 10 + events.PageMax}, // inside the ring
		{int64(total) - 3, int64(total) - 2, int64(total)},       // the last few
		{int64(total), 0, 0},                                     // nothing new
	}
	for _, c := range cases {
		p := l.page(c.since)
		require.Equal(t, oldest, p.Oldest)
		require.Equal(t, int64(total), p.Last)
		got := seqs(p)
		if c.first == 0 {
			require.Empty(t, got)
			continue
		}
		require.Equal(t, c.first, got[0], "since %d", c.since)
		require.Equal(t, c.last, got[len(got)-1], "since %d", c.since)
		for i := 1; i < len(got); i++ {
			require.Equal(t, got[i-1]+1, got[i], "in order without gaps")
		}
	}
}
