// Package activities will hold weft's tool activities: one file per domain (retrieval.go,
// embedding.go, management.go, utility.go, generate.go), each handler implementing the tool
// declared under the same name in activities/toolspec, and provider/store clients in
// subpackages (voyage, openai-compatible, local embedder, mongo) that never import Temporal.
//
// The declarations already exist (activities/toolspec) and the language validates against them;
// the handlers arrive with the knowledge-tools issue. This package must never import workflows/
// or go.temporal.io/sdk/workflow.
package activities
