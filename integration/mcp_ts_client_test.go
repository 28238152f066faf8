package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/auth"
	"github.com/weftworks/weft/mcp"
)

// mcpTSScript is scripts/mcp-smoke/NAME, run with the TypeScript MCP SDK installed there (make
// test installs it before the server tests: make mcp-client). Outside CI a machine without it or
// without node skips the test and says how to install it; with CI=true (.ci/run sets it) that is
// a failure.
func mcpTSScript(t *testing.T, name string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "scripts", "mcp-smoke"))
	require.NoError(t, err)
	missing := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format+" (skipped outside CI; with CI=true this fails)", args...)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		missing("the TypeScript MCP SDK is not installed in %s (%v): run `make mcp-client` (npm ci --prefix scripts/mcp-smoke) from the repository root", dir, err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing("node is not on PATH (%v): install Node.js 20 or later (.ci/run does)", err)
	}
	return filepath.Join(dir, name)
}

// fiveSteps is an exposed workflow of five steps, each after the one before (dependsOn), so
// they end one at a time in this order.
const fiveSteps = `{"name":"five-steps","description":"Five estimates in a row","mcp":{"expose":true},
  "inputs":{"topic":{"type":"string","required":true,"description":"what to estimate"}},
  "steps":[
    {"id":"s1","tool":"estimate","inputs":{"docs":100}},
    {"id":"s2","tool":"estimate","inputs":{"docs":200},"dependsOn":["s1"]},
    {"id":"s3","tool":"estimate","inputs":{"docs":300},"dependsOn":["s2"]},
    {"id":"s4","tool":"estimate","inputs":{"docs":400},"dependsOn":["s3"]},
    {"id":"s5","tool":"template","inputs":{"text":"five steps about {{ inputs.topic }}"},"dependsOn":["s4"]}],
  "output":"{{ s5.output.text }}"}`

// tsE2E is what scripts/mcp-smoke/e2e.mjs prints.
type tsE2E struct {
	Protocol string       `json:"protocol"`
	Session  bool         `json:"session"`
	Five     []tsProgress `json:"five"`
	Review   struct {
		Asked []struct {
			Message string         `json:"message"`
			Schema  map[string]any `json:"schema"`
		} `json:"asked"`
		Result   tsToolResult   `json:"result"`
		Approval map[string]any `json:"approval"`
		Status   string         `json:"status"`
	} `json:"review"`
	Subscribed struct {
		ID            string   `json:"id"`
		URIs          []string `json:"uris"`
		Notifications int      `json:"notifications"`
		Seen          []struct {
			Status         string `json:"status"`
			PendingReviews int    `json:"pendingReviews"`
			AfterUpdate    bool   `json:"afterUpdate"`
		} `json:"seen"`
	} `json:"subscribed"`
	Prompts []struct {
		Name      string   `json:"name"`
		Arguments []string `json:"arguments"`
	} `json:"prompts"`
	Prompt      tsPrompt `json:"prompt"`
	Ask         tsPrompt `json:"ask"`
	Completions map[string]struct {
		Values []string `json:"values"`
		Total  int      `json:"total"`
	} `json:"completions"`
}

// tsProgress is a notifications/progress the client received, or the result after them.
type tsProgress struct {
	Progress *float64      `json:"progress"`
	Total    *float64      `json:"total"`
	Message  string        `json:"message"`
	Result   *tsToolResult `json:"result"`
}

type tsToolResult struct {
	ExecutionID string `json:"executionId"`
	Output      any    `json:"output"`
}

type tsPrompt struct {
	Messages []struct {
		Role    string `json:"role"`
		Content struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"messages"`
}

// tsGateway serves the gateway over HTTP for a TypeScript client: its workflow tools the files
// (name: text) in a folder of the test's, its tools run by the worker on queue with cfg, and one
// key, named name with roles, that it returns with the gateway's /mcp URL.
func tsGateway(t *testing.T, name string, roles []string, queue string, cfg activities.Config, files map[string]string) (url, key string) {
	t.Helper()
	dir := t.TempDir()
	for file, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644))
	}
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	key, _, err := auth.GenerateNamedKey(keyFile, name, roles)
	require.NoError(t, err)
	keys, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: server.Address, Namespace: server.Namespace, TaskQueue: queue, Config: cfg,
		WorkflowsDir: dir, Wait: 90 * time.Second})
	srv := httptest.NewServer(g.HTTPHandler(keys, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp", key
}

// runTSScript runs script (mcpTSScript) against the gateway at url with key, within timeout,
// and decodes the JSON it prints into out; it returns what it printed, for messages.
func runTSScript(t *testing.T, timeout time.Duration, script, url, key string, out any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "node", script, url, key)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "%s: %s\nstdout: %s", filepath.Base(script), stderr.String(), stdout.String())
	require.NoError(t, json.Unmarshal(stdout.Bytes(), out), stdout.String())
	return stdout.String()
}

// TestMCPTypeScriptClient: the official TypeScript SDK's client (@modelcontextprotocol/sdk, as
// pinned in scripts/mcp-smoke) against the gateway on the embedded stack over streamable HTTP
// with a key and a session: a five-step wf_ tool call's progress arrives step by step (1..5 of
// 5, in order) before its result; a review of a run it started is asked through elicitation,
// answered approve, and recorded under the key's name; a subscription to
// weft://executions/{id} gets notifications/resources/updated up to the run's end; prompts/list,
// prompts/get and completion/complete answer with the workflows', steps' and runs' real names.
func TestMCPTypeScriptClient(t *testing.T) {
	script := mcpTSScript(t, "e2e.mjs")
	queue := "mcp-ts-client"
	cfg := activities.Config{MongoDBURI: store.URI, Database: "mcptsclient"}
	startWorkerWithConfig(t, queue, cfg, nil)

	url, key := tsGateway(t, "ts-client", []string{auth.RoleRunner, auth.RoleReviewer}, queue, cfg,
		map[string]string{"five-steps.json": fiveSteps})
	var got tsE2E
	stdout := runTSScript(t, 4*time.Minute, script, url, key, &got)
	t.Logf("protocol %s; progress %d notifications; subscription %d notifications, states %v", got.Protocol, len(got.Five)-1, got.Subscribed.Notifications, got.Subscribed.Seen)
	require.True(t, got.Session, "the client keeps the Mcp-Session-Id it was given")
	require.NotEmpty(t, got.Protocol)

	// (a) progress 1..5 of 5, one per step in the workflow's order, then the result
	requireFiveSteps(t, got.Five, "retries", stdout)

	// (b) asked through elicitation, answered approve, recorded under the key's name
	require.Len(t, got.Review.Asked, 1)
	q := got.Review.Asked[0]
	require.Contains(t, q.Message, "Publish release 9.2?")
	require.Contains(t, q.Message, "key ts-client")
	schema, _ := json.Marshal(q.Schema)
	require.Contains(t, string(schema), `"enum":["approve","edit","reject"]`)
	require.NotEmpty(t, got.Review.Result.ExecutionID)
	require.Equal(t, "completed", got.Review.Status)
	out, _ := got.Review.Result.Output.(map[string]any)
	require.Equal(t, "Release 9.2: 3 changes (approved by ts-client)", out["announcement"], "%v", got.Review.Result)
	require.Equal(t, "ts-client", got.Review.Approval["reviewer"], "%v", got.Review.Approval)
	require.Equal(t, true, got.Review.Approval["authenticated"])
	require.Equal(t, "approve", got.Review.Approval["decision"])
	require.Equal(t, "approved from the TypeScript client", got.Review.Approval["comment"])

	// (c) the subscription saw the run change until it completed: the review pending, then done
	sub := got.Subscribed
	require.Equal(t, []string{"weft://executions/" + sub.ID}, sub.URIs)
	require.NotEmpty(t, sub.Seen)
	last := sub.Seen[len(sub.Seen)-1]
	require.Equal(t, "completed", last.Status, "%v", sub.Seen)
	require.True(t, last.AfterUpdate, "the end was seen through a notification: %v", sub.Seen)
	waited := false
	for _, s := range sub.Seen {
		waited = waited || s.PendingReviews == 1
	}
	require.True(t, waited, "the review was seen pending: %v", sub.Seen)

	// (d) prompts and completions
	prompts := map[string][]string{}
	for _, p := range got.Prompts {
		prompts[p.Name] = p.Arguments
	}
	require.Equal(t, []string{"topic"}, prompts["wf_five_steps"], "an exposed workflow is a prompt with its inputs: %v", prompts)
	require.Contains(t, prompts, "wf_approval_demo")
	require.Equal(t, []string{"question", "collection"}, prompts["ask"])
	require.Contains(t, prompts, "review_waiting")
	require.Len(t, got.Prompt.Messages, 1)
	require.Contains(t, got.Prompt.Messages[0].Content.Text, "call the tool wf_five_steps")
	require.Contains(t, got.Prompt.Messages[0].Content.Text, `"topic":"backoff"`)
	require.Len(t, got.Ask.Messages, 1)
	require.Contains(t, got.Ask.Messages[0].Content.Text, "Question: How do retries back off?")
	require.Equal(t, []string{"s1", "s2", "s3", "s4", "s5"}, got.Completions["steps"].Values)
	require.Equal(t, []string{"five-steps"}, got.Completions["workflows"].Values)
	ids := got.Completions["executions"].Values
	require.Contains(t, ids, sub.ID, "the run the client started is offered")
	for _, id := range ids {
		require.True(t, strings.HasPrefix(id, sub.ID[:8]), id)
	}
}

// requireFiveSteps checks what a client received from a wf_five_steps call: progress 1..5 of 5,
// one per step as each ended, in the workflow's order, then the result with the run's output.
func requireFiveSteps(t *testing.T, five []tsProgress, topic, raw string) {
	t.Helper()
	require.Len(t, five, 6, "five progress notifications then the result: %s", raw)
	for i, p := range five[:5] {
		require.Nil(t, p.Result, "notification %d comes before the result", i+1)
		require.NotNil(t, p.Progress, "notification %d", i+1)
		require.Equal(t, float64(i+1), *p.Progress, "notification %d", i+1)
		require.NotNil(t, p.Total)
		require.Equal(t, float64(5), *p.Total)
		require.Equal(t, fmt.Sprintf("step s%d completed", i+1), p.Message)
	}
	res := five[5].Result
	require.NotNil(t, res, "the result comes last")
	require.NotEmpty(t, res.ExecutionID, "%s", raw)
	require.Equal(t, "five steps about "+topic, res.Output)
}
