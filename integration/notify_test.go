package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"

	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/internal/webhook"
	"github.com/weftworks/weft/workflows/dsl"
)

// receiver is a webhook that answers 503 while it is down and counts what it got.
type receiver struct {
	mu       sync.Mutex
	up       bool
	attempts map[string]int // by delivery id
	got      map[string]int // accepted, by delivery id
	what     map[string]string
	badSig   int
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	id := r.Header.Get(webhook.DeliveryHeader)
	rc.attempts[id]++
	if !rc.up {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	if webhook.Verify("s3cret", r.Header, body, time.Now(), 0) != nil {
		rc.badSig++
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	rc.got[id]++
	rc.what[id] = r.URL.Path + " " + string(body)
}

func (rc *receiver) everyAttemptedTwice(ids []string) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, id := range ids {
		if rc.attempts[id] < 2 {
			return false
		}
	}
	return true
}

// TestWebhooksGetEveryEventOnce: a receiver that is down while a run asks for a review, is
// approved and completes (the run does not wait for it), then comes back, gets every selected
// event once, signed; the file's Slack entry gets {"text": ...} with the console link.
func TestWebhooksGetEveryEventOnce(t *testing.T) {
	c := dial(t)
	queue := "notify-q"
	rc := &receiver{attempts: map[string]int{}, got: map[string]int{}, what: map[string]string{}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	hooks := filepath.Join(t.TempDir(), "webhooks.json")
	require.NoError(t, os.WriteFile(hooks, []byte(`{"webhooks": [
	  {"name": "ops", "url": "`+srv.URL+`/ops", "events": ["run.started", "review.requested", "review.decided", "run.completed", "run.failed"]},
	  {"name": "pager", "url": "`+srv.URL+`/pager", "runs": "named"}]}`), 0o600))
	startWorkerWithConfig(t, queue, activities.Config{HTTPAllow: []string{"127.0.0.1"}, Webhooks: hooks,
		WebhookSecret: "s3cret", ConsoleURL: "https://weft.example.com"}, nil)

	w, err := dsl.Load("notify.json", []byte(`{"name": "expenses",
	  "notify": [{"to": "`+srv.URL+`/slack", "slack": true, "events": ["review.requested"]}],
	  "steps": [{"id": "approve", "tool": "review", "inputs": {"title": "Approve 120 EUR?", "data": {"amount": 120}}}],
	  "output": "{{ approve.output.decision }}"}`))
	require.NoError(t, err)
	wc := weftclient.New(c, queue)
	ctx := context.Background()
	run, err := wc.Start(ctx, w, weftclient.StartOptions{ID: "notify-1"})
	require.NoError(t, err)
	waitForGate(t, wc, run.ID, "approve")
	_, err = wc.Review(ctx, run.ID, weftclient.Decision{Decision: "approve", Reviewer: "ana"})
	require.NoError(t, err)
	res, err := run.Get(ctx)
	require.NoError(t, err, "the run completes while its webhook is down")
	require.Equal(t, `"approve"`, protoJSON(t, res.Output))

	// The run has closed; its deliveries go on. Which ones: every event "ops" selects (route 0)
	// and the review for the file's Slack URL (route 1); "pager" is only for runs that name it.
	page, err := wc.Events(ctx, run.ID, 0)
	require.NoError(t, err)
	var ids []string
	wantEvent := map[string]string{}
	for _, e := range page.Events {
		switch e.Type {
		case "run_started", "review_requested", "review_decided", "run_completed":
			id := run.ID + "-notify-" + itoa(e.Seq) + "-0"
			ids, wantEvent[id] = append(ids, id), strings.Replace(e.Type, "_", ".", 1)
		}
		if e.Type == "review_requested" {
			id := run.ID + "-notify-" + itoa(e.Seq) + "-1"
			ids, wantEvent[id] = append(ids, id), "slack"
		}
	}
	require.Len(t, ids, 5)
	require.Eventually(t, func() bool { return rc.everyAttemptedTwice(ids) }, time.Minute, 20*time.Millisecond,
		"every delivery is tried again while the receiver is down")

	rc.mu.Lock()
	rc.up = true
	rc.mu.Unlock()
	// Each delivery's workflow completes once the receiver took it.
	for _, id := range ids {
		require.Eventually(t, func() bool {
			d, err := c.DescribeWorkflowExecution(ctx, id, "")
			return err == nil && d.WorkflowExecutionInfo.Status == enums.WORKFLOW_EXECUTION_STATUS_COMPLETED
		}, time.Minute, 20*time.Millisecond, "delivery %s", id)
	}

	rc.mu.Lock()
	defer rc.mu.Unlock()
	require.Zero(t, rc.badSig)
	var got []string
	for id, n := range rc.got {
		require.Equal(t, 1, n, "delivery %s arrived once", id)
		got = append(got, id)
	}
	sort.Strings(got)
	sort.Strings(ids)
	require.Equal(t, ids, got, "every event arrived, and nothing else")
	for _, id := range ids {
		path, body, _ := strings.Cut(rc.what[id], " ")
		if wantEvent[id] == "slack" {
			require.Equal(t, "/slack", path)
			var m map[string]string
			require.NoError(t, json.Unmarshal([]byte(body), &m))
			require.Equal(t, map[string]string{"text": "Review waiting in expenses (step approve): Approve 120 EUR? (notify-1) <https://weft.example.com/runs/notify-1|open in the weft console>"}, m)
			continue
		}
		require.Equal(t, "/ops", path)
		var p webhook.Payload
		require.NoError(t, json.Unmarshal([]byte(body), &p))
		require.Equal(t, wantEvent[id], p.Event)
		require.Equal(t, id, p.ID)
		require.Equal(t, "notify-1", p.RunID)
		require.Equal(t, "expenses", p.Workflow)
		require.Equal(t, "https://weft.example.com/runs/notify-1", p.URL)
		if strings.HasPrefix(p.Event, "review.") {
			require.Equal(t, "approve", p.Step)
			require.Equal(t, "Approve 120 EUR?", p.Title)
		}
		if p.Event == "review.decided" {
			require.Equal(t, "approve", p.Decision)
		}
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }
