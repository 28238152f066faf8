package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
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
	"github.com/weftworks/weft/templates"
	"github.com/weftworks/weft/worker"
)

func waitForGate(t *testing.T, c *weftclient.Client, id, gate string) *weftv1.ReviewRequest {
	t.Helper()
	var found *weftv1.ReviewRequest
	require.Eventually(t, func() bool {
		st, err := c.State(context.Background(), id)
		if err != nil {
			return false
		}
		for _, r := range st.PendingReviews {
			if r.Id == gate {
				found = r
				return true
			}
		}
		return false
	}, 30*time.Second, 50*time.Millisecond, "run %s never waited on %s", id, gate)
	return found
}

// TestAgentOnTheEmbeddedStack runs the research-agent template with the real tools on the
// sample corpus (local embedder, embedded FerretDB) and the scripted model over HTTP: it
// searches, asks to ingest a note, a person approves through the CLI, and it answers.
func TestAgentOnTheEmbeddedStack(t *testing.T) {
	c := dial(t)
	queue := "agent-e2e"
	fake := fakellm.New(
		fakellm.ToolCall("c1", "search", `{"query":"what happens when a client exceeds the rate limit","collection":"api_docs","limit":3}`),
		fakellm.ToolCall("c2", "ingest", `{"text":"Over the rate limit the API answers 429 with Retry-After.","source":"notes/rate-limits.md","collection":"agent_notes"}`),
		fakellm.Text("The API answers 429 and says when to retry (api/rate-limits.md)."),
	)
	defer fake.Close()
	cfg := activities.Config{MongoDBURI: store.URI, OpenAIBaseURL: fake.BaseURL, OpenAIAPIKey: "k", ChatModel: "gpt-4o-mini"}
	w, err := worker.New(c, worker.Options{TaskQueue: queue, Config: cfg})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	var docs []map[string]string
	for _, d := range templates.Corpus()["api_docs"] {
		docs = append(docs, map[string]string{"text": d.Text, "source": d.Source})
	}
	b, _ := json.Marshal(docs)
	code, out, errOut := weft(t, queue, "run", "batch-ingest", "--quiet", "--input", "collection=api_docs", "--input", "docs="+string(b))
	require.Equal(t, 0, code, out+errOut)

	code, _, errOut = weft(t, queue, "run", "research-agent", "--detach", "--id", "agent-e2e", "--input", "question=What happens when I exceed the rate limit?")
	require.Equal(t, 0, code, errOut)
	wc := weftclient.New(c, queue)
	gate := waitForGate(t, wc, "agent-e2e", "agent/c2")
	require.Equal(t, "tool_call", gate.Kind)
	require.Equal(t, "ingest", gate.Tool)
	require.Equal(t, "notes/rate-limits.md", gate.Data.GetStructValue().AsMap()["source"])

	require.Eventually(t, func() bool { // visibility (WeftStatus) is eventually consistent
		code, out, _ := weft(t, queue, "reviews", "--json")
		return code == 0 && strings.Contains(out, `"agent/c2"`)
	}, 15*time.Second, 100*time.Millisecond)
	code, out, errOut = weft(t, queue, "review", "agent-e2e", "approve", "--id", "agent/c2", "--reviewer", "ana")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "approve recorded for agent/c2")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := wc.Result(ctx, "agent-e2e")
	require.NoError(t, err)
	outMap := res.Output.GetStructValue().AsMap()
	require.Equal(t, "The API answers 429 and says when to retry (api/rate-limits.md).", outMap["answer"])
	require.Equal(t, 3, fake.Count(), "one model call per iteration")
	reqs := fake.Requests()
	toolMsg := reqs[1].Messages[len(reqs[1].Messages)-1]
	require.Equal(t, "tool", toolMsg["role"])
	require.Contains(t, toolMsg["content"], "api/", "the model saw real search results from the corpus")
	require.Len(t, reqs[0].Tools, 2, "search and ingest were offered with their registry schemas")
	require.EqualValues(t, 45, res.Usage.PromptTokens+res.Usage.CompletionTokens)
	require.Greater(t, res.Usage.CostUsd, 0.0)

	// The approved note is in the store.
	hits, _, err := activities.NewTools(cfg).Handlers()["search"](context.Background(), map[string]any{"query": "rate limit 429", "collection": "agent_notes", "db": "weft_demo"})
	require.NoError(t, err)
	hb, _ := json.Marshal(hits)
	require.Contains(t, string(hb), "notes/rate-limits.md")

	code, out, errOut = weft(t, queue, "status", "agent-e2e")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "↳ #1 search")
	require.Contains(t, out, "↳ #2 ingest")
	require.Contains(t, out, "Usage: 65 tokens (45 model: 30 in, 15 out; 20 embedding)", "the model's tokens and the tools' embedding tokens, as every surface says them")
}

// TestAgentEventsStream follows an agent with `weft run --json --verbose`: one JSON event per
// line, the model's text as it streams, tool calls as they finish.
func TestAgentEventsStream(t *testing.T) {
	queue := "agent-events"
	answer := "Retries back off exponentially, start after one second, and stop after five attempts unless the step says otherwise."
	fake := fakellm.New(
		fakellm.ToolCall("c1", "search", `{"query":"retries"}`),
		fakellm.Reply{Text: answer, ChunkDelay: 150 * time.Millisecond},
	)
	defer fake.Close()
	startWorkerWithConfig(t, queue, activities.Config{OpenAIBaseURL: fake.BaseURL, ChatModel: "local-model"}, map[string]activities.Handler{"search": fakeSearch})
	file := filepath.Join(t.TempDir(), "agent.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"name":"events","defaults":{"collection":"docs"},"steps":[
	  {"id":"helper","tool":"agent","inputs":{"prompt":"how do retries work?","tools":["search"]}}],"output":"{{ helper.output.text }}"}`), 0o644))
	code, out, errOut := weft(t, queue, "run", file, "--json", "--verbose", "--poll", "100ms")
	require.Equal(t, 0, code, out+errOut)
	var types []string
	deltas := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var ev map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev), sc.Text())
		types = append(types, ev["event"].(string))
		if ev["event"] == events.LLMDelta {
			require.Equal(t, "helper", ev["step"])
			deltas += ev["text"].(string)
		}
		if ev["event"] == events.ToolCallFinished {
			require.Equal(t, "search", ev["call"].(map[string]any)["tool"])
		}
	}
	for _, want := range []string{"run_started", "step_started", "tool_call_started", "tool_call_finished", "step_completed", "run_completed"} {
		require.Contains(t, types, want)
	}
	require.Equal(t, "run_completed", types[len(types)-1])
	require.Contains(t, types, events.LLMDelta, "the 3 s answer streamed at least once (heartbeats every second)")
	require.True(t, strings.HasPrefix(answer, deltas), "deltas add up to a prefix of the answer: %q", deltas)
}

// TestAgentCrashResume kills the worker process with SIGKILL while an agent waits for approval
// mid-loop; a new worker finishes the run, and no model call or tool call that had completed is
// made again.
func TestAgentCrashResume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	c := dial(t)
	queue := "agent-crash"
	fake := fakellm.New(
		fakellm.ToolCall("c1", "search", `{"query":"limits"}`),
		fakellm.ToolCall("c2", "ingest", `{"text":"note","source":"notes/a.md"}`),
		fakellm.Text("done after the crash"),
	)
	defer fake.Close()
	se := &sideEffects{path: filepath.Join(t.TempDir(), "effects.log")}
	proc := startCrashWorker(t, queue, se, "OPENAI_BASE_URL="+fake.BaseURL, "WEFT_CHAT_MODEL=m")
	file := filepath.Join(t.TempDir(), "agent.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"name":"crash-agent","defaults":{"collection":"docs"},"steps":[
	  {"id":"agent","tool":"agent","inputs":{"prompt":"go","tools":["search","ingest"],"approve":["ingest"]}}],"output":"{{ agent.output.text }}"}`), 0o644))
	code, _, errOut := weft(t, queue, "run", file, "--id", "agent-crash-1", "--detach")
	require.Equal(t, 0, code, errOut)
	wc := weftclient.New(c, queue)
	waitForGate(t, wc, "agent-crash-1", "agent/c2")
	require.Equal(t, 2, fake.Count())
	require.Equal(t, 1, se.count("search limits"))
	proc.kill(t)

	startWorkerWithConfig(t, queue, activities.Config{OpenAIBaseURL: fake.BaseURL, ChatModel: "m"}, crashHandlers(se))
	_, err := wc.Review(context.Background(), "agent-crash-1", weftclient.Decision{ID: "agent/c2", Decision: "approve", Reviewer: "ana"})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := wc.Result(ctx, "agent-crash-1")
	require.NoError(t, err)
	require.Equal(t, `"done after the crash"`, protoJSON(t, res.Output))
	require.Equal(t, 3, fake.Count(), "the two model calls made before the crash were not made again")
	require.Equal(t, 1, se.count("search limits"), "the search that completed before the crash did not run again")
	require.Equal(t, 1, se.count("ingest notes/a.md"))
}

func startWorkerWithConfig(t testing.TB, queue string, cfg activities.Config, handlers map[string]activities.Handler) {
	t.Helper()
	tc := dial(t)
	w, err := worker.New(tc, worker.Options{TaskQueue: queue, Config: cfg, Handlers: handlers})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
}

func protoJSON(t *testing.T, v interface{ MarshalJSON() ([]byte, error) }) string {
	b, err := v.MarshalJSON()
	require.NoError(t, err)
	return string(b)
}
