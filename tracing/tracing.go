package tracing

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
)

// Configured reports whether the environment asks for traces.
func Configured(getenv func(string) string) bool {
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// FromEnv returns the tracing interceptor exporting over OTLP/gRPC as the standard OTEL_*
// variables say, and the function that flushes and stops the exporter; nil, nil when tracing is
// not configured. service names the process (weft-worker, weft-mcp, ...) unless OTEL_SERVICE_NAME
// is set.
func FromEnv(ctx context.Context, service string, getenv func(string) string) (interceptor.Interceptor, func(context.Context) error, error) {
	if !Configured(getenv) {
		return nil, nil, nil
	}
	exp, err := otlptracegrpc.New(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("tracing (OTEL_EXPORTER_OTLP_ENDPOINT): %w", err)
	}
	if s := getenv("OTEL_SERVICE_NAME"); s != "" {
		service = s
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName(service))))
	i, err := Interceptor(tp)
	if err != nil {
		return nil, nil, err
	}
	return i, tp.Shutdown, nil
}

// Interceptor is the SDK's tracing interceptor on tp.
func Interceptor(tp trace.TracerProvider) (interceptor.Interceptor, error) {
	return temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{Tracer: tp.Tracer("weft")})
}
