package workflows

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSummaryCountsInEnglish: a step's summary says "1 result", "1 item", "1 iteration", not
// "1 results".
func TestSummaryCountsInEnglish(t *testing.T) {
	for _, tt := range []struct {
		out  any
		want string
	}{
		{map[string]any{"resultCount": float64(1)}, "1 result"},
		{map[string]any{"resultCount": 3}, "3 results"},
		{map[string]any{"results": []any{"a"}}, "1 result"},
		{map[string]any{"count": 1}, "1 item"},
		{map[string]any{"iterations": float64(1)}, "1 iteration"},
		{map[string]any{"text": "x"}, "1 char"},
		{map[string]any{"text": "xy"}, "2 chars"},
	} {
		require.Equal(t, tt.want, summarize(tt.out))
	}
}
