package client

import (
	"testing"

	"github.com/stretchr/testify/require"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
)

// TestPickNotPending: a decision refused because the review it names waits no more (none waits,
// no such id, no gate of the step) says so (IsNotPending: the console then reads its listing
// again); one refused because it left open which of several gates it means does not.
func TestPickNotPending(t *testing.T) {
	two := []*weftv1.ReviewRequest{{Id: "a", Step: "check"}, {Id: "b", Step: "check"}}
	for _, tc := range []struct {
		name       string
		pending    []*weftv1.ReviewRequest
		d          Decision
		notPending bool
	}{
		{"none waits", nil, Decision{ID: "a"}, true},
		{"none waits, no id", nil, Decision{}, true},
		{"no such id", two, Decision{ID: "c"}, true},
		{"no gate of the step", two, Decision{Step: "other"}, true},
		{"which of two, by step", two, Decision{Step: "check"}, false},
		{"which of two", two, Decision{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := pick("r1", tc.pending, tc.d)
			require.Error(t, err)
			require.Equal(t, tc.notPending, IsNotPending(err), err.Error())
		})
	}
}
