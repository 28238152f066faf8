package integration

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.temporal.io/sdk/interceptor"

	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/tracing"
	"github.com/weftworks/weft/worker"
	"github.com/weftworks/weft/workflows/dsl"
)

// TestTracing: with the tracing interceptor (OTEL_EXPORTER_OTLP_ENDPOINT turns it on in every
// weft process), starting a run, the run and each tool call are spans of one trace.
func TestTracing(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	i, err := tracing.Interceptor(tp)
	require.NoError(t, err)
	c, err := weftclient.Dial(context.Background(), weftclient.Options{Address: server.Address, Namespace: server.Namespace,
		TaskQueue: "traced", Interceptors: []interceptor.ClientInterceptor{i}})
	require.NoError(t, err)
	defer c.Close()
	w, err := worker.New(c.Temporal(), worker.Options{TaskQueue: "traced", Handlers: map[string]activities.Handler{"embed": noop}})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	defer w.Stop()
	wf, err := dsl.Load("traced.json", []byte(`{"name":"traced","steps":[
	  {"id":"a","tool":"embed","inputs":{"text":"x"}},{"id":"b","tool":"embed","inputs":{"text":"{{ a.output.text }}"}}]}`))
	require.NoError(t, err)
	_, err = c.Run(context.Background(), wf, weftclient.StartOptions{Source: "traced"})
	require.NoError(t, err)
	require.NoError(t, tp.ForceFlush(context.Background()))
	names := map[string]int{}
	traces := map[string]bool{}
	for _, s := range rec.Ended() {
		names[s.Name()]++
		traces[s.SpanContext().TraceID().String()] = true
	}
	require.Equal(t, 1, names["StartWorkflow:weft"], "%v", names)
	require.GreaterOrEqual(t, names["RunWorkflow:weft"], 1, "%v", names)
	require.Equal(t, 2, names["RunActivity:embed"], "one span per tool call: %v", names)
	require.Len(t, traces, 1, "one trace from the start to the last tool call")
}
