// Package tracing turns on OpenTelemetry tracing of weft's Temporal calls through the SDK's tracing
// interceptor: starting a run, the workflow, each activity (one span per tool call), with the trace
// carried across processes in Temporal's headers. Off unless configured with the standard
// OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).
//
// Entry points: Configured, FromEnv (the interceptor exporting over OTLP/gRPC and its shutdown
// function) and Interceptor (on a given TracerProvider, for tests).
//
// It builds an interceptor and nothing else: it must not import client/, workflows/ or activities/;
// starter passes the interceptor to the client and the worker.
package tracing
