package integration

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/auth"
	"github.com/weftworks/weft/internal/testkit/fakellm"
)

// agentsWorkflows are the exposed workflows scripts/mcp-smoke/agents.mjs calls: an agent with a
// tool and a responseFormat schema, and one stopped by stopWhen after asking for a tool call.
var agentsWorkflows = map[string]string{
	"structured-answer.json": `{"name":"structured-answer","description":"Estimate and answer in a schema","mcp":{"expose":true},
  "inputs":{"docs":{"type":"number","required":true,"description":"how many documents"}},
  "steps":[{"id":"ask","tool":"agent","inputs":{"prompt":"Estimate {{ inputs.docs }} documents","tools":["estimate"],
    "responseFormat":{"type":"object","properties":{"docs":{"type":"integer"},"verdict":{"type":"string"}},"required":["docs","verdict"],"additionalProperties":false}}}],
  "output":"{{ ask.output.json }}"}`,
	"stop-early.json": `{"name":"stop-early","description":"Stop at the first DONE","mcp":{"expose":true},
  "steps":[{"id":"ask","tool":"agent","inputs":{"prompt":"Stop early","tools":["estimate"],"stopWhen":{"textMatches":"^DONE"}}}],
  "output":"{{ ask.output.messages }}"}`,
}

// tsAgents is what scripts/mcp-smoke/agents.mjs prints.
type tsAgents struct {
	Tools struct {
		Count               int      `json:"count"`
		WithoutOutputSchema []string `json:"withoutOutputSchema"`
		TypeLists           []string `json:"typeLists"`
	} `json:"tools"`
	Structured struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			ExecutionID string         `json:"executionId"`
			Output      map[string]any `json:"output"`
		} `json:"structuredContent"`
	} `json:"structured"`
	Stopped struct {
		IsError    bool             `json:"isError"`
		Messages   []map[string]any `json:"messages"`
		Unanswered []string         `json:"unanswered"`
	} `json:"stopped"`
}

// TestMCPTypeScriptAgents: the official TypeScript SDK's client (as pinned in scripts/mcp-smoke)
// against the gateway, its worker's model the scripted OpenAI-compatible fake (strict, as OpenAI
// is, about unanswered tool calls) — issue 44's items 1, 2 and 7 as a real MCP client meets them:
// every listed tool has an outputSchema and no schema holds a type list (7); the SDK's callTool,
// which checks structuredContent against the outputSchema, accepts the result of an agent with
// tools and a responseFormat, whose model was sent the schema alongside the tools (1); an agent
// stopped by stopWhen after asking for a tool call hands on a transcript whose every call is
// answered (2).
func TestMCPTypeScriptAgents(t *testing.T) {
	script := mcpTSScript(t, "agents.mjs")
	fake := fakellm.New()
	fake.Respond = func(req fakellm.Request) fakellm.Reply {
		answered := false
		prompt := ""
		for _, m := range req.Messages {
			answered = answered || m["role"] == "tool"
			if m["role"] == "user" {
				prompt, _ = m["content"].(string)
			}
		}
		switch {
		case strings.HasPrefix(prompt, "Stop early"):
			return fakellm.Reply{Text: "DONE without more", Calls: []fakellm.Call{{ID: "c1", Name: "estimate", Arguments: `{"docs":5}`}}}
		case !answered:
			return fakellm.ToolCall("e1", "estimate", `{"docs":10}`)
		default:
			return fakellm.Text(`{"docs":10,"verdict":"cheap"}`)
		}
	}
	t.Cleanup(fake.Close)
	queue := "mcp-ts-agents"
	cfg := activities.Config{MongoDBURI: store.URI, Database: "mcptsagents", OpenAIBaseURL: fake.BaseURL, OpenAIAPIKey: "k", ChatModel: "gpt-4o-mini"}
	startWorkerWithConfig(t, queue, cfg, nil)

	url, key := tsGateway(t, "ts-agents", []string{auth.RoleRunner}, queue, cfg, agentsWorkflows)
	var got tsAgents
	stdout := runTSScript(t, 3*time.Minute, script, url, key, &got)
	t.Logf("tools listed %d, without outputSchema %d, schemas with a type list %d", got.Tools.Count, len(got.Tools.WithoutOutputSchema), len(got.Tools.TypeLists))

	// item 7: every tool declares its output; no type lists
	require.Greater(t, got.Tools.Count, 30, "the gateway's own tools, the tools, and the two workflows")
	require.Empty(t, got.Tools.WithoutOutputSchema, "tools the TypeScript client sees without an outputSchema")
	require.Empty(t, got.Tools.TypeLists, "schemas with a type list")

	// item 1: the answer is the schema's JSON, accepted by the SDK's check against the outputSchema,
	// and the model was told the schema in the same request as the tools
	require.False(t, got.Structured.IsError, stdout)
	require.Equal(t, map[string]any{"docs": float64(10), "verdict": "cheap"}, got.Structured.StructuredContent.Output, stdout)
	var withTools int
	for _, r := range fake.Requests() {
		if len(r.Tools) > 0 && r.ResponseFormat != nil && strings.Contains(compactJSONOf(t, r.Messages), "Estimate 10 documents") {
			withTools++
			require.Equal(t, "json_schema", r.ResponseFormat["type"], "%v", r.ResponseFormat)
		}
	}
	require.Equal(t, 2, withTools, "both model calls of the structured agent sent the schema alongside its tool")

	// item 2: the stopped agent's transcript answers its tool call (skipped), so a provider takes it
	require.False(t, got.Stopped.IsError, stdout)
	require.NotEmpty(t, got.Stopped.Messages, stdout)
	require.Empty(t, got.Stopped.Unanswered, "tool calls the transcript leaves unanswered: %s", stdout)
	last := got.Stopped.Messages[len(got.Stopped.Messages)-1]
	require.Equal(t, "tool", last["role"], "%v", got.Stopped.Messages)
	require.Contains(t, last["content"], "skipped")
}

func compactJSONOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
