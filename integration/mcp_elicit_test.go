package integration

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/auth"
	"github.com/weftworks/weft/mcp"
	"github.com/weftworks/weft/worker"
)

// asked records the questions a client was asked and answers them in turn.
type asked struct {
	mu      sync.Mutex
	got     []*sdk.ElicitParams
	answers []*sdk.ElicitResult // the last one repeats
}

func (a *asked) handler(_ context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.got = append(a.got, r.Params)
	i := min(len(a.got), len(a.answers)) - 1
	return a.answers[i], nil
}

func (a *asked) questions() []*sdk.ElicitParams {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*sdk.ElicitParams(nil), a.got...)
}

// TestMCPReviewsInTheClient: a run started through the gateway that pauses for a review asks
// the person through MCP elicitation, when the client can be asked and the key may review: the
// answer (approve, edit, reject) is recorded under the key's name and the run goes on; declined,
// the review stays pending and the call answers at once. A client without the capability and a
// key without the reviewer role get the answer they got before. Both protocol eras: 2025-06-18
// with a session (elicitation/create on the call's stream) and 2026-07-28 (input_required and a
// retried call).
func TestMCPReviewsInTheClient(t *testing.T) {
	c := dial(t)
	queue := "mcp-elicit"
	cfg := activities.Config{MongoDBURI: store.URI, Database: "mcpelicit"}
	w, err := worker.New(c, worker.Options{TaskQueue: queue, Config: cfg})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	keyFile := filepath.Join(t.TempDir(), "keys.json")
	ana, _, err := auth.GenerateNamedKey(keyFile, "ana", []string{auth.RoleRunner, auth.RoleReviewer})
	require.NoError(t, err)
	rex, _, err := auth.GenerateNamedKey(keyFile, "rex", []string{auth.RoleRunner})
	require.NoError(t, err)
	keys, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: server.Address, Namespace: server.Namespace, TaskQueue: queue, Config: cfg, Wait: 60 * time.Second})
	srv := httptest.NewServer(g.HTTPHandler(keys, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(srv.Close)

	connect := func(t *testing.T, key, version string, a *asked) *sdk.ClientSession {
		o := &sdk.ClientOptions{}
		if a != nil {
			o.ElicitationHandler = a.handler
		}
		s, err := sdk.NewClient(&sdk.Implementation{Name: "elicit-test", Version: "1"}, o).Connect(context.Background(),
			&sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{key: key, base: http.DefaultTransport}}, MaxRetries: -1},
			&sdk.ClientSessionOptions{ProtocolVersion: version})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	accept := func(form map[string]any) *sdk.ElicitResult { return &sdk.ElicitResult{Action: "accept", Content: form} }
	structured := func(t *testing.T, r *sdk.CallToolResult) map[string]any {
		var out map[string]any
		require.NoError(t, json.Unmarshal([]byte(sdkText(r)), &out), sdkText(r))
		return out
	}
	// stillPending checks that the run waits for its review, then cancels it
	stillPending := func(t *testing.T, s *sdk.ClientSession, id string) {
		res, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: "weft_execution", Arguments: map[string]any{"id": id}})
		require.NoError(t, err)
		st := structured(t, res)
		require.Len(t, st["pendingReviews"], 1, "the review is still pending: %v", st)
		res, err = s.CallTool(context.Background(), &sdk.CallToolParams{Name: "weft_cancel", Arguments: map[string]any{"id": id}})
		require.NoError(t, err)
		require.False(t, res.IsError, sdkText(res))
	}
	run := func(t *testing.T, s *sdk.ClientSession, tool string, args map[string]any) *sdk.CallToolResult {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		require.NoError(t, err)
		return res
	}
	release := map[string]any{"version": "9.0"}

	for _, version := range []string{"2025-06-18", ""} {
		era := "protocol " + version
		if version == "" {
			era = "protocol 2026-07-28"
		}
		t.Run(era, func(t *testing.T) {
			t.Run("approve", func(t *testing.T) {
				a := &asked{answers: []*sdk.ElicitResult{accept(map[string]any{"decision": "approve"})}}
				res := run(t, connect(t, ana, version, a), "wf_approval_demo", release)
				require.False(t, res.IsError, sdkText(res))
				require.Contains(t, sdkText(res), "Release 9.0: 3 changes (approved by ana)", "the key's name is recorded as the reviewer")
				q := a.questions()
				require.Len(t, q, 1)
				require.Contains(t, q[0].Message, "Publish release 9.0?")
				require.Contains(t, q[0].Message, "Release 9.0: 3 changes", "the data is shown")
				require.Contains(t, q[0].Message, "key ana")
				schema, _ := json.Marshal(q[0].RequestedSchema)
				require.Contains(t, string(schema), `"enum":["approve","edit","reject"]`)
				require.Contains(t, string(schema), `"data.headline":{"default":"Release 9.0: 3 changes"`)
				require.Contains(t, string(schema), `"data.items":{"default":"[\"- Durable runs resume after a crash\"`, "a list is a JSON field")
			})
			t.Run("edit, asked again after invalid JSON", func(t *testing.T) {
				a := &asked{answers: []*sdk.ElicitResult{
					accept(map[string]any{"decision": "edit", "data.headline": "Release 9.0: edited", "data.items": `["- only this"`}),
					accept(map[string]any{"decision": "edit", "data.headline": "Release 9.0: edited", "data.items": `["- only this"]`, "comment": "shorter"}),
				}}
				res := run(t, connect(t, ana, version, a), "wf_approval_demo", release)
				require.False(t, res.IsError, sdkText(res))
				out := structured(t, res)["output"].(map[string]any)
				require.Equal(t, "Release 9.0: edited (approved by ana)", out["announcement"], "the edited data reaches the next step")
				require.Equal(t, map[string]any{"headline": "Release 9.0: edited", "items": []any{"- only this"}}, out["notes"])
				require.Equal(t, "edit", out["decision"])
				q := a.questions()
				require.Len(t, q, 2)
				require.Contains(t, q[1].Message, "not recorded: data.items is not valid JSON")
			})
			t.Run("reject with a comment", func(t *testing.T) {
				a := &asked{answers: []*sdk.ElicitResult{accept(map[string]any{"decision": "reject", "comment": "not yet"})}}
				res := run(t, connect(t, ana, version, a), "wf_approval_demo", release)
				require.True(t, res.IsError, sdkText(res))
				require.Contains(t, sdkText(res), "rejected by ana: not yet")
			})
			t.Run("declined: the review stays pending", func(t *testing.T) {
				a := &asked{answers: []*sdk.ElicitResult{{Action: "decline"}}}
				s := connect(t, ana, version, a)
				start := time.Now()
				res := run(t, s, "wf_approval_demo", release)
				require.False(t, res.IsError, sdkText(res))
				require.Less(t, time.Since(start), 50*time.Second, "answered at once, not after the wait")
				out := structured(t, res)
				require.Equal(t, "awaiting_review", out["status"], "the run waits for the review, as every surface says")
				reviews := out["pendingReviews"].([]any)
				require.Len(t, reviews, 1)
				require.Equal(t, "approval", reviews[0].(map[string]any)["id"])
				require.Len(t, a.questions(), 1)
				stillPending(t, s, out["executionId"].(string))
			})
			t.Run("a client without elicitation: as before", func(t *testing.T) {
				s := connect(t, ana, version, nil)
				res := run(t, s, "weft_run_workflow", map[string]any{"name": "approval-demo", "inputs": release, "wait": 3})
				require.False(t, res.IsError, sdkText(res))
				out := structured(t, res)
				stillGoing(t, out)
				stillPending(t, s, out["executionId"].(string))
			})
			t.Run("a key that may not review is not asked", func(t *testing.T) {
				a := &asked{answers: []*sdk.ElicitResult{accept(map[string]any{"decision": "approve"})}}
				res := run(t, connect(t, rex, version, a), "weft_run_workflow", map[string]any{"name": "approval-demo", "inputs": release, "wait": 3})
				require.False(t, res.IsError, sdkText(res))
				out := structured(t, res)
				stillGoing(t, out)
				require.Empty(t, a.questions(), "rex has no reviewer role")
				// rex reads and cancels his own run (ana, who would decide it, may read it but not cancel it)
				stillPending(t, connect(t, rex, version, nil), out["executionId"].(string))
			})
		})
	}
}

// TestMCPReviewsInTheClientOverStdio: the same over stdio, the way a desktop client starts
// `weft mcp` (the real binary, a process per connection). Nobody authenticates over stdio: the
// person at the client is the operator, and the decision is recorded as "operator (MCP client)".
// Both protocol eras: elicitation/create on stdout (2025-06-18), input_required and a retried
// call (2026-07-28).
func TestMCPReviewsInTheClientOverStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the weft binary")
	}
	c := dial(t)
	queue := "mcp-elicit-stdio"
	cfg := activities.Config{MongoDBURI: store.URI, Database: "mcpelicitstdio"}
	w, err := worker.New(c, worker.Options{TaskQueue: queue, Config: cfg})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	bin := weftBinary(t)

	connect := func(t *testing.T, version string, a *asked) *sdk.ClientSession {
		cmd := exec.Command(bin, "mcp", "--address", server.Address, "--namespace", server.Namespace, "--task-queue", queue, "--wait", "60s")
		var stderr syncBuffer
		cmd.Stderr = &stderr
		o := &sdk.ClientOptions{}
		if a != nil {
			o.ElicitationHandler = a.handler
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		s, err := sdk.NewClient(&sdk.Implementation{Name: "elicit-stdio-test", Version: "1"}, o).Connect(ctx,
			&sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: version})
		require.NoError(t, err, "weft mcp: %s", stderr.String())
		t.Cleanup(func() {
			_ = s.Close()
			if t.Failed() {
				t.Logf("weft mcp stderr:\n%s", stderr.String())
			}
		})
		return s
	}
	run := func(t *testing.T, s *sdk.ClientSession, tool string, args map[string]any) *sdk.CallToolResult {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		require.NoError(t, err)
		return res
	}
	accept := func(form map[string]any) *sdk.ElicitResult { return &sdk.ElicitResult{Action: "accept", Content: form} }
	release := map[string]any{"version": "9.1"}

	for _, version := range []string{"2025-06-18", ""} {
		era := "protocol " + version
		if version == "" {
			era = "protocol 2026-07-28"
		}
		t.Run(era, func(t *testing.T) {
			t.Run("approve", func(t *testing.T) {
				a := &asked{answers: []*sdk.ElicitResult{accept(map[string]any{"decision": "approve", "comment": "ship it"})}}
				s := connect(t, version, a)
				res := run(t, s, "wf_approval_demo", release)
				require.False(t, res.IsError, sdkText(res))
				var got map[string]any
				require.NoError(t, json.Unmarshal([]byte(sdkText(res)), &got), sdkText(res))
				out := got["output"].(map[string]any)
				require.Equal(t, "Release 9.1: 3 changes (approved by operator (MCP client))", out["announcement"], "the run completed, decided by the operator")
				require.Equal(t, "approve", out["decision"])
				q := a.questions()
				require.Len(t, q, 1)
				require.Contains(t, q[0].Message, "Publish release 9.1?")
				require.Contains(t, q[0].Message, "decided by the operator")

				// the decision is recorded on the run: who, what, the comment
				ex := run(t, s, "weft_execution", map[string]any{"id": got["executionId"]})
				require.False(t, ex.IsError, sdkText(ex))
				var state struct {
					Status string `json:"status"`
					Steps  []struct {
						ID     string         `json:"id"`
						Output map[string]any `json:"output"`
					} `json:"steps"`
				}
				require.NoError(t, json.Unmarshal([]byte(sdkText(ex)), &state), sdkText(ex))
				require.Equal(t, "completed", state.Status)
				var decided map[string]any
				for _, st := range state.Steps {
					if st.ID == "approval" {
						decided = st.Output
					}
				}
				require.Equal(t, "operator (MCP client)", decided["reviewer"], "%v", decided)
				require.Equal(t, false, decided["authenticated"], "nobody authenticates over stdio")
				require.Equal(t, "approve", decided["decision"])
				require.Equal(t, "ship it", decided["comment"])
			})
			t.Run("edit, asked again after invalid JSON", func(t *testing.T) {
				a := &asked{answers: []*sdk.ElicitResult{
					accept(map[string]any{"decision": "edit", "data.items": `["- only this"`}),
					accept(map[string]any{"decision": "edit", "data.headline": "Release 9.1: edited", "data.items": `["- only this"]`}),
				}}
				res := run(t, connect(t, version, a), "wf_approval_demo", release)
				require.False(t, res.IsError, sdkText(res))
				var got map[string]any
				require.NoError(t, json.Unmarshal([]byte(sdkText(res)), &got), sdkText(res))
				out := got["output"].(map[string]any)
				require.Equal(t, "Release 9.1: edited (approved by operator (MCP client))", out["announcement"])
				require.Equal(t, map[string]any{"headline": "Release 9.1: edited", "items": []any{"- only this"}}, out["notes"])
				q := a.questions()
				require.Len(t, q, 2)
				require.Contains(t, q[1].Message, "not recorded: data.items is not valid JSON")
			})
			t.Run("edit through a multi-select and a titled select", func(t *testing.T) {
				a := &asked{answers: []*sdk.ElicitResult{accept(map[string]any{"decision": "edit", "data.labels": []any{"bug", "docs"}, "data.severity": "high"})}}
				res := run(t, connect(t, version, a), "weft_run_workflow", map[string]any{"definition": triage, "wait": 60})
				require.False(t, res.IsError, sdkText(res))
				var got map[string]any
				require.NoError(t, json.Unmarshal([]byte(sdkText(res)), &got), sdkText(res))
				out := got["output"].(map[string]any)
				require.Equal(t, "edit", out["decision"], "%v", out)
				require.Equal(t, map[string]any{"labels": []any{"bug", "docs"}, "severity": "high"}, out["data"])
				q := a.questions()
				require.Len(t, q, 1)
				schema, _ := json.Marshal(q[0].RequestedSchema)
				require.Contains(t, string(schema), `"data.labels":{"default":["bug"],"items":{"enum":["bug","feature","docs"],"type":"string"},"minItems":1,"title":"labels","type":"array"}`)
				require.Contains(t, string(schema), `"data.severity":{"default":"low","oneOf":[{"const":"low","title":"Low"},{"const":"high","title":"High"}],"title":"severity","type":"string"}`)
			})
		})
	}
}

// triage is a workflow whose review's schema has a multi-select (labels) and a titled
// single-select (severity).
var triage = map[string]any{"name": "triage", "steps": []any{map[string]any{"id": "triage", "tool": "review", "inputs": map[string]any{
	"title": "Triage the issue",
	"data":  map[string]any{"labels": []any{"bug"}, "severity": "low"},
	"schema": map[string]any{"type": "object", "properties": map[string]any{
		"labels":   map[string]any{"type": "array", "minItems": 1, "items": map[string]any{"type": "string", "enum": []any{"bug", "feature", "docs"}}},
		"severity": map[string]any{"type": "string", "oneOf": []any{map[string]any{"const": "low", "title": "Low"}, map[string]any{"const": "high", "title": "High"}}},
	}},
}}}, "output": "{{ triage.output }}"}

// stillGoing checks the answer of a call whose run did not end within its wait: the run's status
// as every surface says it, awaiting_review with the ids of the reviews it waits for once it has
// reached its review (running before; a wait of 3 s on a loaded machine may end first).
func stillGoing(t *testing.T, out map[string]any) {
	t.Helper()
	switch out["status"] {
	case "awaiting_review":
		require.Equal(t, []any{"approval"}, out["pendingReviews"], "the ids of the reviews it waits for")
	case "running":
		require.NotContains(t, out, "pendingReviews")
	default:
		t.Fatalf("a run still going is running or awaiting_review: %v", out)
	}
}
