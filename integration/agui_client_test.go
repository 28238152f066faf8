package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/console"
	"github.com/weftworks/weft/internal/testkit/fakellm"
	"github.com/weftworks/weft/workflows/dsl"
)

// aguiClientFlow waits for a review first (so the client is connected before any model text), then
// an llm step streams text and an agent calls the search tool and streams its answer.
const aguiClientFlow = `{"name":"agui-client","defaults":{"collection":"docs"},"steps":[
  {"id":"approve","tool":"review","inputs":{"title":"Write about retries?","data":{"topic":"retries"}}},
  {"id":"write","tool":"llm","inputs":{"prompt":"Write one sentence about {{ approve.output.data.topic }}."}},
  {"id":"helper","tool":"agent","inputs":{"prompt":"Check this: {{ write.output.text }}","tools":["search"]}}],
  "output":"{{ helper.output.text }}"}`

// aguiCheck is scripts/agui-client/check.mjs: the public AG-UI client (@ag-ui/client from npm)
// following a stream. It fails the test, never skips it, when node or the npm packages are missing.
func aguiCheck(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "scripts", "agui-client"))
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@ag-ui", "client", "package.json")); err != nil {
		t.Fatalf("the AG-UI client is not installed in %s (%v): run `npm ci --prefix scripts/agui-client` from the repository root (make test does)", dir, err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not on PATH (%v): install Node.js 20 or later (.ci/run does)", err)
	}
	return filepath.Join(dir, "check.mjs")
}

// aguiLine is one line check.mjs prints: an event as the client delivered it, or at the end what
// the agent was left with.
type aguiLine struct {
	Event map[string]any `json:"event"`
	Agent *struct {
		Messages []map[string]any `json:"messages"`
		State    map[string]any   `json:"state"`
		Result   any              `json:"result"`
	} `json:"agent"`
}

// TestAGUIClientAcceptsARealRun: the public AG-UI client (@ag-ui/client's HttpAgent, with its
// schema enforcement and event verification) follows a real run through the console's
// /runs/{id}/agui and accepts the stream without an error or a warning: RUN_STARTED first, the
// review as CUSTOM events, the llm step's and the agent's streamed text as TEXT_MESSAGE_START /
// CONTENT / END whose deltas add up to the model's text, the agent's search call as TOOL_CALL_START /
// ARGS / END / RESULT, and RUN_FINISHED last with the run's output, which the client keeps as its
// result and its messages. A stream for a run that does not exist is a RUN_ERROR it accepts too.
func TestAGUIClientAcceptsARealRun(t *testing.T) {
	check := aguiCheck(t)
	queue := "agui-client"
	written := "Retries back off exponentially and stop after five attempts."
	answer := "Confirmed: the guide says retries back off and stop after five attempts."
	fake := fakellm.New(
		fakellm.Reply{Text: written, ChunkDelay: 20 * time.Millisecond},
		fakellm.ToolCall("c1", "search", `{"query":"retries"}`),
		fakellm.Reply{Text: answer, ChunkDelay: 20 * time.Millisecond},
	)
	defer fake.Close()
	startWorkerWithConfig(t, queue, activities.Config{OpenAIBaseURL: fake.BaseURL, ChatModel: "m"},
		map[string]activities.Handler{"search": fakeSearch})
	wc := weftclient.New(dial(t), queue)
	s, err := console.New(console.Options{Client: wc, WorkflowsDir: t.TempDir(), Reviewer: "console-test", PollInterval: 100 * time.Millisecond})
	require.NoError(t, err)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)

	w, err := dsl.Load("agui-client.json", []byte(aguiClientFlow))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	id := "agui-client-1"
	_, err = wc.Start(ctx, w, weftclient.StartOptions{ID: id})
	require.NoError(t, err)

	cmd := exec.CommandContext(ctx, "node", check, srv.URL+"/runs/"+id+"/agui")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var lines []aguiLine
	reviewed := false
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l aguiLine
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l), sc.Text())
		lines = append(lines, l)
		// Decide the review once the client has seen it: all the model text comes after.
		if l.Event["type"] == "CUSTOM" && l.Event["name"] == "weft.review_requested" && !reviewed {
			reviewed = true
			_, err := wc.Review(ctx, id, weftclient.Decision{Step: "approve", Decision: "approve", Reviewer: "ana"})
			require.NoError(t, err)
		}
	}
	require.NoError(t, sc.Err())
	require.NoError(t, cmd.Wait(), "check.mjs: %s", stderr.String())
	require.Contains(t, stderr.String(), "the AG-UI client accepted")
	require.True(t, reviewed, "the client saw the review request: %s", stderr.String())

	require.NotEmpty(t, lines)
	end := lines[len(lines)-1].Agent
	require.NotNil(t, end, "check.mjs ends with what the agent was left with")
	var evs []map[string]any
	var types []string
	for _, l := range lines[:len(lines)-1] {
		require.NotNil(t, l.Event)
		evs = append(evs, l.Event)
		types = append(types, l.Event["type"].(string))
	}
	require.Equal(t, "RUN_STARTED", types[0], types)
	require.Equal(t, "RUN_FINISHED", types[len(types)-1], types)
	require.Equal(t, id, evs[len(evs)-1]["runId"])
	require.Equal(t, answer, evs[len(evs)-1]["result"], "RUN_FINISHED carries the run's output")

	// first returns the index of the first event of that type whose field key is value.
	first := func(typ, key, value string) int {
		for i, e := range evs {
			if e["type"] == typ && (key == "" || e[key] == value) {
				return i
			}
		}
		t.Fatalf("no %s with %s %q in %v", typ, key, value, types)
		return -1
	}
	require.Less(t, first("CUSTOM", "name", "weft.review_requested"), first("CUSTOM", "name", "weft.review_decided"))
	require.Less(t, first("CUSTOM", "name", "weft.review_decided"), first("STEP_STARTED", "stepName", "write"))

	// Text messages: START, then CONTENT adding up to the model's text, then END; in model order.
	type message struct {
		start, end int
		text       string
	}
	msgs := map[string]*message{}
	var order []string
	for i, e := range evs {
		mid, _ := e["messageId"].(string)
		switch e["type"] {
		case "TEXT_MESSAGE_START":
			require.NotContains(t, msgs, mid, "one START per message")
			require.Equal(t, "assistant", e["role"])
			msgs[mid] = &message{start: i, end: -1}
			order = append(order, mid)
		case "TEXT_MESSAGE_CONTENT":
			require.Contains(t, msgs, mid, "CONTENT after START")
			require.Equal(t, -1, msgs[mid].end, "CONTENT before END")
			msgs[mid].text += e["delta"].(string)
		case "TEXT_MESSAGE_END":
			require.Contains(t, msgs, mid, "END after START")
			msgs[mid].end = i
		}
	}
	require.Len(t, order, 2, "one message for the llm step and one for the agent's answer: %v", types)
	for i, want := range []string{written, answer} {
		m := msgs[order[i]]
		require.Equal(t, want, m.text, "the deltas of %s add up to the model's text", order[i])
		require.Greater(t, m.end, m.start, "%s ends", order[i])
	}
	require.Less(t, first("STEP_STARTED", "stepName", "write"), msgs[order[0]].start)
	require.Less(t, msgs[order[0]].end, first("STEP_FINISHED", "stepName", "write"))
	require.Less(t, first("STEP_STARTED", "stepName", "helper"), msgs[order[1]].start)
	require.Less(t, msgs[order[1]].end, first("STEP_FINISHED", "stepName", "helper"))

	// The agent's tool call, in order, before its answer.
	call := first("TOOL_CALL_START", "", "")
	require.Equal(t, "search", evs[call]["toolCallName"])
	callID := evs[call]["toolCallId"].(string)
	args := first("TOOL_CALL_ARGS", "toolCallId", callID)
	require.JSONEq(t, `{"query":"retries"}`, evs[args]["delta"].(string))
	result := first("TOOL_CALL_RESULT", "toolCallId", callID)
	require.Less(t, call, args)
	require.Less(t, args, first("TOOL_CALL_END", "toolCallId", callID))
	require.Less(t, first("TOOL_CALL_END", "toolCallId", callID), result)
	require.Contains(t, evs[result]["content"], "docs/guide.md")
	require.Less(t, result, msgs[order[1]].start)

	// What the client built from the stream: the two texts as assistant messages, the tool call and
	// its result, the last state snapshot and the run's output as the result.
	var texts []string
	var sawCall, sawResult bool
	for _, m := range end.Messages {
		if c, ok := m["content"].(string); ok && m["role"] == "assistant" {
			texts = append(texts, c)
		}
		if tc, ok := m["toolCalls"].([]any); ok && len(tc) == 1 {
			sawCall = tc[0].(map[string]any)["function"].(map[string]any)["name"] == "search"
		}
		sawResult = sawResult || (m["role"] == "tool" && m["toolCallId"] == callID)
	}
	require.Equal(t, []string{written, answer}, texts)
	require.True(t, sawCall && sawResult, "the tool call and its result are messages: %v", end.Messages)
	require.Equal(t, "completed", end.State["status"])
	require.Equal(t, answer, end.Result)

	// A run that does not exist: RUN_ERROR, which the client accepts (check.mjs exits 2).
	out, err := exec.CommandContext(ctx, "node", check, srv.URL+"/runs/no-such-run/agui").CombinedOutput()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "check.mjs on a missing run: %v\n%s", err, out)
	require.Equal(t, 2, exit.ExitCode(), "accepted, ended with RUN_ERROR:\n%s", out)
	require.True(t, strings.Contains(string(out), `"type":"RUN_ERROR"`), string(out))
}
