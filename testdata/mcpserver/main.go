// Command mcpserver is a small MCP server over stdio for weft's tests: a notes store with a
// read-only lookup, a destructive delete, a tool whose result is too large to keep, a counter of
// the calls this process has answered (what a stateful server keeps between calls), and a crash.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	notes := map[string]string{"a": "alpha note", "b": "beta note"}
	s := server.NewMCPServer("notes", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("lookup", mcp.WithDescription("Read a note by key"),
		mcp.WithString("key", mcp.Required(), mcp.Description("the note's key")),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			key := req.GetString("key", "")
			n, ok := notes[key]
			if !ok {
				return mcp.NewToolResultError("no note " + key), nil
			}
			return mcp.NewToolResultText(n), nil
		})
	s.AddTool(mcp.NewTool("delete_note", mcp.WithDescription("Delete a note"),
		mcp.WithString("key", mcp.Required()),
		mcp.WithReadOnlyHintAnnotation(false), mcp.WithDestructiveHintAnnotation(true)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			key := req.GetString("key", "")
			if f := os.Getenv("NOTES_DELETED"); f != "" {
				_ = os.WriteFile(f, []byte(key), 0o644) // the test sees what was deleted
			}
			delete(notes, key)
			return mcp.NewToolResultText("deleted " + key), nil
		})
	s.AddTool(mcp.NewTool("dump", mcp.WithDescription("Everything, 5 MB of it"), mcp.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(strings.Repeat("x", 5<<20)), nil
		})
	var calls atomic.Int64
	s.AddTool(mcp.NewTool("count", mcp.WithDescription("Count the calls of count this server process has answered"),
		mcp.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(strconv.FormatInt(calls.Add(1), 10)), nil
		})
	s.AddTool(mcp.NewTool("crash", mcp.WithDescription("Exit at once, as a server that crashed"), mcp.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			os.Exit(3)
			return nil, nil
		})
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
