package auth

import (
	"errors"
	"net/http"
	"strings"
	"time"
)

// Gate decides who sends a request by its bearer key (Authorization: Bearer KEY) or, when OAuth
// is configured (WithOAuth), its bearer JWT, with one limit on failed attempts per client address
// for every server path it guards: the MCP gateway's /mcp and its HTTP API (/v1) share one Gate,
// so guessing keys on one is slow on the other too, and both take the same tokens.
type Gate struct {
	keys    *Keys
	oauth   *OAuth
	limiter *FailureLimiter
}

// NewGate guards with keys (nil: none) and a FailureLimiter of FailureBurst and FailureRate.
func NewGate(keys *Keys) *Gate {
	return &Gate{keys: keys, limiter: NewFailureLimiter(FailureBurst, FailureRate)}
}

// WithOAuth makes g accept bearer JWTs that o validates too, beside its keys; it returns g.
func (g *Gate) WithOAuth(o *OAuth) *Gate {
	g.oauth = o
	return g
}

// OAuth is the validator of g's bearer JWTs (nil: keys only).
func (g *Gate) OAuth() *OAuth { return g.oauth }

// Refusal is why a Gate refused a request: Status is 401 (no key, or one the key file does not
// hold, or a token that is not valid), 403 (a valid token without a weft role) or 429 (too many
// failed attempts from the address: wait RetryAfter). Code is a short word for the error
// ("unauthorized", "forbidden", "too many failed attempts"), Message says what to do, and
// Challenge is the WWW-Authenticate header of a 401 or 403 (with OAuth, it names the
// protected-resource metadata: RFC 9728 §5.1).
type Refusal struct {
	Status     int
	Code       string
	Message    string
	RetryAfter time.Duration
	Challenge  string
}

// Check returns the identity of r's key or token, or why r is refused.
func (g *Gate) Check(r *http.Request) (Identity, *Refusal) {
	bearer := r.Header.Get("Authorization")
	token, isBearer := strings.CutPrefix(bearer, "Bearer ")
	if isBearer && g.keys != nil {
		if id, known := g.keys.Identify(token); known {
			return id, nil
		}
	}
	var tokenErr error
	if isBearer && g.oauth != nil && LooksLikeJWT(token) {
		id, err := g.oauth.Verify(r.Context(), token)
		if err == nil {
			return id, nil
		}
		var scope *InsufficientScope
		if errors.As(err, &scope) {
			// a valid token: known, but granted nothing here
			return Identity{}, &Refusal{Status: http.StatusForbidden, Code: "forbidden", Message: err.Error(),
				Challenge: g.oauth.challenge("insufficient_scope", "the token holds no weft role")}
		}
		tokenErr = err
	}
	if wait, ok := g.limiter.Fail(ClientAddress(r), time.Now()); !ok {
		// Guessing keys gets slow: the right key still works at once.
		return Identity{}, &Refusal{Status: http.StatusTooManyRequests, Code: "too many failed attempts", RetryAfter: wait,
			Message: "too many requests with a wrong key from this address; wait for Retry-After"}
	}
	msg := "send Authorization: Bearer <key> (weft mcp generate-key, or WEFT_MCP_KEY)"
	challenge := "Bearer"
	if g.oauth != nil {
		msg = "send Authorization: Bearer <key> (weft mcp generate-key, or WEFT_MCP_KEY) or an access token from " + g.oauth.c.Issuer + " for " + g.oauth.c.Audience
		challenge = g.oauth.challenge("", "")
	}
	switch {
	case tokenErr != nil:
		msg = "the bearer token was refused: " + tokenErr.Error()
		challenge = g.oauth.challenge("invalid_token", tokenErr.Error())
	case isBearer && strings.TrimSpace(token) != "":
		// a key was sent: it is wrong, or it was revoked (the key file no longer has it)
		msg = "the key sent is not one of this gateway's keys: it was revoked or mistyped; ask the operator for a current key (weft mcp list-keys lists them, weft mcp generate-key makes one)"
		if g.oauth != nil {
			challenge = g.oauth.challenge("invalid_token", "not a key of this gateway")
		}
	}
	return Identity{}, &Refusal{Status: http.StatusUnauthorized, Code: "unauthorized", Message: msg, Challenge: challenge}
}

// RetryAfterSeconds is RetryAfter rounded up to whole seconds, for the Retry-After header.
func (r *Refusal) RetryAfterSeconds() int { return int(r.RetryAfter.Seconds() + 0.999) }

// MaxBodyBytes limits one request body on the servers a Gate guards (/mcp, /v1): a larger one is
// refused with 413 before it is read.
const MaxBodyBytes = 4 << 20
