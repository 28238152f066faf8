package openaicompat_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/openaicompat"
	"github.com/weftworks/weft/activities/provider"
	"github.com/weftworks/weft/internal/testkit/fakeembed"
)

// TestEmbedAsksForBase64: vectors are asked for as base64 and decoded to the same numbers the
// JSON answer holds; the numbers a server that ignores encoding_format answers are kept (not
// asked again), and it is asked for numbers from then on.
func TestEmbedAsksForBase64(t *testing.T) {
	texts := []string{"alpha", "beta", "gamma"}
	tests := []struct {
		name   string
		ignore bool
		// requests and base64 requests after the first call, then after the second
		requests, base64 [2]int
	}{
		{name: "server honours base64", requests: [2]int{1, 2}, base64: [2]int{1, 2}},
		{name: "server ignores it", ignore: true, requests: [2]int{1, 2}, base64: [2]int{1, 1}},
	}
	// the reference: the numbers as JSON, from a server told to ignore base64
	ref, err := fakeembed.Start(0)
	require.NoError(t, err)
	t.Cleanup(ref.Close)
	ref.IgnoreEncodingFormat = true
	want, err := openaicompat.New("k", ref.URL()).Embed(context.Background(), texts, "", "text-embedding-3-small", 64)
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := fakeembed.Start(0)
			require.NoError(t, err)
			t.Cleanup(f.Close)
			f.IgnoreEncodingFormat = tt.ignore
			c := openaicompat.New("k", f.URL())
			for call := range 2 {
				got, err := c.Embed(context.Background(), texts, "", "text-embedding-3-small", 64)
				require.NoError(t, err)
				require.Equal(t, want.Vectors, got.Vectors, "call %d", call+1)
				require.Len(t, got.Vectors[0], 64)
				requests, _ := f.Counts()
				require.Equal(t, tt.requests[call], requests, "requests after call %d", call+1)
				require.Equal(t, tt.base64[call], f.Base64Requests(), "base64 requests after call %d", call+1)
			}
		})
	}
}

// TestBase64FallbackBillsEachInputOnce: with a server that ignores encoding_format, the requests
// in flight when it first answers numbers are not sent again (16 of them were, billing 2,048 of
// 5,000 inputs twice, issue 40): each number answer is decoded and kept, and a client started
// afresh (a worker restart) bills nothing twice either. Every vector is the server's.
func TestBase64FallbackBillsEachInputOnce(t *testing.T) {
	f, err := fakeembed.Start(20 * time.Millisecond) // all 16 in flight before the first answer
	require.NoError(t, err)
	t.Cleanup(f.Close)
	f.IgnoreEncodingFormat = true
	ref, err := openaicompat.New("k", f.URL()).Embed(context.Background(), []string{"reference"}, "", "text-embedding-3-small", 32)
	require.NoError(t, err)
	_, billedRef := f.Counts()
	const inFlight, each = 16, 8
	for restart := range 2 {
		c := openaicompat.New("k", f.URL())
		var wg sync.WaitGroup
		errs := make([]error, inFlight)
		got := make([]*provider.Embeddings, inFlight)
		for i := range inFlight {
			wg.Go(func() {
				texts := make([]string, each)
				for j := range texts {
					texts[j] = fmt.Sprintf("text %d.%d.%d", restart, i, j)
				}
				texts[0] = "reference"
				got[i], errs[i] = c.Embed(context.Background(), texts, "", "text-embedding-3-small", 32)
			})
		}
		wg.Wait()
		for i := range inFlight {
			require.NoError(t, errs[i])
			require.Len(t, got[i].Vectors, each)
			require.Equal(t, ref.Vectors[0], got[i].Vectors[0], "the server's numbers, decoded")
		}
		_, billed := f.Counts()
		require.Equal(t, billedRef+(restart+1)*inFlight*each, billed, "each input billed once (after %d restarts)", restart)
	}
}
