package voyage_test

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/provider"
	"github.com/weftworks/weft/activities/voyage"
)

// fakeVoyage behaves like Voyage's API: bearer auth, /embeddings and /rerank, usage counts.
func fakeVoyage(t *testing.T, mode string) (*httptest.Server, *int) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if r.Header.Get("Authorization") != "Bearer key" {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"detail":"Provided API key is invalid."}`)
			return
		}
		switch mode {
		case "400":
			w.WriteHeader(400)
			fmt.Fprint(w, `{"detail":"Value 'x' is not a valid model."}`)
			return
		case "429":
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(429)
			fmt.Fprint(w, `{"detail":"Rate limit exceeded."}`)
			return
		case "500":
			w.WriteHeader(502)
			fmt.Fprint(w, `bad gateway`)
			return
		case "slow":
			// A server that does not answer: it holds the request until the client gives up (its
			// 100 ms timeout closes the connection), or answers 10 s late if the client never does.
			_, _ = io.Copy(io.Discard, r.Body) // the server notices a closed connection once the body is read
			select {
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Second):
			}
		case "malformed":
			fmt.Fprint(w, `{"data": [`)
			return
		}
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("fake Voyage: request body: %v", err) // not require: this is the server's goroutine
			w.WriteHeader(400)
			return
		}
		switch r.URL.Path {
		case "/v1/embeddings":
			if mode == "base64-only" && body["encoding_format"] != "base64" {
				w.WriteHeader(400)
				fmt.Fprint(w, `{"detail":"this test's server answers base64 only"}`)
				return
			}
			inputs := body["input"].([]any)
			var data []map[string]any
			for i := len(inputs) - 1; i >= 0; i-- { // out of order, as the API allows
				var emb any = []float64{float64(i), 1}
				if body["encoding_format"] == "base64" && mode != "floats" {
					// a NumPy array of float32s, little-endian, in base64
					b := binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(i)))
					emb = base64.StdEncoding.EncodeToString(binary.LittleEndian.AppendUint32(b, math.Float32bits(1)))
				}
				data = append(data, map[string]any{"index": i, "embedding": emb})
			}
			json.NewEncoder(w).Encode(map[string]any{"data": data, "model": body["model"], "usage": map[string]any{"total_tokens": 3 * len(inputs)}})
		case "/v1/rerank":
			docs := body["documents"].([]any)
			var data []map[string]any
			for i := range docs {
				data = append(data, map[string]any{"index": i, "relevance_score": float64(i) / 10})
			}
			json.NewEncoder(w).Encode(map[string]any{"data": data, "model": body["model"], "usage": map[string]any{"total_tokens": 11}})
		default:
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func TestEmbedBatchesAndOrders(t *testing.T) {
	srv, calls := fakeVoyage(t, "")
	c := voyage.New("key", srv.URL+"/v1")
	texts := make([]string, voyage.BatchSize+5)
	for i := range texts {
		texts[i] = fmt.Sprint("t", i)
	}
	out, err := c.Embed(context.Background(), texts, "document", "voyage-4-large", 0)
	require.NoError(t, err)
	require.Equal(t, 2, *calls, "two batches")
	require.Equal(t, []float32{0, 1}, out.Vectors[0])
	require.Equal(t, []float32{4, 1}, out.Vectors[voyage.BatchSize+4], "indexes are per batch")
	require.Equal(t, int64(3*len(texts)), out.Tokens)
}

// TestEmbedReadsBase64: Embed asks for base64 vectors and reads them, and reads numbers from a
// server that answers numbers all the same.
func TestEmbedReadsBase64(t *testing.T) {
	for _, mode := range []string{"base64-only", "floats"} {
		t.Run("mode="+mode, func(t *testing.T) {
			srv, calls := fakeVoyage(t, mode)
			out, err := voyage.New("key", srv.URL+"/v1").Embed(context.Background(), []string{"a", "b", "c"}, "query", "voyage-4-lite", 0)
			require.NoError(t, err)
			require.Equal(t, 1, *calls)
			require.Equal(t, [][]float32{{0, 1}, {1, 1}, {2, 1}}, out.Vectors)
		})
	}
}

func TestRerankSortsByScore(t *testing.T) {
	srv, _ := fakeVoyage(t, "")
	out, err := voyage.New("key", srv.URL+"/v1").Rerank(context.Background(), "q", []string{"a", "b", "c"}, "rerank-2.5", 0)
	require.NoError(t, err)
	require.Equal(t, []provider.Ranked{{Index: 2, Score: 0.2}, {Index: 1, Score: 0.1}, {Index: 0, Score: 0}}, out.Results)
	require.Equal(t, int64(11), out.Tokens)
}

func TestFailures(t *testing.T) {
	cases := []struct {
		mode, key string
		retryable bool
		after     time.Duration
		msg       string
	}{
		{"", "wrong", false, 0, "HTTP 401: Provided API key is invalid. (check VOYAGE_API_KEY)"},
		{"", "", false, 0, "no API key (check VOYAGE_API_KEY)"},
		{"400", "key", false, 0, "HTTP 400: Value 'x' is not a valid model."},
		{"429", "key", true, 7 * time.Second, "HTTP 429: Rate limit exceeded."},
		{"500", "key", true, 0, "HTTP 502: bad gateway"},
		{"malformed", "key", true, 0, "malformed response"},
		{"slow", "key", true, 0, "Client.Timeout"},
	}
	for _, c := range cases {
		t.Run(c.mode+c.key, func(t *testing.T) {
			srv, _ := fakeVoyage(t, c.mode)
			cl := voyage.New(c.key, srv.URL+"/v1")
			cl.HTTP.Timeout = 100 * time.Millisecond
			_, err := cl.Embed(context.Background(), []string{"x"}, "query", "voyage-4-large", 0)
			var pe *provider.Error
			require.True(t, errors.As(err, &pe), "%v", err)
			require.Equal(t, c.retryable, pe.Retryable)
			require.Equal(t, c.after, pe.RetryAfter)
			require.Contains(t, pe.Error(), c.msg)
		})
	}
}
