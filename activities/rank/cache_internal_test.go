package rank

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAnalysisCache: the cache gives each text its analysis, keeps what it gave while a generation
// has room, and holds at most two generations when more texts pass through than fit; concurrent
// gets (under -race) agree.
func TestAnalysisCache(t *testing.T) {
	an, err := analyzer()
	require.NoError(t, err)
	texts := make([]string, 50)
	for i := range texts {
		texts[i] = fmt.Sprintf("chunk %d says the rate limits of plan %d reset hourly", i, i%7)
	}
	c := &analysisCache{max: 2000}
	out := make([]*analysis, len(texts))
	c.get(an, texts[:3], out[:3])
	again := make([]*analysis, 3)
	c.get(an, texts[:3], again)
	for i := range again {
		require.Same(t, out[i], again[i], "a remembered text is not analysed again")
		require.Equal(t, analyse(an, texts[i]), again[i])
	}

	c.get(an, texts, out)
	for i, a := range out {
		require.Equal(t, analyse(an, texts[i]), a, texts[i])
	}
	require.Less(t, len(c.cur)+len(c.old), len(texts), "the oldest generation was dropped")
	require.LessOrEqual(t, c.size, c.max)

	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := make([]*analysis, 20)
			c.get(an, texts[g*10:g*10+20], out)
			for i, a := range out {
				require.Equal(t, analyse(an, texts[g*10+i]), a)
			}
		}()
	}
	wg.Wait()
}
