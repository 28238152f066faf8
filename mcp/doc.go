// Package mcp will be the MCP gateway behind `weft mcp` (mark3labs/mcp-go): the tools of
// activities/toolspec under the weft_ prefix plus execution tools, over stdio and streamable HTTP.
// It is a Temporal client only and holds no run state. It arrives with the MCP gateway issue.
package mcp
