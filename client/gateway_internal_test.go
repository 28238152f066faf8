package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/events"
)

// TestGatewayStreamReading: what the gateway sends becomes the events Stream emits: comments are
// skipped, each run event once and in order (a reconnect that sends events again emits none
// twice), llm_delta only without NoDeltas, a child run's reviews (no number) passed on, a
// continued_as_new starting the numbers again, the run's end held for its result; a refused key
// is an error that says what to set.
func TestGatewayStreamReading(t *testing.T) {
	stream := ": following run r\n\n" +
		"id: 1\nevent: run_started\ndata: {\"event\":\"run_started\",\"run\":\"r\",\"seq\":1,\"time\":\"2026-12-03T00:00:00Z\"}\n\n" +
		": still following\n\n" +
		"event: llm_delta\ndata: {\"event\":\"llm_delta\",\"run\":\"r\",\"time\":\"2026-12-03T00:00:00Z\",\"text\":\"hi\"}\n\n" +
		"id: 2\nevent: step_started\ndata: {\"event\":\"step_started\",\"run\":\"r\",\"seq\":2,\"step\":\"a\",\"time\":\"2026-12-03T00:00:00Z\"}\n\n" +
		"id: 1\nevent: run_started\ndata: {\"event\":\"run_started\",\"run\":\"r\",\"seq\":1,\"time\":\"2026-12-03T00:00:00Z\"}\n\n" +
		"event: review_requested\ndata: {\"event\":\"review_requested\",\"run\":\"r\",\"child\":\"k\",\"time\":\"2026-12-03T00:00:00Z\"}\n\n" +
		"event: continued_as_new\ndata: {\"event\":\"continued_as_new\",\"run\":\"r\",\"runId\":\"run-2\",\"time\":\"2026-12-03T00:00:00Z\"}\n\n" +
		"id: 1\nevent: run_started\ndata: {\"event\":\"run_started\",\"run\":\"r\",\"seq\":1,\"time\":\"2026-12-03T00:00:00Z\"}\n\n" +
		"id: 2\nevent: run_completed\ndata: {\"event\":\"run_completed\",\"run\":\"r\",\"seq\":2,\"time\":\"2026-12-03T00:00:00Z\"}\n\n"
	for _, tc := range []struct {
		name     string
		noDeltas bool
		want     []string
	}{
		{"with text", false, []string{"1 run_started", "0 llm_delta", "2 step_started", "0 review_requested", "0 continued_as_new", "1 run_started"}},
		{"no text", true, []string{"1 run_started", "2 step_started", "0 review_requested", "0 continued_as_new", "1 run_started"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			s := &streamer{id: "r", o: StreamOptions{NoDeltas: tc.noDeltas}, fn: func(e events.Event) {
				got = append(got, strconv.FormatInt(e.Seq, 10)+" "+e.Type)
			}}
			require.NoError(t, readSSE(strings.NewReader(stream), func() {}, func(e events.Event) { s.fromGateway(context.Background(), e) }))
			require.Equal(t, tc.want, got)
			require.NotNil(t, s.ended, "the run's end is held for its result")
			require.Equal(t, "run-2", s.runID)
			require.Equal(t, int64(2), s.since)
		})
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "send Authorization: Bearer", http.StatusUnauthorized)
	}))
	defer srv.Close()
	c := &Client{}
	c.FollowThrough(Gateway{URL: srv.URL + "/"})
	err := c.gateway.follow(context.Background(), "r", 0, "", func(events.Event) {})
	require.ErrorIs(t, err, errGatewayRefused)
	require.ErrorContains(t, err, EnvGatewayKey)
	c.FollowThrough(Gateway{})
	require.Nil(t, c.gateway, "an empty URL follows directly again")
}

// TestGatewayStreamIdle: a stream that sends nothing for Idle (not even a heartbeat: the
// gateway's host went away without closing the connection) ends, so that Stream connects again;
// one that keeps sending heartbeats does not.
func TestGatewayStreamIdle(t *testing.T) {
	for _, tc := range []struct {
		name      string
		heartbeat bool
		ends      bool
	}{{"silent", false, true}, {"heartbeats", true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			stop := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write([]byte("id: 1\nevent: run_started\ndata: {\"event\":\"run_started\",\"seq\":1,\"time\":\"2026-12-03T00:00:00Z\"}\n\n"))
				w.(http.Flusher).Flush()
				tick := time.NewTicker(10 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-r.Context().Done():
						return
					case <-stop:
						return
					case <-tick.C:
						if tc.heartbeat {
							_, _ = w.Write([]byte(": still following\n\n"))
							w.(http.Flusher).Flush()
						}
					}
				}
			}))
			defer srv.Close()
			defer close(stop)
			c := &Client{}
			c.FollowThrough(Gateway{URL: srv.URL, Idle: 100 * time.Millisecond})
			ended := make(chan error, 1)
			seen := make(chan events.Event, 1)
			go func() {
				ended <- c.gateway.follow(context.Background(), "r", 0, "", func(e events.Event) { seen <- e })
			}()
			require.Equal(t, int64(1), (<-seen).Seq)
			select {
			case err := <-ended:
				require.True(t, tc.ends, "a stream that keeps sending heartbeats ended: %v", err)
			case <-time.After(5 * 100 * time.Millisecond): // five times Idle
				require.False(t, tc.ends, "a silent stream did not end after Idle")
			}
		})
	}
}
