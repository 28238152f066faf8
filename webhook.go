package weft

import (
	"net/http"
	"time"

	"github.com/weftworks/weft/internal/webhook"
)

// Webhook headers weft sends with each notification POST (docs/workflows.md, "notify").
const (
	WebhookSignatureHeader = webhook.SignatureHeader
	WebhookTimestampHeader = webhook.TimestampHeader
	WebhookDeliveryHeader  = webhook.DeliveryHeader
	WebhookEventHeader     = webhook.EventHeader
)

// ErrWebhookSignature is wrapped by VerifyWebhook's error.
var ErrWebhookSignature = webhook.ErrBadSignature

// VerifyWebhook is a receiver's check of a weft webhook delivery: h's X-Weft-Timestamp is within
// tolerance of now (0: 5 minutes), so a captured delivery replayed later is refused, and its
// X-Weft-Signature is the HMAC-SHA256, keyed with secret (the worker's WEFT_WEBHOOK_SECRET), of
// the timestamp, ".", and body, compared in constant time. body is the request body as received.
//
//	body, _ := io.ReadAll(r.Body)
//	if err := weft.VerifyWebhook(secret, r.Header, body, time.Now(), 0); err != nil {
//		http.Error(w, err.Error(), http.StatusUnauthorized)
//		return
//	}
func VerifyWebhook(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	return webhook.Verify(secret, h, body, now, tolerance)
}
