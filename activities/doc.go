// Package activities turns tool handlers into Temporal activities. Every tool declared in
// activities/toolspec is registered under its own name through one adapter (Activity) that
// validates the inputs against the tool's schema, runs the handler and returns a
// toolspec.Result with the attempt number and usage.
//
// Handlers live one file per domain (retrieval.go, embedding.go, management.go, utility.go,
// generate.go) with provider/store clients in subpackages that never import Temporal. Tools
// whose handler is not built yet fail with a clear, non-retryable error instead of hanging.
// This package must never import workflows/ or go.temporal.io/sdk/workflow.
package activities
