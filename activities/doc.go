// Package activities turns tool handlers into Temporal activities. Every activity tool declared in
// activities/toolspec is registered under its own name through one adapter (Activity) that resolves
// claim-checked inputs, validates the inputs against the tool's schema, runs the handler,
// heartbeats while it runs, keeps large outputs in the knowledge store instead of history, and
// returns a toolspec.Result with the attempt number and usage. Handler errors become activity
// errors that say whether to retry: InputError and ConfigError never are, a retryable
// provider.Error is, after its Retry-After.
//
// Entry points: ConfigFromEnv and NewTools (the provider clients, built once from Config, the only
// settings that hold credentials), Tools.Handlers (the implemented tools by name), Handlers (pairs
// every activity tool the registry declares with its handler: a declared tool without one, or a
// handler for an undeclared tool, is an error when the worker is built, not when a run calls it),
// Activity, and the extra activities the interpreter calls (MCPList, MCPCall, StoreValues,
// Evaluate).
//
// Handlers live one file per domain (retrieval.go, embedding.go, management.go, utility.go,
// generate.go, llm.go, http.go, memory.go, mcptools.go), with provider and store clients in
// subpackages that never import Temporal. This package must never import workflows/ or
// go.temporal.io/sdk/workflow (the interpreter's Evaluate comes in as a function value); it uses
// only the activity side of the SDK.
package activities
