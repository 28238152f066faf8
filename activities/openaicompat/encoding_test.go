package openaicompat_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/openaicompat"
	"github.com/weftworks/weft/internal/fakeembed"
)

// TestEmbedAsksForBase64: vectors are asked for as base64 and decoded to the same numbers the
// JSON answer holds; a server that ignores encoding_format is asked once more with numbers, and
// for numbers from then on.
func TestEmbedAsksForBase64(t *testing.T) {
	texts := []string{"alpha", "beta", "gamma"}
	tests := []struct {
		name   string
		ignore bool
		// requests and base64 requests after the first call, then after the second
		requests, base64 [2]int
	}{
		{name: "server honours base64", requests: [2]int{1, 2}, base64: [2]int{1, 2}},
		{name: "server ignores it", ignore: true, requests: [2]int{2, 3}, base64: [2]int{1, 1}},
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
