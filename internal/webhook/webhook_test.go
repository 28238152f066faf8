package webhook_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/console"
	"github.com/weftworks/weft/internal/webhook"
)

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	n := 0
	file := func(s string) string {
		n++
		p := filepath.Join(dir, fmt.Sprintf("hooks%d.json", n))
		require.NoError(t, os.WriteFile(p, []byte(s), 0o600))
		return p
	}
	for _, tc := range []struct {
		name, setting string
		want          []webhook.Webhook
		err           string
	}{
		{name: "none", setting: ""},
		{name: "urls", setting: "https://a.example/x, https://b.example/y",
			want: []webhook.Webhook{{Name: "webhook-1", URL: "https://a.example/x"}, {Name: "webhook-2", URL: "https://b.example/y"}}},
		{name: "file", setting: file(`{"webhooks": [{"name": "ops", "url": "https://hooks.slack.com/services/T/B/secret", "events": ["review.requested"], "slack": true, "runs": "named"}, {"url": "https://c.example"}]}`),
			want: []webhook.Webhook{{Name: "ops", URL: "https://hooks.slack.com/services/T/B/secret", Events: []string{"review.requested"}, Slack: true, Runs: "named"}, {Name: "webhook-2", URL: "https://c.example"}}},
		{name: "unknown event", setting: file(`{"webhooks": [{"url": "https://c.example", "events": ["run.exploded"]}]}`), err: `event "run.exploded" is not one weft sends`},
		{name: "unknown field", setting: file(`{"webhooks": [{"url": "https://c.example", "token": "x"}]}`), err: `unknown field "token"`},
		{name: "not a url", setting: file(`{"webhooks": [{"name": "ops", "url": "ftp://c.example/secret"}]}`), err: `webhook "ops": webhook url "ftp://c.example/…": want an absolute http:// or https:// URL`},
		{name: "twice", setting: file(`{"webhooks": [{"name": "a", "url": "https://c.example"}, {"name": "a", "url": "https://d.example"}]}`), err: `webhook "a" is declared twice`},
		{name: "runs", setting: file(`{"webhooks": [{"url": "https://c.example", "runs": "some"}]}`), err: `want "all" (every run) or "named"`},
		{name: "missing file", setting: filepath.Join(dir, "nope.json"), err: "WEFT_WEBHOOKS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := webhook.Load(tc.setting)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				require.NotContains(t, err.Error(), "secret", "a webhook's path is its secret: errors leave it out")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestResolve(t *testing.T) {
	hooks := []webhook.Webhook{
		{Name: "all", URL: "https://a.example"},
		{Name: "ops", URL: "https://hooks.slack.com/x", Slack: true, Runs: "named", Events: []string{"review.requested"}},
		{Name: "audit", URL: "https://b.example", Runs: "named"},
	}
	for _, tc := range []struct {
		name     string
		req      webhook.PlanRequest
		routes   []webhook.Route
		warnings []string
	}{
		{name: "nothing named: the webhooks of every run", req: webhook.PlanRequest{Workflow: "w"},
			routes: []webhook.Route{{Name: "all", Events: webhook.DefaultEvents}}},
		{name: "names select named webhooks, with their own events or the entry's",
			req: webhook.PlanRequest{Notify: []webhook.Entry{{To: "ops"}, {To: "audit", Events: []string{"run.failed"}}}},
			routes: []webhook.Route{{Name: "all", Events: webhook.DefaultEvents},
				{Name: "ops", Events: []string{"review.requested"}, Slack: true}, {Name: "audit", Events: []string{"run.failed"}}}},
		{name: "an operator file's URL",
			req:    webhook.PlanRequest{Notify: []webhook.Entry{{To: "https://c.example/h", Slack: true}}},
			routes: []webhook.Route{{Name: "all", Events: webhook.DefaultEvents}, {URL: "https://c.example/h", Events: webhook.DefaultEvents, Slack: true}}},
		{name: "a client's URL is left out; its names are kept",
			req:      webhook.PlanRequest{Origin: "client", Notify: []webhook.Entry{{To: "https://evil.example/steal"}, {To: "ops"}}},
			routes:   []webhook.Route{{Name: "all", Events: webhook.DefaultEvents}, {Name: "ops", Events: []string{"review.requested"}, Slack: true}},
			warnings: []string{"notify: a definition sent by a client may only name the operator's webhooks, not a URL (https://evil.example/…): nothing is sent to it"}},
		{name: "an undeclared name",
			req:      webhook.PlanRequest{Notify: []webhook.Entry{{To: "pager"}}},
			routes:   []webhook.Route{{Name: "all", Events: webhook.DefaultEvents}},
			warnings: []string{`notify: webhook "pager" is not declared on the worker (WEFT_WEBHOOKS declares: all, ops, audit): nothing is sent to it`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := webhook.Resolve(hooks, tc.req)
			require.Equal(t, tc.routes, p.Routes)
			require.Equal(t, tc.warnings, p.Warnings)
		})
	}
}

func TestBodyAndSignature(t *testing.T) {
	n := webhook.Notification{Event: webhook.ReviewRequested, Seq: 7, Time: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		RunID: "weft-x-1", Workflow: "expenses", Step: "approve", Title: "Approve 120 EUR?"}
	d := webhook.Delivery{ID: "weft-x-1-notify-7-0", Notification: n}

	body, err := webhook.Body(d, "https://weft.example.com/")
	require.NoError(t, err)
	require.JSONEq(t, `{"id": "weft-x-1-notify-7-0", "event": "review.requested", "seq": 7, "time": "2025-01-02T03:04:05Z",
		"run_id": "weft-x-1", "workflow": "expenses", "step": "approve", "title": "Approve 120 EUR?",
		"url": "https://weft.example.com/runs/weft-x-1"}`, string(body))

	sent := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	sig := webhook.Sign("s3cret", sent.Unix(), body)
	require.Equal(t, "sha256=", sig[:7])
	require.Len(t, sig, 7+64)
	h := http.Header{}
	h.Set(webhook.TimestampHeader, strconv.FormatInt(sent.Unix(), 10))
	h.Set(webhook.SignatureHeader, sig)
	require.NoError(t, webhook.Verify("s3cret", h, body, sent.Add(time.Minute), 0))
	require.ErrorIs(t, webhook.Verify("other", h, body, sent, 0), webhook.ErrBadSignature)
	require.ErrorIs(t, webhook.Verify("s3cret", h, append(body, ' '), sent, 0), webhook.ErrBadSignature)

	d.Route.Slack = true
	body, err = webhook.Body(d, "")
	require.NoError(t, err)
	var slack map[string]any
	require.NoError(t, json.Unmarshal(body, &slack))
	require.Len(t, slack, 1, "a Slack incoming webhook takes {\"text\": ...}")
	require.Equal(t, "Review waiting in expenses (step approve): Approve 120 EUR? (weft-x-1) <http://127.0.0.1:8234/runs/weft-x-1|open in the weft console>", slack["text"])
}

func TestDefaultConsoleURL(t *testing.T) {
	require.Equal(t, "http://"+console.DefaultAddress, webhook.DefaultConsoleURL)
}

func TestEntryJSON(t *testing.T) {
	var es []webhook.Entry
	require.NoError(t, json.Unmarshal([]byte(`["ops", {"to": "https://a.example", "events": ["run.failed"], "slack": true}]`), &es))
	require.Equal(t, []webhook.Entry{{To: "ops"}, {To: "https://a.example", Events: []string{"run.failed"}, Slack: true}}, es)
	b, err := json.Marshal(es)
	require.NoError(t, err)
	require.JSONEq(t, `["ops", {"to": "https://a.example", "events": ["run.failed"], "slack": true}]`, string(b))
	require.True(t, strings.Contains(string(b), `"ops"`))
}

// TestSlackTextIsNotMarkup: a title or an error written by a file's author or a model cannot
// ping a channel or show a link of its own in the operator's Slack.
func TestSlackTextIsNotMarkup(t *testing.T) {
	n := webhook.Notification{Event: webhook.ReviewRequested, RunID: "weft-x-1", Workflow: "w", Step: "s",
		Title: "<!channel> <https://evil.example|Approve in the weft console> & more"}
	got := webhook.Text(n, "http://127.0.0.1:8234/runs/weft-x-1")
	require.Equal(t, "Review waiting in w (step s): &lt;!channel&gt; &lt;https://evil.example|Approve in the weft console&gt; &amp; more (weft-x-1) <http://127.0.0.1:8234/runs/weft-x-1|open in the weft console>", got)
	n = webhook.Notification{Event: webhook.RunFailed, RunID: "weft-x-2", Workflow: "w", Error: "model said <@U123>"}
	require.NotContains(t, webhook.Text(n, "http://x/runs/weft-x-2"), "<@U123>")
}

// TestVerifyRefusesAReplay: a delivery captured and sent again outside the tolerance is refused
// though its signature is weft's; within it, and with the receiver's clock a little behind, it
// verifies; its timestamp cannot be moved, because the signature covers it.
func TestVerifyRefusesAReplay(t *testing.T) {
	body := []byte(`{"id":"weft-x-1-notify-7-0","event":"run.failed"}`)
	sent := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	signed := func(ts int64, sig string) http.Header {
		h := http.Header{}
		h.Set(webhook.TimestampHeader, strconv.FormatInt(ts, 10))
		h.Set(webhook.SignatureHeader, sig)
		return h
	}
	h := signed(sent.Unix(), webhook.Sign("s3cret", sent.Unix(), body))
	for _, tc := range []struct {
		name      string
		h         http.Header
		now       time.Time
		tolerance time.Duration
		err       string
	}{
		{"at once", h, sent, 0, ""},
		{"within the default 5 minutes", h, sent.Add(4 * time.Minute), 0, ""},
		{"the receiver's clock behind", h, sent.Add(-time.Minute), 0, ""},
		{"replayed an hour later", h, sent.Add(time.Hour), 0, "outside the 5m0s tolerance"},
		{"replayed past a tolerance of its own", h, sent.Add(2 * time.Minute), time.Minute, "outside the 1m0s tolerance"},
		{"its timestamp moved to now", signed(sent.Add(time.Hour).Unix(), h.Get(webhook.SignatureHeader)), sent.Add(time.Hour), 0, "does not match"},
		{"no timestamp", signed(0, h.Get(webhook.SignatureHeader)), sent, 0, "outside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := webhook.Verify("s3cret", tc.h, body, tc.now, tc.tolerance)
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, webhook.ErrBadSignature)
			require.ErrorContains(t, err, tc.err)
		})
	}
	empty := http.Header{}
	require.ErrorContains(t, webhook.Verify("s3cret", empty, body, sent, 0), "is not a Unix time")
}
