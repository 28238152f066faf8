// Package mcp is weft's MCP gateway behind `weft mcp` (github.com/mark3labs/mcp-go): the
// knowledge tools of activities/toolspec under the weft_ prefix, tools to start, inspect, review
// and cancel durable executions, and workflows exposed as their own tools (wf_<name>). It is a
// Temporal client plus the tool registry and holds no run state: read-only knowledge tools run
// in the gateway, everything that changes data runs as a durable execution on the workers.
// Transports: stdio and streamable HTTP (bearer keys, /health).
package mcp
