package auth

import (
	"net/http"
	"strings"
	"time"
)

// Gate decides who sends a request by its bearer key (Authorization: Bearer KEY), with one limit
// on failed attempts per client address for every server path it guards: the MCP gateway's /mcp
// and its HTTP API (/v1) share one Gate, so guessing keys on one is slow on the other too.
type Gate struct {
	keys    *Keys
	limiter *FailureLimiter
}

// NewGate guards with keys and a FailureLimiter of FailureBurst and FailureRate.
func NewGate(keys *Keys) *Gate {
	return &Gate{keys: keys, limiter: NewFailureLimiter(FailureBurst, FailureRate)}
}

// Refusal is why a Gate refused a request: Status is 401 (no key, or one the key file does not
// hold) or 429 (too many failed attempts from the address: wait RetryAfter). Code is a short
// word for the error ("unauthorized", "too many failed attempts"), Message says what to do.
type Refusal struct {
	Status     int
	Code       string
	Message    string
	RetryAfter time.Duration
}

// Check returns the identity of r's key, or why r is refused.
func (g *Gate) Check(r *http.Request) (Identity, *Refusal) {
	bearer := r.Header.Get("Authorization")
	id, known := g.keys.Identify(strings.TrimPrefix(bearer, "Bearer "))
	if strings.HasPrefix(bearer, "Bearer ") && known {
		return id, nil
	}
	if wait, ok := g.limiter.Fail(ClientAddress(r), time.Now()); !ok {
		// Guessing keys gets slow: the right key still works at once.
		return Identity{}, &Refusal{Status: http.StatusTooManyRequests, Code: "too many failed attempts", RetryAfter: wait,
			Message: "too many requests with a wrong key from this address; wait for Retry-After"}
	}
	msg := "send Authorization: Bearer <key> (weft mcp generate-key, or WEFT_MCP_KEY)"
	if strings.HasPrefix(bearer, "Bearer ") && strings.TrimSpace(strings.TrimPrefix(bearer, "Bearer ")) != "" {
		// a key was sent: it is wrong, or it was revoked (the key file no longer has it)
		msg = "the key sent is not one of this gateway's keys: it was revoked or mistyped; ask the operator for a current key (weft mcp list-keys lists them, weft mcp generate-key makes one)"
	}
	return Identity{}, &Refusal{Status: http.StatusUnauthorized, Code: "unauthorized", Message: msg}
}

// RetryAfterSeconds is RetryAfter rounded up to whole seconds, for the Retry-After header.
func (r *Refusal) RetryAfterSeconds() int { return int(r.RetryAfter.Seconds() + 0.999) }

// MaxBodyBytes limits one request body on the servers a Gate guards (/mcp, /v1): a larger one is
// refused with 413 before it is read.
const MaxBodyBytes = 4 << 20
