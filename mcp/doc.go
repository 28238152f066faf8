// Package mcp is weft's MCP gateway behind `weft mcp` (github.com/mark3labs/mcp-go): the knowledge
// tools of activities/toolspec under the weft_ prefix, tools to start, inspect, review, retry,
// schedule and cancel durable executions and to chat, workflows exposed as their own tools
// (wf_<name>, named after each workflow's name), resources (weft://executions/{id} can be
// subscribed to: subscribe.go), prompts and completions (prompts.go), and progress and log
// notifications of the runs a tool call waits for (progress.go).
//
// Entry points: New (Options), then Gateway's ServeStdio or HTTPHandler (streamable HTTP with
// auth's bearer keys or OAuth tokens, roles, the host guard, sessions bound to their key and kept
// in the knowledge store when there is one, so they survive a restart (sessions.go), /health),
// and WatchWorkflows.
//
// It holds no run state: every operation on runs goes through client/ (it must not talk to Temporal
// about runs on its own, nor run workflow code). Read-only knowledge tools run in the gateway
// through the same handlers the worker uses (so it is given the provider settings); everything that
// changes data runs as a durable execution on the workers. A caller's identity and roles (roles.go)
// decide what it may do; a definition it sends is data, checked like any other.
package mcp
