// Package toolspec declares every tool a weft workflow step can name: its name, domain, kind, input
// JSON Schema, output shape, MCP annotations, which inputs the tool evaluates itself (per item) and
// how many external calls a step of it makes; and the plain types that cross the activity boundary
// (Result, Usage, the evaluate and blob activities' requests, BlobKey).
//
// It is the single source of truth for those facts. The workflow language (workflows/dsl) validates
// step inputs against these schemas, the worker registers one activity per activity-kind spec, and
// the MCP gateway exposes the same entries. Entry points: All, Lookup, Names and Spec's methods
// (ValidateInputs, Canonical, ...).
//
// The declarations are plain data: this package must not import provider or store clients,
// go.temporal.io/sdk or workflows/.
//
// Files: spec.go (the Spec type and the registry), one file per domain (retrieval.go, embedding.go,
// management.go, utility.go, generate.go, agent.go, memory.go, control.go), and evaluate.go (the
// claim-check and evaluate contracts).
package toolspec
