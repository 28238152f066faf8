package activities

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/weftworks/weft/internal/webhook"
)

// Error types of a delivery that will not succeed by trying again.
const (
	ErrWebhookUndeclared = "WebhookUndeclared"
	ErrWebhookRefused    = "WebhookRefused"
)

// webhooks reads the operator's declarations (WEFT_WEBHOOKS) on each use, so a fixed file is
// picked up without restarting the worker.
func (t *Tools) webhooks() ([]webhook.Webhook, error) { return webhook.Load(t.cfg.Webhooks) }

// NotifyPlan is the internal activity webhook.ActivityPlan (a local activity, run once at the
// start of a run): which webhooks the run notifies of which events. A mistake in the settings
// or the file leaves notifications out, never fails the run: the plan carries warnings.
func (t *Tools) NotifyPlan(ctx context.Context, req webhook.PlanRequest) (webhook.Plan, error) {
	hooks, err := t.webhooks()
	if err != nil {
		return webhook.Plan{Warnings: []string{err.Error() + ": no webhook is notified until this is fixed"}}, nil
	}
	return webhook.Resolve(hooks, req), nil
}

// Notify is the internal activity webhook.ActivityDeliver: one POST of a notification, signed
// when WEFT_WEBHOOK_SECRET is set, through the http tool's private-address guard. A network
// error, 408, 429 or 5xx is retried (the caller's retry policy bounds how long); another answer
// outside 2xx, an undeclared webhook or a refused address is not.
func (t *Tools) Notify(ctx context.Context, d webhook.Delivery) error {
	target := d.Route.URL
	if d.Route.Name != "" {
		hooks, err := t.webhooks()
		if err != nil {
			return temporal.NewNonRetryableApplicationError(err.Error(), ErrWebhookUndeclared, err)
		}
		target = ""
		for _, h := range hooks {
			if h.Name == d.Route.Name {
				target = h.URL
			}
		}
		if target == "" {
			return temporal.NewNonRetryableApplicationError(fmt.Sprintf("webhook %q is no longer declared in WEFT_WEBHOOKS: declare it again or nothing is sent", d.Route.Name), ErrWebhookUndeclared, nil)
		}
	} else if d.Origin != "" {
		return temporal.NewNonRetryableApplicationError("a definition sent by a client may only name the operator's webhooks, not a URL: declare the webhook in WEFT_WEBHOOKS and name it", ErrWebhookRefused, nil)
	}
	if err := webhook.CheckURL(target); err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrWebhookRefused, err)
	}
	body, err := webhook.Body(d, t.cfg.ConsoleURL)
	if err != nil {
		return temporal.NewNonRetryableApplicationError("encoding the notification: "+err.Error(), ErrWebhookRefused, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrWebhookRefused, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "weft-webhook")
	req.Header.Set(webhook.EventHeader, d.Notification.Event)
	req.Header.Set(webhook.DeliveryHeader, d.ID)
	if t.cfg.WebhookSecret != "" {
		now := time.Now().Unix() // each attempt signs its own time: a retry a day later verifies
		req.Header.Set(webhook.TimestampHeader, strconv.FormatInt(now, 10))
		req.Header.Set(webhook.SignatureHeader, webhook.Sign(t.cfg.WebhookSecret, now, body))
	}
	where := webhook.Redact(target)
	resp, err := t.httpClient(10 * time.Second).Do(req)
	if err != nil {
		var ie *InputError
		if asInput(err, &ie) {
			return temporal.NewNonRetryableApplicationError("webhook "+where+": "+ie.Msg, ErrWebhookRefused, nil)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("webhook %s: %w", where, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return fmt.Errorf("webhook %s answered %s: trying again", where, resp.Status)
	}
	slog.Warn("a webhook refused a notification", "webhook", where, "status", resp.Status, "event", d.Notification.Event)
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf("webhook %s answered %s: not trying again (check its URL and what it accepts)", where, resp.Status), ErrWebhookRefused, nil)
}
