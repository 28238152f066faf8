// Package metrics exposes Prometheus metrics of a weft process on /metrics: the Temporal SDK's own
// (workflow and activity task latencies, polls, failures: the SDK's metrics handler interface
// implemented on the Prometheus client) and weft's (tool calls by tool and status, their duration,
// tokens and cost). `weft worker`, `weft dev` and `weft mcp` serve it when given --metrics ADDR.
//
// Entry points: New, then Metrics' SDK (client.Options.MetricsHandler), ToolCall (the activity
// adapter's observer, wired by worker/), Handler and Serve.
//
// It records what it is told: it must not import workflows/, activities/ or client/ (tool usage
// comes in as activities/toolspec's Usage, a plain type).
package metrics
