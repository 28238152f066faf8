package rank_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/rank"
)

func TestBM25(t *testing.T) {
	docs := []string{"the cat sat on the mat", "dogs chase cats all day", "interest rates rose", "cat food for cats"}
	s, err := rank.BM25("cat food", docs)
	require.NoError(t, err)
	require.Equal(t, 3, rank.Order(s)[0])
	require.Greater(t, s[1], 0.0, "stemming matches cats to cat")
	require.Zero(t, s[2])
}

func TestRRF(t *testing.T) {
	fused := rank.RRF(3, []int{0, 1, 2}, []int{2, 1, 0})
	require.InDelta(t, fused[0], fused[2], 1e-12, "symmetric orderings tie")
	require.Greater(t, fused[0], fused[1], "first and last beat twice-second: 1/61+1/63 > 2/62")
	h, err := rank.Hybrid("cat", []string{"a cat", "a dog", "the cat and the cat"}, []float64{0.1, 0.9, 0.2})
	require.NoError(t, err)
	require.Len(t, h, 3)
}
