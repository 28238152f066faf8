// Package dsl is weft's workflow language: the file format (step format, and the nodes+edges
// Flow format it converts), parsing with line:col positions, the two dialects (weft's, strict,
// and vai's, read as leniently as vai reads it), validation against the file's JSON Schema and
// each tool's input schema (activities/toolspec), typed references into steps' declared outputs,
// reference and cycle checks, the dependency graph, plans, input coercion and a Go builder API.
//
// Load returns a *Workflow with every template and expression compiled, or Diagnostics holding
// every problem at once, each printed as FILE:LINE:COL: where: what (hint).
//
// Compiling a step is its tool's schema check plus, for the tools whose steps need more, its
// kind: a stepKind value (kinds.go) registered by the kind's own file for the tool's
// declaration, that compiles the step, says whether it may wait for a person (MayWait) and
// counts a plan's calls per item. A tool without one is a plain tool call. The kind files:
// kind_agent.go (agent and llm: tool and approve names, instructions; agent_config.go parses an
// agent's stopWhen, guardrails and handoffs), kind_code.go (code_index: path or repo),
// kind_conditional.go, kind_filter.go, kind_loop.go (the nested step; the plan per item),
// kind_review.go (may wait), kind_template.go, kind_transform.go and kind_workflow.go (the called
// workflow's name).
//
// A kind decodes its settings once, into the tool's typed input (CompiledStep.Input, read with
// TypedInput), and whatever else it compiles is its compiled value, CompiledStep.Compiled: a
// type declared in the kind's file with the accessor the interpreter reads it through,
// FilterCompiled (cs.Filter) and ConditionalCompiled (cs.Conditional) holding a condition,
// TransformCompiled (cs.Transform) a template, NestedStep (cs.Nested) a loop's step and
// AgentCompiled (cs.Agent) an agent's instructions and parsed configuration. Each says which
// references it makes (CompiledRefs: the step's dependencies). The run side of each kind is in
// workflows (step_*.go) and workflows/datatools, tied by the tool's declaration: this package
// must not link the interpreter (internal/layers). A new step kind: docs/maintainers.md.
//
// The package does no I/O besides ReadFile and LoadFile and imports neither go.temporal.io nor
// provider clients; the interpreter (workflows) calls it inside workflow code, where its output
// must be deterministic: maps are walked in sorted key order.
//
// Files: types.go (the Definition: field order and JSON names are the file format), source.go
// and decode.go (reading a file), diag.go (diagnostics), dialect.go and vai_*.go (vai's dialect:
// its field names, defaults and data-tool semantics), workflow.go (Load and the compiler),
// kinds.go and kind_*.go (the kinds and their compiled values), agent_config.go (an agent's
// stopWhen, guardrails and handoffs), output_refs.go (references checked against
// declared outputs), calls.go (what workflow steps give the workflows they call), check.go and
// schema.go (JSON Schema checks and `weft schema`), inputs.go (coercion of --input values),
// policy.go (timeouts and retries), notify.go (the file's notify list), plan.go, flow.go,
// builder.go (the Go builder; ToJSON/FromJSON round-trip), cache.go (Load memoised for the
// interpreter).
package dsl
