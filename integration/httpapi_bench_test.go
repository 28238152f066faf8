package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stretchr/testify/require"
	weftclient "github.com/weftworks/weft/client"
)

// httpFollowers is how many clients read and follow at once in BenchmarkHTTPAPIvsMCP.
const httpFollowers = 50

// BenchmarkHTTPAPIvsMCP measures, in one run on one gateway, /v1 beside its MCP equivalents with
// 50 clients at once:
//
//   - read: GET /v1/runs/{id} and MCP's weft_execution on a completed run (each client 20
//     reads): requests/s and p99;
//
//   - follow: 50 followers of one run waiting for a review (SSE streams of /v1/runs/{id}/events;
//     MCP sessions subscribed to weft://executions/{id}), then the review is decided: how long
//     until each follower knows the run completed (SSE: its run_completed event; MCP: a
//     notifications/resources/updated after which reading the resource says completed), p50
//     and p99, and deliveries/s (followers over the time until the last knew).
//
//     go test ./integration -run '^$' -bench HTTPAPIvsMCP -benchtime 1x
func BenchmarkHTTPAPIvsMCP(b *testing.B) {
	s := newHTTPStack(b, "httpapi-bench")
	ctx := context.Background()
	readID := fmt.Sprint("bench-read-", time.Now().UnixNano())
	status, _, body := s.do("ana", http.MethodPost, "/v1/runs", map[string]any{"workflow": "http-approve", "id": readID})
	require.Equal(b, http.StatusCreated, status, string(body))
	require.Eventually(b, func() bool {
		st, err := s.wc.State(ctx, readID)
		return err == nil && len(st.PendingReviews) == 1
	}, time.Minute, 20*time.Millisecond)
	_, err := s.wc.Review(ctx, readID, weftclientDecision("approve"))
	require.NoError(b, err)
	_, err = s.wc.Result(ctx, readID)
	require.NoError(b, err)

	mcpSessions := func(n int, updated func(i int, uri string)) []*sdk.ClientSession {
		out := make([]*sdk.ClientSession, n)
		for i := range out {
			opts := &sdk.ClientOptions{}
			if updated != nil {
				opts.ResourceUpdatedHandler = func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) { updated(i, r.Params.URI) }
			}
			cs, err := sdk.NewClient(&sdk.Implementation{Name: fmt.Sprint("bench-", i), Version: "1"}, opts).Connect(ctx,
				&sdk.StreamableClientTransport{Endpoint: s.url + "/mcp", HTTPClient: &http.Client{Transport: bearer{key: s.keys["ana"], base: s.http.Transport}}},
				&sdk.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
			require.NoError(b, err)
			b.Cleanup(func() { _ = cs.Close() })
			out[i] = cs
		}
		return out
	}
	report := func(b *testing.B, lat []time.Duration, elapsed time.Duration, unit string) {
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		b.ReportMetric(float64(len(lat))/elapsed.Seconds(), unit)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
	reads := func(b *testing.B, read func(i int)) {
		for b.Loop() {
			var mu sync.Mutex
			var lat []time.Duration
			var wg sync.WaitGroup
			start := time.Now()
			for i := range httpFollowers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 20 {
						t0 := time.Now()
						read(i)
						d := time.Since(t0)
						mu.Lock()
						lat = append(lat, d)
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			report(b, lat, time.Since(start), "req/s")
		}
	}
	b.Run("read/v1-GET-run", func(b *testing.B) {
		reads(b, func(int) {
			status, _, body := s.do("ana", http.MethodGet, "/v1/runs/"+readID, nil)
			if status != http.StatusOK {
				b.Error(status, string(body))
			}
		})
	})
	b.Run("read/mcp-weft_execution", func(b *testing.B) {
		sessions := mcpSessions(httpFollowers, nil)
		reads(b, func(i int) {
			res, err := sessions[i].CallTool(ctx, &sdk.CallToolParams{Name: "weft_execution", Arguments: map[string]any{"id": readID}})
			if err != nil || res.IsError {
				b.Error(err, res)
			}
		})
	})

	// follow starts a run waiting for its review, lets connect set up the followers (it returns
	// when all of them follow), decides the review and returns when each follower has reported
	// through knew.
	n := 0
	follow := func(b *testing.B, connect func(id string, knew func(i int)) (ready func())) {
		for b.Loop() {
			n++
			id := fmt.Sprintf("bench-follow-%d-%d", time.Now().UnixNano(), n)
			status, _, body := s.do("ana", http.MethodPost, "/v1/runs", map[string]any{"workflow": "http-approve", "id": id})
			require.Equal(b, http.StatusCreated, status, string(body))
			require.Eventually(b, func() bool {
				st, err := s.wc.State(ctx, id)
				return err == nil && len(st.PendingReviews) == 1
			}, time.Minute, 20*time.Millisecond)
			var mu sync.Mutex
			at := make([]time.Time, httpFollowers)
			var wg sync.WaitGroup
			wg.Add(httpFollowers)
			ready := connect(id, func(i int) {
				mu.Lock()
				defer mu.Unlock()
				if at[i].IsZero() {
					at[i] = time.Now()
					wg.Done()
				}
			})
			ready()
			t0 := time.Now()
			_, err := s.wc.Review(ctx, id, weftclientDecision("approve"))
			require.NoError(b, err)
			wg.Wait()
			lat := make([]time.Duration, httpFollowers)
			last := time.Duration(0)
			for i, t := range at {
				lat[i] = t.Sub(t0)
				last = max(last, lat[i])
			}
			report(b, lat, last, "deliveries/s")
		}
	}
	b.Run("follow/v1-events", func(b *testing.B) {
		follow(b, func(id string, knew func(i int)) func() {
			var started sync.WaitGroup
			started.Add(httpFollowers)
			for i := range httpFollowers {
				go func() {
					once := false
					s.follow(ctx, "ana", id, "", func(e sseEvent) bool {
						if e.Event == "review_requested" && !once {
							once = true
							started.Done()
						}
						if e.Event == "run_completed" {
							knew(i)
							return true
						}
						return false
					})
				}()
			}
			return started.Wait
		})
	})
	b.Run("follow/mcp-subscribe", func(b *testing.B) {
		var sessions []*sdk.ClientSession
		var mu sync.Mutex
		var knewFn func(i int)
		uri := ""
		sessions = mcpSessions(httpFollowers, func(i int, u string) {
			mu.Lock()
			k, want := knewFn, uri
			mu.Unlock()
			if u != want || k == nil {
				return
			}
			read, err := sessions[i].ReadResource(ctx, &sdk.ReadResourceParams{URI: u})
			if err != nil {
				return
			}
			var st map[string]any
			if json.Unmarshal([]byte(read.Contents[0].Text), &st) == nil && st["status"] == "completed" {
				k(i)
			}
		})
		follow(b, func(id string, knew func(i int)) func() {
			mu.Lock()
			knewFn, uri = knew, "weft://executions/"+id
			mu.Unlock()
			for _, cs := range sessions {
				require.NoError(b, cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "weft://executions/" + id}))
			}
			return func() {}
		})
	})
}

// weftclientDecision is a decision by the operator (nobody authenticated) on a run's one review.
func weftclientDecision(decision string) weftclient.Decision {
	return weftclient.Decision{Decision: decision, Reviewer: "bench"}
}
