package openaicompat

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// answer is an embeddings answer of n vectors of dim dimensions, base64 or as numbers.
func answer(n, dim int, b64 bool) []byte {
	var data []map[string]any
	for i := range n {
		var v any
		if b64 {
			v = base64.StdEncoding.EncodeToString(make([]byte, 4*dim))
		} else {
			v = make([]float32, dim)
		}
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": v})
	}
	b, _ := json.Marshal(map[string]any{"object": "list", "data": data, "model": "m", "usage": map[string]any{"prompt_tokens": n}})
	return b
}

func respond(body []byte) *http.Response {
	return &http.Response{StatusCode: 200, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}
}

// TestBase64VectorsRewritesNumbersOnly: an answer in numbers is rewritten to base64 and says so;
// one already in base64 (with or without spaces in its JSON) comes through byte for byte.
func TestBase64VectorsRewritesNumbersOnly(t *testing.T) {
	for _, c := range []struct {
		name    string
		body    []byte
		numbers bool
	}{
		{"base64", answer(3, 4, true), false},
		{"numbers", answer(3, 4, false), true},
		{"numbers, spaced", []byte(`{"object":"list","data":[{"index":0,"embedding" : [ 0.5, 1 ]}],"model":"m"}`), true},
		{"no vectors", []byte(`{"error":"x"}`), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := respond(c.body)
			var numbers bool
			require.NoError(t, base64Vectors(resp, &numbers))
			got, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Equal(t, c.numbers, numbers)
			if !c.numbers {
				require.Equal(t, string(c.body), string(got))
				return
			}
			require.NotContains(t, string(got), `"embedding":[`)
			require.Equal(t, int64(len(got)), resp.ContentLength)
		})
	}
}

// BenchmarkBase64VectorsPassThrough: what reading a base64 answer of 128 vectors costs before
// go-openai decodes it (the provider-batch fan-out reads one per request).
//
//	go test ./activities/openaicompat -run '^$' -bench Base64Vectors
func BenchmarkBase64VectorsPassThrough(b *testing.B) {
	for _, dim := range []int{256, 1024} {
		body := answer(128, dim, true)
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var numbers bool
				if err := base64Vectors(respond(body), &numbers); err != nil || numbers {
					b.Fatal(err, numbers)
				}
			}
		})
	}
}
