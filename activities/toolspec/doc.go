// Package toolspec declares every tool a weft workflow step can name: its name, domain, kind,
// input JSON Schema, output shape, MCP annotations, which inputs the tool evaluates itself
// (per item) and how many external calls a step of it makes.
//
// It is the single source of truth for those facts. The workflow language (workflows/dsl)
// validates step inputs against these schemas, the worker registers one activity per
// activity-kind spec, and the MCP gateway exposes the same entries. The declarations are plain
// data: this package must not import provider or store clients, go.temporal.io/sdk or workflows/.
//
// One file per domain: retrieval.go, embedding.go, management.go, utility.go, generate.go,
// control.go.
package toolspec
