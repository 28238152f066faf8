package integration

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/internal/fakellm"
)

// buildNotesServer builds testdata/mcpserver, a small stdio MCP server.
func buildNotesServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "notes-mcp")
	cmd := exec.Command("go", "build", "-o", bin, "../testdata/mcpserver")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

// TestAgentWithExternalMCPServers: an agent lists an external server's tools from an activity and
// calls them, each call its own activity; the destructive tool waits for approval by default; a
// 5 MB result goes back to the model as an error; weft's own gateway (weft mcp over stdio) serves
// as a server too; a server that does not exist fails the step clearly.
func TestAgentWithExternalMCPServers(t *testing.T) {
	c := dial(t)
	queue := "agent-mcp"
	notes := buildNotesServer(t)
	deleted := filepath.Join(t.TempDir(), "deleted")
	self, err := os.Executable()
	require.NoError(t, err)
	fake := fakellm.New(
		fakellm.ToolCall("c1", "notes__lookup", `{"key":"a"}`),
		fakellm.ToolCall("c2", "notes__delete_note", `{"key":"a"}`),
		fakellm.ToolCall("c3", "notes__dump", `{}`),
		fakellm.ToolCall("c4", "weft__weft_explain", `{"topic":"durability"}`),
		fakellm.Text("done"),
	)
	defer fake.Close()
	startWorkerWithConfig(t, queue, activities.Config{OpenAIBaseURL: fake.BaseURL, ChatModel: "m"}, nil)
	def := map[string]any{
		"name": "mcp-agent",
		"mcpServers": map[string]any{
			"notes": map[string]any{"command": notes, "env": map[string]any{"NOTES_DELETED": deleted}},
			"weft":  map[string]any{"command": self, "args": []any{"-test.run=^$"}, "env": map[string]any{"WEFT_AS_MCP_SERVER": "1"}, "trust": true},
		},
		"steps":  []any{map[string]any{"id": "agent", "tool": "agent", "inputs": map[string]any{"prompt": "tidy the notes", "tools": []any{"mcp:notes", "mcp:weft/weft_explain"}}}},
		"output": "{{ agent.output }}",
	}
	b, _ := json.Marshal(def)
	file := filepath.Join(t.TempDir(), "mcp-agent.json")
	require.NoError(t, os.WriteFile(file, b, 0o644))
	code, _, errOut := weft(t, queue, "run", file, "--id", "mcp-agent-1", "--detach")
	require.Equal(t, 0, code, errOut)
	wc := weftclient.New(c, queue)
	gate := waitForGate(t, wc, "mcp-agent-1", "agent/c2")
	require.Equal(t, "mcp:notes/delete_note", gate.Tool, "a destructive tool of an untrusted server waits for approval")
	_, err = os.Stat(deleted)
	require.True(t, os.IsNotExist(err), "nothing deleted before the approval")
	_, err = wc.Review(context.Background(), "mcp-agent-1", weftclient.Decision{ID: "agent/c2", Decision: "approve", Reviewer: "ana"})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := wc.Result(ctx, "mcp-agent-1")
	require.NoError(t, err)
	got, err := os.ReadFile(deleted)
	require.NoError(t, err)
	require.Equal(t, "a", string(got))

	out := res.Output.GetStructValue().AsMap()
	calls := out["toolCalls"].([]any)
	require.Len(t, calls, 4)
	byTool := map[string]map[string]any{}
	for _, c := range calls {
		m := c.(map[string]any)
		byTool[m["tool"].(string)] = m
	}
	require.Equal(t, `"alpha note"`, byTool["mcp:notes/lookup"]["result"])
	require.Contains(t, byTool["mcp:notes/dump"]["error"], "more than 1024 KiB")
	require.Contains(t, byTool["mcp:weft/weft_explain"]["result"], "Durability", "weft's own gateway answered over stdio")
	offered := fake.Requests()[0].Tools
	var names []string
	for _, tl := range offered {
		names = append(names, tl["function"].(map[string]any)["name"].(string))
	}
	require.ElementsMatch(t, []string{"notes__delete_note", "notes__dump", "notes__lookup", "weft__weft_explain"}, names)

	// A server whose command does not exist: the step fails at once, saying what to fix.
	def["mcpServers"] = map[string]any{"notes": map[string]any{"command": "/nonexistent/notes-mcp"}}
	def["steps"] = []any{map[string]any{"id": "agent", "tool": "agent", "inputs": map[string]any{"prompt": "x", "tools": []any{"mcp:notes"}}}}
	b, _ = json.Marshal(def)
	require.NoError(t, os.WriteFile(file, b, 0o644))
	code, stdout, errOut := weft(t, queue, "run", file)
	require.Equal(t, 1, code)
	require.Contains(t, stdout+errOut, `command "/nonexistent/notes-mcp" not found on the worker`)
	require.Equal(t, 1, strings.Count(stdout+errOut, "not found on the worker"), "the cause is shown once: %s", stdout+errOut)
	require.False(t, strings.Contains(errOut, "attempt"), errOut)
}

// TestChatWithMCPServer: weft chat --mcp NAME=COMMAND offers the server's tools to the chat.
func TestChatWithMCPServer(t *testing.T) {
	queue := "chat-mcp-server"
	notes := buildNotesServer(t)
	fake := fakellm.New(fakellm.ToolCall("c1", "notes__lookup", `{"key":"b"}`), fakellm.Text("The note says beta."))
	defer fake.Close()
	startWorkerWithConfig(t, queue, activities.Config{OpenAIBaseURL: fake.BaseURL, ChatModel: "m"}, nil)
	code, out, errOut := weftIn(t, queue, "what does note b say?\n/tools\n", "chat", "--session", "chat-mcp-server-1", "--tools", "search", "--mcp", "notes="+notes)
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "The note says beta.")
	require.Contains(t, out, "mcp:notes/lookup")
	require.Contains(t, out, "beta note")
}
