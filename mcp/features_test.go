package mcp_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/auth"
	"github.com/weftworks/weft/mcp"
)

// sdkClient connects the official Go SDK's client with key, at a protocol version ("" : the
// SDK's latest, 2026-07-28, which has no sessions).
func sdkClient(t *testing.T, url, key, version string, o *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	tr := &sdk.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: bearerRT{key}}, MaxRetries: -1}
	s, err := sdk.NewClient(&sdk.Implementation{Name: "weft-test", Version: "1"}, o).Connect(context.Background(), tr, &sdk.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

const pingRequest = `{"jsonrpc":"2.0","id":1,"method":"ping"}`

// send makes one HTTP request to /mcp with key and returns the status, headers and body.
func send(t *testing.T, method, url, key string, body io.Reader, header map[string]string) (int, http.Header, string, time.Duration) {
	t.Helper()
	req, err := http.NewRequest(method, url+"/mcp", body)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(out), time.Since(start)
}

type bearerRT struct{ key string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

func promptText(r *sdk.GetPromptResult) string {
	var b strings.Builder
	for _, m := range r.Messages {
		if tc, ok := m.Content.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestPromptsAndCompletions: the workflows and the built-in prompts are listed and rendered, and
// completions answer workflow names and a workflow's step ids, with and without sessions.
func TestPromptsAndCompletions(t *testing.T) {
	srv, key := gateway(t)
	for _, version := range []string{"2025-06-18", ""} {
		t.Run("protocol "+version, func(t *testing.T) {
			ctx := context.Background()
			s := sdkClient(t, srv.URL, key, version, nil)
			list, err := s.ListPrompts(ctx, nil)
			require.NoError(t, err)
			prompts := map[string]*sdk.Prompt{}
			for _, p := range list.Prompts {
				prompts[p.Name] = p
			}
			require.Contains(t, prompts, "ask")
			require.Contains(t, prompts, "review_waiting")
			require.Contains(t, prompts, "wf_approval_demo", "an exposed workflow is a prompt named like its tool")
			var args []string
			for _, a := range prompts["wf_approval_demo"].Arguments {
				args = append(args, a.Name)
				require.False(t, a.Required, "inputs with defaults are optional")
			}
			require.Equal(t, []string{"changes", "version"}, args)

			got, err := s.GetPrompt(ctx, &sdk.GetPromptParams{Name: "ask", Arguments: map[string]string{"question": "what pauses a run?", "collection": "docs"}})
			require.NoError(t, err)
			require.Contains(t, promptText(got), "weft_query")
			require.Contains(t, promptText(got), "what pauses a run?")
			require.Contains(t, promptText(got), `collection "docs"`)
			_, err = s.GetPrompt(ctx, &sdk.GetPromptParams{Name: "ask", Arguments: map[string]string{}})
			require.ErrorContains(t, err, "question")

			got, err = s.GetPrompt(ctx, &sdk.GetPromptParams{Name: "wf_approval_demo", Arguments: map[string]string{"version": "7.0"}})
			require.NoError(t, err)
			require.Contains(t, promptText(got), "call the tool wf_approval_demo")
			require.Contains(t, promptText(got), `"version":"7.0"`)

			_, err = s.GetPrompt(ctx, &sdk.GetPromptParams{Name: "review_waiting"})
			require.ErrorContains(t, err, "cannot reach Temporal", "the reviews come from Temporal")

			c, err := s.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/resource", URI: "weft://workflows/{name}"}, Argument: sdk.CompleteParamsArgument{Name: "name", Value: "appr"}})
			require.NoError(t, err)
			require.Equal(t, []string{"approval-demo"}, c.Completion.Values)

			c, err = s.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: "wf_approval_demo"}, Argument: sdk.CompleteParamsArgument{Name: "step", Value: ""}})
			require.NoError(t, err)
			require.Equal(t, []string{"approval", "bullets", "draft", "published"}, c.Completion.Values, "a workflow prompt's steps")

			_, err = s.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/resource", URI: "weft://executions/{id}"}, Argument: sdk.CompleteParamsArgument{Name: "id", Value: ""}})
			require.ErrorContains(t, err, "cannot reach Temporal", "execution ids come from Temporal")
		})
	}
}

// TestPromptsAndCompletionsNeedReader: a key without the reader role gets neither.
func TestPromptsAndCompletionsNeedReader(t *testing.T) {
	srv, keys := rolesGateway(t)
	ctx := context.Background()
	s := sdkClient(t, srv.URL, keys["fin"], "2025-06-18", nil)
	_, err := s.GetPrompt(ctx, &sdk.GetPromptParams{Name: "ask", Arguments: map[string]string{"question": "q"}})
	require.ErrorContains(t, err, "reader")
	_, err = s.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/resource", URI: "weft://workflows/{name}"}, Argument: sdk.CompleteParamsArgument{Name: "name", Value: ""}})
	require.ErrorContains(t, err, "reader")
	err = s.Subscribe(ctx, &sdk.SubscribeParams{URI: "weft://executions/abc"})
	require.ErrorContains(t, err, "reader")
}

// TestSubscribeChecks: only weft://executions/{id} can be subscribed to, by a session, for a run
// the gateway can read; logging/setLevel is answered.
func TestSubscribeChecks(t *testing.T) {
	srv, key := gateway(t)
	ctx := context.Background()
	s := sdkClient(t, srv.URL, key, "2025-06-18", nil)
	//lint:ignore SA1019 logging/setLevel is deprecated from protocol 2026-07-28 on; clients of 2025-06-18 still send it and the gateway answers it
	require.NoError(t, s.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "info"}))
	err := s.Subscribe(ctx, &sdk.SubscribeParams{URI: "weft://workflows/approval-demo"})
	require.ErrorContains(t, err, "only weft://executions/{id} can be subscribed to")
	err = s.Subscribe(ctx, &sdk.SubscribeParams{URI: "weft://executions/abc"})
	require.ErrorContains(t, err, "cannot reach Temporal")

	// a request without Mcp-Session-Id is served statelessly: nothing could reach it later
	status, _, out, _ := send(t, http.MethodPost, srv.URL, key, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"weft://executions/abc"}}`),
		map[string]string{"MCP-Protocol-Version": "2025-06-18"})
	require.Equal(t, http.StatusOK, status, out)
	require.Contains(t, out, "without a session")
}

// TestSessionsBelongToTheirKey: initialize gives a session id; only the key that opened it may
// use it, open its event stream or end it.
func TestSessionsBelongToTheirKey(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	keyA, _, err := auth.GenerateNamedKey(keyFile, "a", nil)
	require.NoError(t, err)
	keyB, _, err := auth.GenerateNamedKey(keyFile, "b", nil)
	require.NoError(t, err)
	keys, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: "127.0.0.1:1", Namespace: "default"})
	srv := httptest.NewServer(g.HTTPHandler(keys, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(srv.Close)

	v := map[string]string{"MCP-Protocol-Version": "2025-06-18"}
	status, hdr, out, _ := send(t, http.MethodPost, srv.URL, keyA, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
	require.Equal(t, http.StatusOK, status, out)
	sid := hdr.Get("Mcp-Session-Id")
	require.True(t, strings.HasPrefix(sid, "weft-"), sid)
	with := func(h map[string]string) map[string]string {
		out := map[string]string{"Mcp-Session-Id": sid}
		for k, v := range h {
			out[k] = v
		}
		return out
	}

	status, _, out, _ = send(t, http.MethodPost, srv.URL, keyA, strings.NewReader(pingRequest), with(v))
	require.Equal(t, http.StatusOK, status, out)
	status, _, out, _ = send(t, http.MethodPost, srv.URL, keyB, strings.NewReader(pingRequest), with(v))
	require.Equal(t, http.StatusNotFound, status, "another key's session is unknown to it: %s", out)
	status, _, out, _ = send(t, http.MethodGet, srv.URL, keyB, nil, with(map[string]string{"Accept": "text/event-stream"}))
	require.Equal(t, http.StatusNotFound, status, out)
	require.Contains(t, out, "unknown session")
	status, _, _, _ = send(t, http.MethodDelete, srv.URL, keyB, nil, with(v))
	require.NotEqual(t, http.StatusOK, status, "another key cannot end it")

	// the key's own event stream opens
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/mcp", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+keyA)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	cancel()
	_ = resp.Body.Close()

	status, _, out, _ = send(t, http.MethodDelete, srv.URL, keyA, nil, with(v))
	require.Equal(t, http.StatusOK, status, out)
	status, _, out, _ = send(t, http.MethodPost, srv.URL, keyA, strings.NewReader(pingRequest), with(v))
	require.Equal(t, http.StatusNotFound, status, "an ended session is gone: %s", out)
}
