// Package worker wires a Temporal worker for weft: the interpreter's workflows (workflows.Run
// registered as "weft", the chat session and the forEach batch), one activity per tool
// (activities.Activity over activities.Handlers, with the claim check and metrics), and the
// activities the interpreter calls besides tools (the external MCP operations, storing values,
// evaluating templates over stored values).
//
// Entry point: New (a Temporal client and Options) returns the worker, not started, or an error
// naming the tools whose declaration and handler do not pair up. It holds no logic of its own and
// reads no environment: `weft worker` and `weft dev` (starter) read the provider settings with
// activities.ConfigFromEnv and pass them in Options.Config; tests pass their own Handlers.
package worker
