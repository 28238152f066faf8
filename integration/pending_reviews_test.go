package integration

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/console"
	"github.com/weftworks/weft/internal/testkit/fakellm"
	"github.com/weftworks/weft/mcp"
	"github.com/weftworks/weft/runwire"
)

// TestPendingReviewsEverywhere: one listing (client.PendingReviews) holds a run's review, the
// review of a child run (under the run that started it, and where it lives) and a chat session's
// tool-call approval; weft reviews, the console's reviews and MCP's weft_executions show the same
// three, and each is decided with the id they show.
func TestPendingReviewsEverywhere(t *testing.T) {
	c := dial(t)
	queue := "pending-everywhere"
	fake := fakellm.New(fakellm.ToolCall("c1", "search", `{"query":"retries"}`), fakellm.Text("Retries back off."))
	defer fake.Close()
	startWorkerWithConfig(t, queue, activities.Config{OpenAIBaseURL: fake.BaseURL, ChatModel: "local-model"}, map[string]activities.Handler{"search": fakeSearch})
	wc := weftclient.New(c, queue)
	ctx := context.Background()

	code, out, errOut := weft(t, queue, "run", "approval-demo", "--id", "pending-run", "--input", "version=1.0", "--detach")
	require.Equal(t, 0, code, out+errOut)
	parent := filepath.Join(t.TempDir(), "parent.json")
	require.NoError(t, os.WriteFile(parent, []byte(`{"name":"pending-parent","steps":[
	  {"id":"release","tool":"workflow","inputs":{"workflow":"approval-demo","inputs":{"version":"2.0"}}}],"output":"{{ release.output.decision }}"}`), 0o644))
	code, out, errOut = weft(t, queue, "run", parent, "--id", "pending-parent", "--detach")
	require.Equal(t, 0, code, out+errOut)
	chat, _, err := wc.StartChat(ctx, "pending-chat", weftclient.ChatOptions{Tools: []string{"search"}, Approve: []string{"search"}, Collection: "docs"})
	require.NoError(t, err)
	answered := make(chan string, 1)
	go func() {
		turn, err := wc.Send(ctx, chat, "how do retries work?", "")
		if err != nil {
			answered <- "error: " + err.Error()
			return
		}
		answered <- turn.Answer
	}()
	waitForGate(t, wc, "pending-run", "approval")
	waitForGate(t, wc, "pending-parent", "approval")
	waitForGate(t, wc, chat, "chat/c1")

	// The client's listing (visibility is eventually consistent: wait for all three).
	mine := func(list []weftclient.PendingReview) map[string]weftclient.PendingReview {
		out := map[string]weftclient.PendingReview{}
		for _, p := range list {
			if strings.HasPrefix(p.Run.ID, "pending-") {
				out[p.In.ID+" "+p.Review.Id] = p
			}
		}
		return out
	}
	var got map[string]weftclient.PendingReview
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		list, err := wc.PendingReviews(ctx, weftclient.ListOptions{})
		assert.NoError(ct, err)
		got = mine(list)
		assert.Len(ct, got, 3, "a run's, a child run's and a chat session's review")
	}, 20*time.Second, 100*time.Millisecond)
	run := got["pending-run approval"]
	require.Equal(t, "pending-run", run.Run.ID)
	require.Equal(t, "approval-demo", run.Run.Workflow)
	require.False(t, run.Chat)
	child := got["pending-parent/release approval"]
	require.Equal(t, "pending-parent", child.Run.ID, "a child run's review belongs to the run that started it")
	require.Equal(t, "pending-parent", child.Run.Workflow)
	require.Equal(t, "approval-demo", child.In.Workflow, "and says where it lives")
	require.Equal(t, "pending-parent/release", child.Review.ExecutionId)
	call := got["pending-chat chat/c1"]
	require.True(t, call.Chat, "a chat session's tool call")
	require.Equal(t, "pending-chat", call.Run.ID)
	require.Equal(t, runwire.GateToolCall, call.Review.Kind)
	require.Equal(t, "search", call.Review.Tool)
	only, err := wc.PendingReviews(ctx, weftclient.ListOptions{Workflow: "pending-parent"})
	require.NoError(t, err)
	require.Len(t, mine(only), 1, "o.Workflow keeps the runs of one workflow")

	// weft reviews: one line per review, named by the run it lives in.
	code, out, errOut = weft(t, queue, "reviews")
	require.Equal(t, 0, code, out+errOut)
	for _, want := range []string{"pending-run ", "pending-parent/release ", "pending-chat ", "chat/c1"} {
		require.Contains(t, out, want)
	}
	code, out, errOut = weft(t, queue, "reviews", "--json")
	require.Equal(t, 0, code, out+errOut)
	var listed []struct {
		Run, Of string
		Chat    bool
		Reviews []map[string]any
	}
	require.NoError(t, json.Unmarshal([]byte(out), &listed))
	byRun := map[string]int{}
	for i, l := range listed {
		byRun[l.Run] = i
	}
	require.Contains(t, byRun, "pending-run")
	require.Equal(t, "pending-parent", listed[byRun["pending-parent/release"]].Of)
	require.True(t, listed[byRun["pending-chat"]].Chat)
	require.Equal(t, "chat/c1", listed[byRun["pending-chat"]].Reviews[0]["id"])

	// The console's reviews (the page and the nav's count read the same answer).
	srv, err := console.New(console.Options{Client: wc, WorkflowsDir: t.TempDir(), Reviewer: "console-test", PollInterval: 100 * time.Millisecond})
	require.NoError(t, err)
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	resp, err := http.Get(hs.URL + "/api/reviews")
	require.NoError(t, err)
	var page struct {
		Reviews []struct {
			Run, In string
			Chat    bool
			Review  map[string]any
		}
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&page))
	resp.Body.Close()
	shown := map[string]string{}
	for _, r := range page.Reviews {
		if strings.HasPrefix(r.Run, "pending-") {
			shown[r.Run+" "+r.Review["id"].(string)] = r.In
		}
	}
	require.Equal(t, map[string]string{"pending-run approval": "", "pending-parent approval": "pending-parent/release", "pending-chat chat/c1": ""}, shown)

	// MCP: weft_executions with awaitingReview lists the three executions and their reviews.
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	key, _, err := auth.GenerateNamedKey(keyFile, "agent", nil)
	require.NoError(t, err)
	keys, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: server.Address, Namespace: server.Namespace, TaskQueue: queue, Wait: 30 * time.Second})
	ms := httptest.NewServer(g.HTTPHandler(keys, []string{"127.0.0.1"}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer ms.Close()
	answer, msg, isErr := newMCPSession(t, ms.URL+"/mcp", key, "agent").call("weft_executions", map[string]any{"awaitingReview": true})
	require.False(t, isErr, msg)
	b, _ := json.Marshal(answer)
	var exec struct {
		Executions []struct{ ID string }
		Reviews    []struct {
			Chat   bool
			In     struct{ ID string }
			Review struct{ ID string }
		}
	}
	require.NoError(t, json.Unmarshal(b, &exec))
	var ids, reviews []string
	for _, e := range exec.Executions {
		if strings.HasPrefix(e.ID, "pending-") {
			ids = append(ids, e.ID)
		}
	}
	for _, r := range exec.Reviews {
		if strings.HasPrefix(r.In.ID, "pending-") {
			reviews = append(reviews, r.In.ID+" "+r.Review.ID)
		}
	}
	require.ElementsMatch(t, []string{"pending-run", "pending-parent/release", "pending-chat"}, ids)
	require.ElementsMatch(t, []string{"pending-run approval", "pending-parent/release approval", "pending-chat chat/c1"}, reviews)

	// Each is decided with the id shown; then none is listed.
	for _, in := range []string{"pending-run", "pending-parent/release"} {
		code, out, errOut = weft(t, queue, "review", in, "approve", "--reviewer", "ana")
		require.Equal(t, 0, code, out+errOut)
	}
	code, out, errOut = weft(t, queue, "review", "pending-chat", "approve", "--id", "chat/c1", "--reviewer", "ana")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "approve recorded for chat/c1")
	select {
	case answer := <-answered:
		require.Equal(t, "Retries back off.", answer)
	case <-time.After(30 * time.Second):
		t.Fatal("the chat turn did not finish after its tool call was approved")
	}
	for _, id := range []string{"pending-run", "pending-parent"} {
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := wc.Result(rctx, id)
		cancel()
		require.NoError(t, err, id)
	}
	require.Eventually(t, func() bool {
		list, err := wc.PendingReviews(ctx, weftclient.ListOptions{})
		return err == nil && len(mine(list)) == 0
	}, 20*time.Second, 100*time.Millisecond)
}
