package activities_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/internal/webhook"
)

type received struct {
	mu     sync.Mutex
	bodies [][]byte
	heads  []http.Header
}

func TestNotifyDelivers(t *testing.T) {
	var got received
	status := http.StatusNoContent
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.mu.Lock()
		got.bodies, got.heads = append(got.bodies, b), append(got.heads, r.Header.Clone())
		got.mu.Unlock()
		w.WriteHeader(status)
	}))
	defer srv.Close()
	allow := activities.Config{HTTPAllow: []string{"127.0.0.1"}, Webhooks: srv.URL + "/hook", WebhookSecret: "s3cret", ConsoleURL: "https://weft.example"}
	d := webhook.Delivery{ID: "r-notify-3-0", Route: webhook.Route{Name: "webhook-1", Events: webhook.DefaultEvents},
		Notification: webhook.Notification{Event: webhook.RunFailed, Seq: 3, RunID: "r", Workflow: "w", Error: "step \"a\": boom"}}

	require.NoError(t, activities.NewTools(allow).Notify(context.Background(), d))
	require.Len(t, got.bodies, 1)
	h := got.heads[0]
	require.NoError(t, webhook.Verify("s3cret", h, got.bodies[0], time.Now(), 0), "signed with the HMAC-SHA256 of its timestamp and body")
	require.NotEmpty(t, h.Get("X-Weft-Timestamp"))
	require.Equal(t, "r-notify-3-0", h.Get("X-Weft-Delivery"))
	require.Equal(t, "run.failed", h.Get("X-Weft-Event"))
	require.Contains(t, string(got.bodies[0]), `"url":"https://weft.example/runs/r"`)

	noSecret := allow
	noSecret.WebhookSecret = ""
	require.NoError(t, activities.NewTools(noSecret).Notify(context.Background(), d))
	require.Empty(t, got.heads[1].Get("X-Weft-Signature"), "no secret, no signature")

	nonRetryable := func(t *testing.T, err error, contains string) {
		t.Helper()
		var ae *temporal.ApplicationError
		require.True(t, errors.As(err, &ae), "%v", err)
		require.True(t, ae.NonRetryable(), "%v", err)
		require.ErrorContains(t, err, contains)
	}
	for _, tc := range []struct {
		name      string
		cfg       activities.Config
		d         webhook.Delivery
		status    int
		retryable bool
		err       string
	}{
		{name: "down: tried again", cfg: allow, d: d, status: http.StatusServiceUnavailable, retryable: true, err: "answered 503 Service Unavailable: trying again"},
		{name: "too many requests: tried again", cfg: allow, d: d, status: http.StatusTooManyRequests, retryable: true, err: "429"},
		{name: "refused: not again", cfg: allow, d: d, status: http.StatusBadRequest, err: "answered 400 Bad Request: not trying again"},
		{name: "loopback without WEFT_HTTP_ALLOW", cfg: activities.Config{Webhooks: srv.URL}, d: d, err: "refusing to connect to 127.0.0.1: private, loopback and link-local addresses need WEFT_HTTP_ALLOW"},
		{name: "no longer declared", cfg: allow, d: webhook.Delivery{Route: webhook.Route{Name: "ops"}}, err: `webhook "ops" is no longer declared in WEFT_WEBHOOKS`},
		{name: "a client's URL", cfg: allow, d: webhook.Delivery{Origin: "client", Route: webhook.Route{URL: srv.URL}}, err: "a definition sent by a client may only name the operator's webhooks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status = tc.status
			n := len(got.bodies)
			err := activities.NewTools(tc.cfg).Notify(context.Background(), tc.d)
			if tc.retryable {
				require.ErrorContains(t, err, tc.err)
				var ae *temporal.ApplicationError
				require.False(t, errors.As(err, &ae) && ae.NonRetryable(), "%v", err)
				return
			}
			nonRetryable(t, err, tc.err)
			if tc.status == 0 {
				require.Len(t, got.bodies, n, "nothing was sent")
			}
		})
	}
}

func TestNotifyPlanNeverFails(t *testing.T) {
	p, err := activities.NewTools(activities.Config{Webhooks: "/nonexistent/hooks.json"}).NotifyPlan(context.Background(), webhook.PlanRequest{Notify: []webhook.Entry{{To: "ops"}}})
	require.NoError(t, err)
	require.Empty(t, p.Routes)
	require.Len(t, p.Warnings, 1)
	require.Contains(t, p.Warnings[0], "no webhook is notified until this is fixed")
}
