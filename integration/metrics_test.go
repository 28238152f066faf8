package integration

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/weftworks/weft/metrics"
	"github.com/weftworks/weft/worker"
)

// TestMetrics: a worker with metrics counts tool calls by tool and status and their duration,
// and exposes the Temporal SDK's own metrics, on /metrics.
func TestMetrics(t *testing.T) {
	m := metrics.New()
	c, err := client.Dial(client.Options{HostPort: server.Address, Namespace: server.Namespace, Logger: quiet(), MetricsHandler: m.SDK()})
	require.NoError(t, err)
	defer c.Close()
	queue := "metrics"
	w, err := worker.New(c, worker.Options{TaskQueue: queue, Handlers: fakeHandlers(nil), Metrics: m})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	defer w.Stop()
	code, out, errOut := weft(t, queue, "run", "multi-collection-search", "--input", "query=limits", "--quiet")
	require.Equal(t, 0, code, out+errOut)

	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	var body string
	require.Eventually(t, func() bool {
		resp, err := srv.Client().Get(srv.URL)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return strings.Contains(body, `weft_tool_calls_total{status="completed",tool="rerank"} 1`)
	}, 10*time.Second, 50*time.Millisecond)
	for _, want := range []string{
		`weft_tool_calls_total{status="completed",tool="query"} 2`,
		`weft_tool_duration_seconds_bucket{tool="query"`,
		`temporal_activity_execution_latency_seconds_count{activity_type="rerank"`, // the SDK's own
	} {
		require.True(t, strings.Contains(body, want), "/metrics lacks %s", want)
	}
}
