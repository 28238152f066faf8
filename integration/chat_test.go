package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpclient "github.com/mark3labs/mcp-go/client"
	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/internal/testkit/fakellm"
	"github.com/weftworks/weft/mcp"
	"github.com/weftworks/weft/worker"
	"github.com/weftworks/weft/workflows/dsl"
)

// TestChatEndToEnd scripts `weft chat` the way a person pipes it: a turn that searches and
// compares, an exported workflow that validates and makes the same calls when run, a fact
// remembered, the worker replaced between turns, and the fact recalled in a new session.
func TestChatEndToEnd(t *testing.T) {
	c := dial(t)
	queue := "chat-e2e"
	db := "chat_e2e"
	question := "what do the docs say about retries?"
	tools := activities.NewTools(activities.Config{MongoDBURI: store.URI})
	for i, text := range []string{"Failed calls are retried with exponential backoff, five attempts at most.", "Invoices are sent monthly by email."} {
		_, _, err := tools.Handlers()["ingest"](context.Background(), map[string]any{"text": text, "source": fmt.Sprintf("doc%d.md", i), "db": db, "collection": "docs"})
		require.NoError(t, err)
	}
	firstHit, _, err := tools.Handlers()["search"](context.Background(), map[string]any{"query": question, "db": db, "collection": "docs", "limit": 2})
	require.NoError(t, err)
	content := firstHit.(map[string]any)["results"].([]any)[0].(map[string]any)["content"].(string)

	fake := fakellm.New(
		fakellm.ToolCall("c1", "search", fmt.Sprintf(`{"query":%q,"limit":2}`, question)),
		fakellm.ToolCall("c2", "similarity", fmt.Sprintf(`{"text1":%q,"text2":"retry with backoff"}`, content)),
		fakellm.Text("They are retried with exponential backoff."),
		fakellm.ToolCall("c3", "remember", `{"scope":"user:ana","text":"Ana prefers short answers."}`),
		fakellm.Text("Noted."),
		fakellm.ToolCall("c4", "recall", `{"scope":"user:ana","query":"what does Ana prefer?"}`),
		fakellm.Text("You prefer short answers."),
	)
	defer fake.Close()
	cfg := activities.Config{MongoDBURI: store.URI, OpenAIBaseURL: fake.BaseURL, ChatModel: "gpt-4o-mini", Database: db}
	w, err := worker.New(c, worker.Options{TaskQueue: queue, Config: cfg})
	require.NoError(t, err)
	require.NoError(t, w.Start())

	dir := t.TempDir()
	export := filepath.Join(dir, "retries.weft.json")
	in := strings.Join([]string{question, "/tools", "/export-workflow " + export, "/usage", "/exit"}, "\n")
	code, out, errOut := weftIn(t, queue, in, "chat", "--session", "chat-e2e-1", "--db", db, "--collection", "docs", "--tools", "search,similarity", "--memory", "user:ana")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "They are retried with exponential backoff.")
	require.Contains(t, out, "#1 search")
	require.Contains(t, out, "#2 similarity")
	require.Contains(t, out, "Wrote "+export+" (2 steps)")
	require.Contains(t, out, "1 turns: 45 tokens")

	// The exported file validates, reads the question as an input and chains the calls.
	wf, err := dsl.LoadFile(export)
	require.NoError(t, err, "the exported workflow validates")
	require.Equal(t, question, wf.Def.Inputs["question"].Default)
	require.Equal(t, "{{ inputs.question }}", wf.Steps[0].Inputs["query"])
	require.Equal(t, "{{ search_1.output.results[0].content }}", wf.Steps[1].Inputs["text1"])
	code, out, errOut = weft(t, queue, "run", export, "--json")
	require.Equal(t, 0, code, out+errOut)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	session, err := weftclient.New(c, queue).ChatSession(context.Background(), "chat-e2e-1")
	require.NoError(t, err)
	chatSimilarity := session.Turns[0].ToolCalls[1].(map[string]any)["result"].(string)
	replayed, _ := json.Marshal(res["output"].(map[string]any)["similarity_1"])
	require.JSONEq(t, chatSimilarity, string(replayed), "the exported run made the same calls with the same results")

	// The second turn is served by a worker process, which is then killed with SIGKILL; the
	// session goes on with a new worker, its conversation intact, no model call made again.
	w.Stop()
	se := &sideEffects{path: filepath.Join(t.TempDir(), "effects.log")}
	proc := startCrashWorker(t, queue, se, "MONGODB_URI="+store.URI, "OPENAI_BASE_URL="+fake.BaseURL, "WEFT_CHAT_MODEL=gpt-4o-mini", "WEFT_DB="+db)
	code, out, errOut = weftIn(t, queue, "remember that I prefer short answers\n", "chat", "--session", "chat-e2e-1", "--model", "gpt-4o")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "Resumed chat session chat-e2e-1")
	require.Contains(t, errOut, "session chat-e2e-1 goes on with the settings it started with; --model apply to new sessions only")
	require.Contains(t, out, "Noted.")
	require.Equal(t, 5, fake.Count())
	reqs := fake.Requests()
	require.Len(t, reqs[3].Messages, 8, "the new turn carried the first: system, question, two calls and their results, the answer, the new message")
	require.Equal(t, "gpt-4o-mini", reqs[3].Model, "the resumed session keeps its model: --model was for a new one")
	proc.kill(t)
	w, err = worker.New(c, worker.Options{TaskQueue: queue, Config: cfg})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	defer w.Stop()
	code, out, errOut = weftIn(t, queue, "/usage\n", "chat", "--session", "chat-e2e-1")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "2 turns:", "the session survived the kill: %s", errOut)
	require.Equal(t, 5, fake.Count(), "no model call was made again")

	// A new session with the same memory scope recalls the fact.
	code, out, errOut = weftIn(t, queue, "what do I prefer?\n", "chat", "--session", "chat-e2e-2", "--db", db, "--memory", "user:ana", "--tools", "search")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "You prefer short answers.")
	recalled := fake.Requests()[6].Messages
	require.Contains(t, recalled[len(recalled)-1]["content"], "Ana prefers short answers.")

	code, out, _ = weft(t, queue, "chat", "--list")
	require.Equal(t, 0, code)
	require.Contains(t, out, "chat-e2e-1")
	require.Contains(t, out, "chat-e2e-2")
	code, out, errOut = weftEnv(t, map[string]string{"MONGODB_URI": store.URI}, "memory", "list", "user:ana", "--db", db)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Ana prefers short answers.")

	// Bad input: export before any turn, an odd scope.
	code, out, errOut = weftIn(t, queue, "/export-workflow\n", "chat", "--session", "chat-e2e-3")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, errOut, "nothing to export yet")
	code, _, errOut = weftEnv(t, nil, "memory", "list", "ana smith!")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `scope "ana smith!"`)
	_ = os.Remove(export)
}

// TestChatContinuesAsNew: a session of 150 turns continues as new every 50 turns (the default)
// and keeps its conversation, turn numbers and usage, the conversation carried cut to the last
// 200 messages. 150 turns, not 500 (75 s): a multiple of 50 past the cut, so the same
// continuations, cut and checks, in a third of the turns.
func TestChatContinuesAsNew(t *testing.T) {
	if testing.Short() {
		t.Skip("150 turns")
	}
	const turns = 150
	c := dial(t)
	queue := "chat-long"
	startWorker(t, c, queue, map[string]activities.Handler{"llm": chatLLM, "search": fakeSearch})
	wc := weftclient.New(c, queue)
	id := "chat-long-1"
	_, _, err := wc.StartChat(context.Background(), id, weftclient.ChatOptions{Tools: []string{"search"}, Collection: "docs"})
	require.NoError(t, err)
	var last string
	for i := 1; i <= turns; i++ {
		turn, err := wc.Send(context.Background(), id, fmt.Sprintf("question %d", i), "")
		require.NoError(t, err, "turn %d", i)
		require.Equal(t, i, turn.N)
		last = turn.Answer
	}
	s, err := wc.ChatSession(context.Background(), id)
	require.NoError(t, err)
	require.GreaterOrEqual(t, s.Continued, turns/50-1, "continued as new every 50 turns")
	require.EqualValues(t, turns*2*12, s.Usage.TotalTokens, "usage of every turn, across runs")
	require.LessOrEqual(t, len(s.Messages), 204, "the carried conversation is bounded")
	require.NotEqual(t, "answer 1", last, "the model still sees earlier turns after continuing")
	t.Logf("%d turns: %d runs, %d messages carried, last answer %q", turns, s.Continued+1, len(s.Messages), last)
}

// TestChatOverMCP: the same session workflow through the gateway: start, send, read.
func TestChatOverMCP(t *testing.T) {
	c := dial(t)
	queue := "chat-mcp"
	startWorker(t, c, queue, map[string]activities.Handler{"llm": chatLLM, "search": fakeSearch})
	g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: server.Address, Namespace: server.Namespace, TaskQueue: queue, NoBuiltins: true})
	mc, err := mcpclient.NewInProcessClient(g.Server())
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, mc.Start(ctx))
	defer mc.Close()
	_, err = mc.Initialize(ctx, mcplib.InitializeRequest{})
	require.NoError(t, err)
	call := func(name string, args map[string]any) map[string]any {
		req := mcplib.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, args
		res, err := mc.CallTool(ctx, req)
		require.NoError(t, err)
		require.False(t, res.IsError, "%s: %v", name, res.Content)
		out, _ := res.StructuredContent.(map[string]any)
		if out == nil {
			b, _ := json.Marshal(res.StructuredContent)
			require.NoError(t, json.Unmarshal(b, &out))
		}
		return out
	}
	started := call("weft_chat_start", map[string]any{"session": "chat-mcp-1", "tools": []any{"search"}, "collection": "docs"})
	require.Equal(t, "chat-mcp-1", started["session"])
	turn := call("weft_chat_send", map[string]any{"session": "chat-mcp-1", "text": "hello"})
	require.Equal(t, "answer 1", turn["answer"])
	read := call("weft_chat_read", map[string]any{"session": "chat-mcp-1"})
	require.Len(t, read["turns"], 1)
}

// TestScriptedChatExitsOneWhenATurnFails: `echo question | weft chat` is a script; a turn that
// fails (here: no model configured on the worker) makes it exit 1, and --json prints the error.
func TestScriptedChatExitsOneWhenATurnFails(t *testing.T) {
	c := dial(t)
	queue := "chat-no-llm"
	startWorker(t, c, queue, nil)
	code, out, errOut := weftIn(t, queue, "what is the rate limit?\n", "chat", "--session", "chat-no-llm-1", "--json")
	require.Equal(t, 1, code, out+errOut)
	require.Contains(t, errOut, "no LLM configured on this worker")
	require.Contains(t, out, `"error":`)
	_, _, _ = weft(t, "", "cancel", "chat-no-llm-1")
}
