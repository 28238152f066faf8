// Package dsl is weft's workflow language: the file format (step format, and the nodes+edges
// Flow format it converts), parsing with line:col positions, validation against the file's JSON
// Schema and each tool's input schema (activities/toolspec), reference and cycle checks, the
// dependency graph, plans, input coercion and a Go builder API.
//
// Load returns a *Workflow with every template and expression compiled, or Diagnostics holding
// every problem at once, each printed as FILE:LINE:COL: where: what (hint).
//
// The package does no I/O besides ReadFile and LoadFile and imports neither go.temporal.io nor
// provider clients; the interpreter (workflows) calls it inside workflow code, where its output
// must be deterministic: maps are walked in sorted key order.
package dsl
