package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/events"
	"github.com/weftworks/weft/internal/testkit/fakellm"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/worker"
	"github.com/weftworks/weft/workflows/dsl"
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
	require.ElementsMatch(t, []string{"notes__count", "notes__crash", "notes__delete_note", "notes__dump", "notes__lookup", "weft__weft_explain"}, names)

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

// countResults are the answers of the count tool in an agent step's output, in call order.
func countResults(t *testing.T, res *weftv1.RunResult) []string {
	t.Helper()
	var got []string
	for _, c := range res.Output.GetStructValue().AsMap()["toolCalls"].([]any) {
		m := c.(map[string]any)
		if m["tool"] == "mcp:notes/count" {
			got = append(got, strings.Trim(fmt.Sprint(m["result"]), `"`))
		}
	}
	return got
}

// TestStatefulMCPServer: a server declared stateful keeps one process for the run, so its state
// (a counter of the calls it answered) lasts across 10 calls, where a server that is not gets a
// process per call; when the worker holding the session stops, the next call runs in a fresh
// session on the worker that is up, and the run says the server's state is gone.
func TestStatefulMCPServer(t *testing.T) {
	c := dial(t)
	queue := "mcp-stateful"
	notes := buildNotesServer(t)
	var script []fakellm.Reply
	for run := range 2 {
		for i := range 10 {
			script = append(script, fakellm.ToolCall(fmt.Sprintf("r%dc%d", run, i), "notes__count", `{}`))
		}
		script = append(script, fakellm.Text("counted"))
	}
	// The third run: three counts, a delete that waits for approval (the worker is stopped
	// meanwhile), one more count.
	script = append(script,
		fakellm.ToolCall("k1", "notes__count", `{}`), fakellm.ToolCall("k2", "notes__count", `{}`), fakellm.ToolCall("k3", "notes__count", `{}`),
		fakellm.ToolCall("k4", "notes__delete_note", `{"key":"a"}`),
		fakellm.ToolCall("k5", "notes__count", `{}`), fakellm.Text("done"))
	// The fourth: the same with the worker process killed (SIGKILL: nothing reported).
	script = append(script,
		fakellm.ToolCall("j1", "notes__count", `{}`), fakellm.ToolCall("j2", "notes__count", `{}`),
		fakellm.ToolCall("j3", "notes__delete_note", `{"key":"a"}`),
		fakellm.ToolCall("j4", "notes__count", `{}`), fakellm.Text("done"))
	fake := fakellm.New(script...)
	defer fake.Close()
	cfg := activities.Config{OpenAIBaseURL: fake.BaseURL, ChatModel: "m"}
	first, err := worker.New(c, worker.Options{TaskQueue: queue, Config: cfg})
	require.NoError(t, err)
	require.NoError(t, first.Start())
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			first.Stop()
		}
	})
	wc := weftclient.New(c, queue)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	load := func(stateful bool) *dsl.Workflow {
		server := map[string]any{"command": notes}
		if stateful {
			server["stateful"] = true
		}
		b, _ := json.Marshal(map[string]any{"name": "counter", "mcpServers": map[string]any{"notes": server},
			"steps":  []any{map[string]any{"id": "agent", "tool": "agent", "inputs": map[string]any{"prompt": "count", "tools": []any{"mcp:notes"}, "maxIterations": 20}}},
			"output": "{{ agent.output }}"})
		w, err := dsl.Load("counter.json", b)
		require.NoError(t, err)
		return w
	}

	res, err := wc.Run(ctx, load(false), weftclient.StartOptions{ID: "mcp-stateless-1"})
	require.NoError(t, err)
	require.Equal(t, []string{"1", "1", "1", "1", "1", "1", "1", "1", "1", "1"}, countResults(t, res), "a server that is not stateful starts afresh for every call")

	res, err = wc.Run(ctx, load(true), weftclient.StartOptions{ID: "mcp-stateful-1"})
	require.NoError(t, err)
	require.Equal(t, []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}, countResults(t, res), "a stateful server keeps its state across the run's calls")
	// The run ended its session: the server's process was closed with it.
	page, err := wc.Events(ctx, "mcp-stateful-1", 0)
	require.NoError(t, err)
	for _, e := range page.Events {
		require.NotEqual(t, events.MCPSessionLost, e.Type)
	}
	// The session (its id, the worker's signal, the keeper's activities) replays; stored with
	// -update-histories for the workflows package's replay test.
	replayAndStore(t, "mcp-stateful-1", "mcp-stateful-session", historyJSON(t, c, "mcp-stateful-1"))

	run, err := wc.Start(ctx, load(true), weftclient.StartOptions{ID: "mcp-stateful-2"})
	require.NoError(t, err)
	waitForGate(t, wc, run.ID, "agent/k4")
	second, err := worker.New(c, worker.Options{TaskQueue: queue, Config: cfg}) // the worker the run moves to
	require.NoError(t, err)
	require.NoError(t, second.Start())
	t.Cleanup(second.Stop)
	first.Stop() // the worker holding the session (and the server's process) goes away
	stopped = true
	_, err = wc.Review(ctx, run.ID, weftclient.Decision{ID: "agent/k4", Decision: "approve", Reviewer: "ana"})
	require.NoError(t, err)
	res, err = wc.Result(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"1", "2", "3", "1"}, countResults(t, res), "after the worker stopped, a fresh session started the server afresh")
	page, err = wc.Events(ctx, run.ID, 0)
	require.NoError(t, err)
	var lost []events.Event
	for _, e := range page.Events {
		if e.Type == events.MCPSessionLost {
			lost = append(lost, e)
		}
	}
	require.Len(t, lost, 1, "one lost session, said once")
	require.Equal(t, "notes", lost[0].Server)
	require.Contains(t, lost[0].Reason, "what the server held before is gone")
	st, err := wc.State(ctx, run.ID)
	require.NoError(t, err)
	require.Contains(t, strings.Join(st.Steps[0].Warnings, "\n"), "MCP server notes's session")
	replayAndStore(t, run.ID, "mcp-stateful-session-lost", historyJSON(t, c, run.ID))

	// A worker process killed with SIGKILL says nothing: Temporal notices the session's
	// heartbeat stop, and the call waiting for the dead worker runs in a fresh session.
	second.Stop()
	crashed := startCrashWorker(t, queue, &sideEffects{path: filepath.Join(t.TempDir(), "effects.log")},
		"OPENAI_BASE_URL="+fake.BaseURL, "WEFT_CHAT_MODEL=m")
	run, err = wc.Start(ctx, load(true), weftclient.StartOptions{ID: "mcp-stateful-3"})
	require.NoError(t, err)
	waitForGate(t, wc, run.ID, "agent/j3")
	crashed.kill(t)
	startWorkerWithConfig(t, queue, cfg, nil)
	_, err = wc.Review(ctx, run.ID, weftclient.Decision{ID: "agent/j3", Decision: "approve", Reviewer: "ana"})
	require.NoError(t, err)
	res, err = wc.Result(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"1", "2", "1"}, countResults(t, res), "after the kill, a fresh session started the server afresh")
	page, err = wc.Events(ctx, run.ID, 0)
	require.NoError(t, err)
	lost = lost[:0]
	for _, e := range page.Events {
		if e.Type == events.MCPSessionLost {
			lost = append(lost, e)
		}
	}
	require.Len(t, lost, 1, "the kill is said once")
}
