// Package dsl is weft's workflow language: the file format (step format, and the nodes+edges
// Flow format it converts), parsing with line:col positions, the two dialects (weft's, strict,
// and vai's, read as leniently as vai reads it), validation against the file's JSON Schema and
// each tool's input schema (activities/toolspec), typed references into steps' declared outputs,
// reference and cycle checks, the dependency graph, plans, input coercion and a Go builder API.
//
// Load returns a *Workflow with every template and expression compiled, or Diagnostics holding
// every problem at once, each printed as FILE:LINE:COL: where: what (hint).
//
// Compiling a step is its tool's schema check plus, for the tools whose steps need more, the
// compile function of its kind: kinds.go holds the table, keyed by the tool's declaration, and
// each kind_*.go registers one (agent and llm, the code tools, conditional, filter, loop,
// transform, workflow). A tool without an entry is a plain tool call. A new step kind is a
// kind_NAME.go here and its step_NAME.go in workflows (docs/maintainers.md).
//
// The package does no I/O besides ReadFile and LoadFile and imports neither go.temporal.io nor
// provider clients; the interpreter (workflows) calls it inside workflow code, where its output
// must be deterministic: maps are walked in sorted key order.
//
// Files: types.go (the Definition: field order and JSON names are the file format), source.go
// and decode.go (reading a file), diag.go (diagnostics), dialect.go and vai_*.go (vai's dialect:
// its field names, defaults and data-tool semantics), workflow.go (Load and the compiler),
// kinds.go and kind_*.go (per-kind compiling), output_refs.go (references checked against
// declared outputs), calls.go (what workflow steps give the workflows they call), check.go and
// schema.go (JSON Schema checks and `weft schema`), inputs.go (coercion of --input values),
// policy.go (timeouts and retries), notify.go (the file's notify list), plan.go, flow.go,
// builder.go (the Go builder; ToJSON/FromJSON round-trip), cache.go (Load memoised for the
// interpreter).
package dsl
