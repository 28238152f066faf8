package integration

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/console"
	"github.com/weftworks/weft/mcp"
	"github.com/weftworks/weft/workflows/dsl"
)

// readResource reads an MCP resource; it returns the text or the error's message.
func (s *mcpSession) readResource(uri string) (string, error) {
	s.t.Helper()
	req := mcplib.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := s.mc.ReadResource(context.Background(), req)
	if err != nil {
		return "", err
	}
	for _, c := range res.Contents {
		if tc, ok := c.(mcplib.TextResourceContents); ok {
			return tc.Text, nil
		}
	}
	return "", nil
}

// listedIDs are the execution ids of a weft_executions answer.
func listedIDs(out map[string]any) []string {
	var ids []string
	runs, _ := out["executions"].([]any)
	for _, r := range runs {
		if m, ok := r.(map[string]any); ok {
			id, _ := m["id"].(string)
			ids = append(ids, id)
		}
	}
	return ids
}

// TestIdentityReads: a key reads only the runs and chat sessions it started, the operator's
// (started without authentication), and — with the reviewer role — those waiting for a review it
// may decide; an admin reads everything (finding F1). Each read path is checked: weft_execution,
// weft://executions/{id}, weft_chat_read and weft_executions with and without awaitingReview.
func TestIdentityReads(t *testing.T) {
	c := dial(t)
	queue := "identity-reads"
	startWorker(t, c, queue, nil)
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	key := func(name string, roles ...string) string {
		k, _, err := auth.GenerateNamedKey(keyFile, name, roles)
		require.NoError(t, err)
		return k
	}
	anaKey, bobKey, ritaKey, rootKey := key("ana", "runner"), key("bob", "reader"), key("rita", "reviewer"), key("root", "admin")
	carlKey := key("carl", "runner")
	keys, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: server.Address, Namespace: server.Namespace, TaskQueue: queue, Wait: 30 * time.Second})
	srv := httptest.NewServer(g.HTTPHandler(keys, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer srv.Close()
	session := func(k string) *mcpSession { return newMCPSession(t, srv.URL+"/mcp", k, "reads") }
	ana, bob, rita, root := session(anaKey), session(bobKey), session(ritaKey), session(rootKey)

	// ana's run waits for a review; ana's chat session; the operator's run (no authentication)
	inline := map[string]any{"name": "reads-review", "steps": []any{
		map[string]any{"id": "check", "tool": "review", "inputs": map[string]any{"title": "ok?", "data": map[string]any{"amount": 12}}}}}
	out, msg, isErr := ana.call("weft_run_workflow", map[string]any{"definition": inline})
	require.False(t, isErr, msg)
	runID := out["executionId"].(string)
	out, msg, isErr = ana.call("weft_chat_start", map[string]any{})
	require.False(t, isErr, msg)
	chatID := out["session"].(string)
	w, err := dsl.Load("operator.json", []byte(`{"name":"reads-operator","steps":[
	  {"id":"check","tool":"review","inputs":{"title":"operator?","data":{"n":1}}}]}`))
	require.NoError(t, err)
	wc := weftclient.New(c, queue)
	opRun, err := wc.Start(context.Background(), w, weftclient.StartOptions{Source: "operator"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = wc.Cancel(context.Background(), opRun.ID, "test") })

	pending := func(s *mcpSession, id string) bool {
		st, _, isErr := s.call("weft_execution", map[string]any{"id": id})
		p, _ := st["pendingReviews"].([]any)
		return !isErr && len(p) == 1
	}
	require.Eventually(t, func() bool { return pending(ana, runID) }, 20*time.Second, 100*time.Millisecond)

	// bob (reader) reads none of ana's, through any path
	_, msg, isErr = bob.call("weft_execution", map[string]any{"id": runID})
	require.True(t, isErr, msg)
	require.Contains(t, msg, "execution "+runID+" was started by ana: bob may read only")
	_, err = bob.readResource("weft://executions/" + runID)
	require.Error(t, err)
	require.Contains(t, err.Error(), "was started by ana")
	_, msg, isErr = bob.call("weft_chat_read", map[string]any{"session": chatID})
	require.True(t, isErr, msg)
	require.Contains(t, msg, "chat session "+chatID+" was started by ana")

	// ana and the admin read ana's run, resource and chat
	for name, s := range map[string]*mcpSession{"ana": ana, "root": root} {
		require.True(t, pending(s, runID), name)
		text, err := s.readResource("weft://executions/" + runID)
		require.NoError(t, err, name)
		require.Contains(t, text, "pendingReviews", name)
		out, msg, isErr := s.call("weft_chat_read", map[string]any{"session": chatID})
		require.False(t, isErr, "%s: %s", name, msg)
		require.Equal(t, chatID, out["session"], name)
	}

	// everyone reads the operator's run
	for name, s := range map[string]*mcpSession{"ana": ana, "bob": bob, "rita": rita, "root": root} {
		require.Eventually(t, func() bool { return pending(s, opRun.ID) }, 20*time.Second, 100*time.Millisecond, name)
	}

	// listings: the admin sees both runs; bob sees the operator's and not ana's
	list := func(s *mcpSession, awaiting bool) []string {
		out, msg, isErr := s.call("weft_executions", map[string]any{"awaitingReview": awaiting, "limit": 100})
		require.False(t, isErr, msg)
		return listedIDs(out)
	}
	for _, awaiting := range []bool{false, true} {
		require.Eventually(t, func() bool {
			ids := list(root, awaiting)
			return slices.Contains(ids, runID) && slices.Contains(ids, opRun.ID)
		}, 20*time.Second, 100*time.Millisecond, "admin, awaitingReview %v", awaiting)
		ids := list(bob, awaiting)
		require.Contains(t, ids, opRun.ID, "bob, awaitingReview %v", awaiting)
		require.NotContains(t, ids, runID, "bob, awaitingReview %v", awaiting)
		require.Contains(t, list(ana, awaiting), runID, "ana, awaitingReview %v", awaiting)
	}
	// rita (reviewer) sees ana's run while it waits for her decision
	require.Contains(t, list(rita, true), runID)
	require.NotContains(t, list(rita, false), runID, "a plain listing shows a reviewer no one else's runs")

	// the console with logins applies the same rule to its run pages and APIs
	cs, err := console.New(console.Options{Keys: keys, RequireLogin: true, Client: wc})
	require.NoError(t, err)
	csrv := httptest.NewServer(cs.Handler())
	defer csrv.Close()
	login := func(key string) func(path string) (int, string) {
		jar, _ := cookiejar.New(nil)
		hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := hc.PostForm(csrv.URL+"/login", url.Values{"key": {key}})
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		return func(path string) (int, string) {
			resp, err := hc.Get(csrv.URL + path)
			require.NoError(t, err)
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
	}
	for _, tc := range []struct {
		who      string
		key      string
		readsAna bool
	}{{"bob", bobKey, false}, {"ana", anaKey, true}, {"rita", ritaKey, true}, {"root", rootKey, true}} {
		get := login(tc.key)
		for _, path := range []string{"/api/runs/" + runID, "/runs/" + runID, "/v1/runs/" + runID + "/steps/check/inputs", "/v1/runs/" + runID} {
			code, page := get(path)
			if tc.readsAna {
				require.Equal(t, http.StatusOK, code, "%s %s: %s", tc.who, path, page)
			} else {
				require.Equal(t, http.StatusForbidden, code, "%s %s: %s", tc.who, path, page)
				require.Contains(t, page, "was started by ana", path)
			}
		}
		code, page := get("/api/runs/" + opRun.ID)
		require.Equal(t, http.StatusOK, code, "%s reads the operator's run: %s", tc.who, page)
		code, page = get("/api/runs?limit=50")
		require.Equal(t, http.StatusOK, code, page)
		require.Equal(t, tc.readsAna && tc.who != "rita", strings.Contains(page, runID), "%s's run list: %s", tc.who, page)
		code, page = get("/api/reviews")
		require.Equal(t, http.StatusOK, code, page)
		require.Equal(t, tc.readsAna, strings.Contains(page, runID), "%s's reviews: %s", tc.who, page)
	}

	// rita reads ana's waiting run, decides it, and then may no longer read it
	require.True(t, pending(rita, runID))
	_, err = rita.readResource("weft://executions/" + runID)
	require.NoError(t, err)
	_, msg, isErr = rita.call("weft_review", map[string]any{"id": runID, "decision": "approve"})
	require.False(t, isErr, msg)
	require.Eventually(t, func() bool {
		st, _, _ := ana.call("weft_execution", map[string]any{"id": runID})
		return st["status"] == "completed"
	}, 20*time.Second, 100*time.Millisecond)
	_, msg, isErr = rita.call("weft_execution", map[string]any{"id": runID})
	require.True(t, isErr, msg)
	require.Contains(t, msg, "was started by ana: rita may read only")
	_, msg, isErr = rita.call("weft_chat_read", map[string]any{"session": chatID})
	require.True(t, isErr, "no review waits in ana's chat: %s", msg)

	// a retry reuses a run's outputs: another runner may not retry ana's run
	carl := session(carlKey)
	_, msg, isErr = carl.call("weft_retry", map[string]any{"id": runID})
	require.True(t, isErr, msg)
	require.Contains(t, msg, "was started by ana: carl may read only")
}
