package workflows

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBatchSizes: layout 2 cuts a large forEach into equal batches whose number is a multiple
// of the batches that run at once, so every wave is full; layout 1 (recorded runs) is unchanged.
func TestBatchSizes(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		layout, n, total, limit int
		most                    int // items a batch may hold; 0: BatchItems
		parallel, per, batches  int
	}{
		{"layout 1: 10,000 items, last wave half full", 1, 10000, 100 << 10, 32, 0, 4, 1000, 10},
		{"layout 2: 10,000 items, five full waves", 2, 10000, 100 << 10, 32, 0, 2, 1000, 10},
		{"layout 2: just over the threshold", 2, 2001, 20 << 10, 32, 0, 2, 501, 4},
		{"layout 2: 100,000 items", 2, 100000, 1 << 20, 32, 0, 2, 1000, 100},
		{"layout 2: large inputs set the count", 2, 3000, 5 << 20, 32, 0, 2, 500, 6},
		{"layout 2: concurrency 64, four at a time", 2, 10000, 0, 64, 0, 4, 834, 12},
		{"layout 2: low concurrency, one at a time", 2, 2500, 0, 4, 0, 1, 834, 3},
		{"provider children: 100,000 embeds", 2, 100000, 10 << 20, 32, providerBatchChildItems, 2, 7143, 14},
		{"provider children: just over the inline bound", 2, 50001, 5 << 20, 32, providerBatchChildItems, 2, 6251, 8},
		{"provider children: large inputs set the count", 2, 2100, 9 << 20, 32, providerBatchChildItems, 2, 210, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			most := tc.most
			if most == 0 {
				most = BatchItems
			}
			parallel, per := batchSizes(tc.layout, tc.n, tc.total, tc.limit, most)
			require.Equal(t, tc.parallel, parallel)
			require.Equal(t, tc.per, per)
			batches := (tc.n + per - 1) / per
			require.Equal(t, tc.batches, batches)
			if tc.layout >= 2 {
				require.Zero(t, batches%parallel, "every wave full")
				require.LessOrEqual(t, per, most)
			}
		})
	}
}
