package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/weftworks/weft/activities"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/starter"
)

// waitForReview polls the state query until the run has a pending review. The condition runs
// on Eventually's goroutine, so it reports instead of failing; the test goroutine fails.
func waitForReview(t *testing.T, c client.Client, id string) *weftv1.ExecutionState {
	t.Helper()
	var (
		mu      sync.Mutex
		found   *weftv1.ExecutionState
		lastErr error
	)
	ok := assert.Eventually(t, func() bool {
		v, err := c.QueryWorkflow(context.Background(), id, "", runwire.QueryState)
		var st weftv1.ExecutionState
		if err == nil {
			err = v.Get(&st)
		}
		mu.Lock()
		defer mu.Unlock()
		if lastErr = err; err != nil || len(st.PendingReviews) == 0 {
			return false
		}
		found = &st
		return true
	}, 30*time.Second, 100*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if !ok {
		t.Fatalf("run %s never awaited review (last state query error: %v)", id, lastErr)
	}
	return found
}

func TestRunPausesForReviewAndResumesAfterCLIApproval(t *testing.T) {
	c := dial(t)
	queue := "cli-review"
	startWorker(t, c, queue, nil)
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	var followed syncBuffer // the follower's output so far
	go func() {
		var errOut bytes.Buffer
		code := starter.Execute([]string{"run", "approval-demo", "--id", "cli-review-1", "--input", "version=9.9", "--poll", "50ms",
			"--address", server.Address, "--namespace", server.Namespace, "--task-queue", queue}, strings.NewReader(""), &followed, &errOut)
		done <- result{code, followed.String(), errOut.String()}
	}()
	waitForReview(t, c, "cli-review-1")
	// The follower must have shown the paused step before the decision lands.
	require.Eventually(t, func() bool { return strings.Contains(followed.String(), "⏸ Approve the release notes") },
		15*time.Second, 20*time.Millisecond, "the follower never printed the paused step")

	// Visible to `weft reviews` through the WeftStatus search attribute (visibility is eventually consistent).
	require.Eventually(t, func() bool {
		_, out, _ := weft(t, "", "reviews")
		return strings.Contains(out, "cli-review-1") && strings.Contains(out, "Publish release 9.9?")
	}, 15*time.Second, 200*time.Millisecond)

	code, _, errOut := weft(t, "", "review", "cli-review-1", "approve", "--step", "published")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `step "published" of run cli-review-1 is not awaiting review (pending: approval)`)

	code, out, errOut := weft(t, "", "review", "cli-review-1", "approve", "--reviewer", "ana")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "approve recorded for approval")

	r := <-done
	require.Equal(t, 0, r.code, r.out+r.err)
	require.Contains(t, r.out, "⏸ Approve the release notes")
	require.Contains(t, r.out, "✔ Publish")
	require.Contains(t, r.out, `"announcement": "Release 9.9: 3 changes (approved by ana)"`)

	code, out, _ = weft(t, "", "status", "cli-review-1", "--json")
	require.Equal(t, 0, code)
	var st map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &st))
	require.Equal(t, "completed", st["status"])

	code, out, _ = weft(t, "", "history", "cli-review-1")
	require.Equal(t, 0, code)
	require.Contains(t, out, "approve by ana")
}

// TestSignalLikeTemporalCLI sends the decision the way `temporal workflow signal --input` does:
// a plain JSON payload on the review signal.
func TestSignalLikeTemporalCLI(t *testing.T) {
	c := dial(t)
	queue := "signal"
	startWorker(t, c, queue, nil)
	code, out, errOut := weft(t, queue, "run", "approval-demo", "--id", "signal-1", "--detach")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Started signal-1")
	waitForReview(t, c, "signal-1")
	require.NoError(t, c.SignalWorkflow(context.Background(), "signal-1", "", runwire.SignalReview,
		json.RawMessage(`{"decision":"reject","reviewer":"cy","comment":"too early"}`)))
	var res weftv1.RunResult
	err := c.GetWorkflow(context.Background(), "signal-1", "").Get(context.Background(), &res)
	require.ErrorContains(t, err, `step "approval": rejected by cy: too early`)

	code, out, _ = weft(t, "", "status", "signal-1")
	require.Equal(t, 1, code, "a failed run's status exits 1")
	require.Contains(t, out, "✗ Approve the release notes")
}

func TestInvalidFileNeverStartsARun(t *testing.T) {
	code, _, errOut := weft(t, "nobody-listens", "run", "../testdata/bad/unknown-tool.json")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `unknown tool "serch"`)
	code, _, errOut = weft(t, "nobody-listens", "run", "approval-demo", "--input", "nope=1")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `unknown input "nope"`)
}

func TestCancelAndRuns(t *testing.T) {
	c := dial(t)
	queue := "cancel"
	startWorker(t, c, queue, nil)
	code, _, _ := weft(t, queue, "run", "approval-demo", "--id", "cancel-1", "--detach")
	require.Equal(t, 0, code)
	waitForReview(t, c, "cancel-1")
	// weft status --follow shows the detached run until it ends, and says who stopped it.
	type result struct {
		code        int
		out, errOut string
	}
	followed := make(chan result, 1)
	go func() {
		code, out, errOut := weft(t, "", "status", "--follow", "--poll", "100ms", "cancel-1")
		followed <- result{code, out, errOut}
	}()
	require.Eventually(t, func() bool {
		code, out, _ := weft(t, "", "status", "cancel-1")
		return code == 0 && strings.Contains(out, "awaiting")
	}, 15*time.Second, 100*time.Millisecond, "a waiting run's status exits 0")
	code, out, _ := weft(t, "", "cancel", "cancel-1")
	require.Equal(t, 0, code, out)
	err := c.GetWorkflow(context.Background(), "cancel-1", "").Get(context.Background(), nil)
	require.ErrorContains(t, err, "canceled")
	select {
	case f := <-followed:
		require.Equal(t, 1, f.code, "a cancelled run ends status --follow with 1\n%s%s", f.out, f.errOut)
		require.Contains(t, f.out, "cancel-1")
		require.Regexp(t, `Cancelled by \S+ \(weft CLI\) at step approval: the run was stopped on request`, f.errOut)
		require.NotContains(t, f.errOut, "Failed:", "a cancellation is not reported as a failure")
	case <-time.After(30 * time.Second):
		t.Fatal("weft status --follow did not end when the run was cancelled")
	}
	code, out, _ = weft(t, "", "status", "cancel-1")
	require.Equal(t, 1, code, "a cancelled run's status exits 1\n%s", out)
	require.Eventually(t, func() bool {
		_, out, _ := weft(t, "", "runs", "--json")
		return strings.Contains(out, `"id": "cancel-1"`) && strings.Contains(out, `"status": "cancelled"`)
	}, 15*time.Second, 200*time.Millisecond)
}

// TestToolStepsAreActivitiesNamedAfterTheTool runs a multi-collection search with fake tools and
// checks the history: one activity per tool step, named after the tool, with the step name as
// summary; the data step (merge) leaves no event.
func TestToolStepsAreActivitiesNamedAfterTheTool(t *testing.T) {
	c := dial(t)
	queue := "dag"
	startWorker(t, c, queue, fakeHandlers(nil))
	code, out, errOut := weft(t, queue, "run", "multi-collection-search", "--id", "dag-1", "--input", "query=limits", "--json")
	require.Equal(t, 0, code, out+errOut)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Equal(t, float64(3), res["output"].(map[string]any)["resultCount"])

	types, summaries := activityEvents(t, c, "dag-1")
	require.Equal(t, []string{"query", "query", "rerank"}, types)
	require.ElementsMatch(t, []string{"Search the first collection", "Search the second collection", "Rerank the union"}, summaries)
}

func fakeHandlers(se *sideEffects) map[string]activities.Handler {
	h := map[string]activities.Handler{
		"query":  fakeSearch,
		"search": fakeSearch,
		"rerank": fakeRerank,
		"llm":    scriptedLLM,
		"ingest": fakeIngest(se),
	}
	if se != nil {
		h["embed"] = countingEmbed(se)
	}
	return h
}

func writeHistory(t *testing.T, name string, data []byte) {
	path := filepath.Join("..", "workflows", "testdata", "histories", name+".json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

// TestCLIMessagesAPersonCanActOn: a run that does not exist, a cancel of a finished run, an id
// that is taken or malformed, nothing to review: each says what is wrong and what to do.
func TestCLIMessagesAPersonCanActOn(t *testing.T) {
	c := dial(t)
	queue := "cli-messages"
	startWorker(t, c, queue, nil)
	code, _, errOut := weft(t, queue, "run", "approval-demo", "--id", "msg-release-1", "--detach")
	require.Equal(t, 0, code, errOut)
	waitForReview(t, c, "msg-release-1")

	code, _, errOut = weft(t, queue, "status", "no-such-run")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `no run "no-such-run"`)
	require.Eventually(t, func() bool {
		_, _, errOut = weft(t, queue, "status", "msg-release-2")
		return strings.Contains(errOut, "did you mean msg-release-1?")
	}, 10*time.Second, 100*time.Millisecond, "near matches come from the run list (visibility is eventually consistent)")

	code, _, errOut = weft(t, queue, "run", "approval-demo", "--id", "msg-release-1", "--detach")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `a run with id "msg-release-1" is already running (workflow approval-demo)`)
	require.Contains(t, errOut, "follow that one with `weft status --follow msg-release-1`", "the hint follows, as it says")
	for _, bad := range []string{"has spaces", "emoji-🙂", strings.Repeat("x", 5000)} {
		code, _, errOut = weft(t, queue, "run", "approval-demo", "--id", bad, "--detach")
		require.Equal(t, 2, code, bad)
		require.Contains(t, errOut, "use 1 to 200 letters, digits", bad)
	}

	code, out, errOut := weft(t, queue, "review", "msg-release-1", "approve", "--reviewer", "ana")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "approve recorded for approval")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, c.GetWorkflow(ctx, "msg-release-1", "").Get(ctx, nil))
	code, _, errOut = weft(t, queue, "cancel", "msg-release-1")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "cannot cancel msg-release-1: it already completed")
	code, _, errOut = weft(t, queue, "review", "msg-release-1", "approve", "--reviewer", "ana")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "run msg-release-1 has no pending review")
}
