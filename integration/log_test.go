package integration

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/weftworks/weft/activities"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
)

func quiet() tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// syncBuffer is a bytes.Buffer safe for the worker's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestWorkerLogsToolCallsAsJSON: with a JSON logger (weft worker --log-format json) every tool call
// is one line carrying the run's workflow and run ids and the activity id, which names the step.
func TestWorkerLogsToolCallsAsJSON(t *testing.T) {
	var buf syncBuffer
	c, err := client.Dial(client.Options{HostPort: server.Address, Namespace: server.Namespace,
		Logger: tlog.NewStructuredLogger(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))})
	require.NoError(t, err)
	defer c.Close()
	queue := "json-logs"
	startWorker(t, c, queue, map[string]activities.Handler{"embed": noop})
	code, out, errOut := weft(t, queue, "run", writeTemp(t, `{"name":"logged","steps":[{"id":"vec","tool":"embed","inputs":{"text":"x"}}]}`), "--id", "logged-1")
	require.Equal(t, 0, code, out+errOut)
	var line map[string]any
	require.Eventually(t, func() bool {
		for _, l := range strings.Split(buf.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "tool call" {
				line = m
				return true
			}
		}
		return false
	}, 10*time.Second, 50*time.Millisecond)
	require.Equal(t, "embed", line["tool"])
	require.Equal(t, "logged-1", line["WorkflowID"])
	require.Equal(t, "vec#1", line["ActivityID"], "the activity id names the step")
	require.NotEmpty(t, line["RunID"])
}
