package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// OAuth 2.1 resource-server support: beside the static keys, a gateway configured with an issuer,
// an audience (its own resource URL) and the issuer's JWKS accepts bearer JWTs (access tokens) the
// issuer signed for it. The token's roles come from one claim (RolesClaim, "scope" by default):
// its values "weft:reader", "weft:runner", "weft:reviewer", "weft:admin" (and "weft:NAME" for a
// routing role) are the roles; values without the "weft:" prefix are ignored. The identity is
// named OAuthPrefix + the token's sub (escaped): a static key's name cannot hold a "/", so the two
// never collide, and what a name owns (its runs, its memory scopes) stays its own.

// OAuth settings from the environment (OAuthFromEnv).
const (
	EnvOAuthIssuer      = "WEFT_OAUTH_ISSUER"
	EnvOAuthAudience    = "WEFT_OAUTH_AUDIENCE"
	EnvOAuthJWKSURL     = "WEFT_OAUTH_JWKS_URL"
	EnvOAuthRolesClaim  = "WEFT_OAUTH_ROLES_CLAIM"
	DefaultRolesClaim   = "scope"
	RoleScopePrefix     = "weft:"
	OAuthPrefix         = "oauth/"
	DefaultOAuthLeeway  = 30 * time.Second
	DefaultJWKSRefetch  = 30 * time.Second
	DefaultJWKSLifetime = time.Hour
	// MaxJWKSBytes bounds the issuer's key set document.
	MaxJWKSBytes = 1 << 20
	// MetadataPath is where the protected-resource metadata is served (RFC 9728).
	MetadataPath = "/.well-known/oauth-protected-resource"
)

// SigningAlgorithms are the only JWS algorithms a token may be signed with: "none" and the HMAC
// ones (HS256…) are refused before a key is looked at, so a token "signed" with the issuer's public
// key as an HMAC secret is refused.
var SigningAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.ES256}

// OAuthConfig is what the operator configures: who issues tokens (Issuer, the exact "iss"), for
// whom (Audience, this gateway's resource URL: the "aud" a token must hold), and where the
// issuer's public keys are (JWKSURL).
type OAuthConfig struct {
	Issuer, Audience, JWKSURL string
	// RolesClaim is the claim that carries the roles (DefaultRolesClaim): a space-separated string
	// or a list of strings.
	RolesClaim string
	// Leeway is the clock skew allowed on exp, nbf and iat (DefaultOAuthLeeway).
	Leeway time.Duration
	// Refetch is how often at most the key set is fetched again for a token whose kid it does not
	// hold (DefaultJWKSRefetch); Lifetime how long a fetched key set is used (DefaultJWKSLifetime).
	Refetch, Lifetime time.Duration
	// HTTPClient fetches the key set (a client with a 10 s timeout when nil).
	HTTPClient *http.Client
	// Now is the clock (time.Now when nil): tests move it.
	Now func() time.Time
}

// OAuthFromEnv reads WEFT_OAUTH_ISSUER, WEFT_OAUTH_AUDIENCE, WEFT_OAUTH_JWKS_URL and
// WEFT_OAUTH_ROLES_CLAIM. It returns nil when none of the first three is set, and an error naming
// what is missing when only some are.
func OAuthFromEnv(getenv func(string) string) (*OAuthConfig, error) {
	c := &OAuthConfig{Issuer: getenv(EnvOAuthIssuer), Audience: getenv(EnvOAuthAudience), JWKSURL: getenv(EnvOAuthJWKSURL), RolesClaim: getenv(EnvOAuthRolesClaim)}
	if c.Issuer == "" && c.Audience == "" && c.JWKSURL == "" {
		return nil, nil
	}
	var missing []string
	for _, v := range [][2]string{{EnvOAuthIssuer, c.Issuer}, {EnvOAuthAudience, c.Audience}, {EnvOAuthJWKSURL, c.JWKSURL}} {
		if v[1] == "" {
			missing = append(missing, v[0])
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("OAuth is half configured: set %s too (the issuer's exact iss, this gateway's resource URL as the audience, and the issuer's JWKS URL), or unset all three to accept only keys", strings.Join(missing, " and "))
	}
	return c, nil
}

// OAuth validates bearer JWTs against an OAuthConfig. Its key set is fetched on first use, kept
// for Lifetime, and fetched again (at most once per Refetch) when a token names a kid it does not
// hold: an issuer's key rotation is picked up without a restart, and tokens with made-up kids
// cannot make the gateway hammer the issuer.
type OAuth struct {
	c        OAuthConfig
	resource *url.URL

	mu        sync.Mutex
	keys      *jose.JSONWebKeySet
	fetched   time.Time // when keys were fetched
	attempted time.Time // the last fetch, whether it worked or not
}

// NewOAuth checks c and returns its validator. The JWKS URL must be https (or http on a loopback
// address, for a local issuer); the audience must be an absolute URL (the gateway's resource).
func NewOAuth(c OAuthConfig) (*OAuth, error) {
	if c.Issuer == "" || c.Audience == "" || c.JWKSURL == "" {
		return nil, fmt.Errorf("OAuth needs an issuer (%s), an audience (%s) and a JWKS URL (%s)", EnvOAuthIssuer, EnvOAuthAudience, EnvOAuthJWKSURL)
	}
	res, err := url.Parse(c.Audience)
	if err != nil || (res.Scheme != "https" && res.Scheme != "http") || res.Host == "" || res.Fragment != "" {
		return nil, fmt.Errorf("%s %q: give this gateway's resource URL, e.g. https://weft.example.com/mcp (absolute, no #fragment)", EnvOAuthAudience, c.Audience)
	}
	ju, err := url.Parse(c.JWKSURL)
	if err != nil || ju.Host == "" || (ju.Scheme != "https" && !(ju.Scheme == "http" && loopback(ju.Hostname()))) {
		return nil, fmt.Errorf("%s %q: give the issuer's key set URL over https (http only on a loopback address), e.g. https://login.example.com/.well-known/jwks.json", EnvOAuthJWKSURL, c.JWKSURL)
	}
	if c.RolesClaim == "" {
		c.RolesClaim = DefaultRolesClaim
	}
	if c.Leeway == 0 {
		c.Leeway = DefaultOAuthLeeway
	}
	if c.Refetch == 0 {
		c.Refetch = DefaultJWKSRefetch
	}
	if c.Lifetime == 0 {
		c.Lifetime = DefaultJWKSLifetime
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return &OAuth{c: c, resource: res}, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// InsufficientScope is the error of a valid token that carries no weft role: the caller is known
// but may do nothing (403, insufficient_scope).
type InsufficientScope struct{ Claim string }

func (e *InsufficientScope) Error() string {
	return fmt.Sprintf("the token holds no weft role in its %q claim: ask the authorization server for a token with one of the scopes %s", e.Claim, strings.Join(RoleScopes(), ", "))
}

// RoleScopes are the scopes that grant the built-in roles: "weft:reader" ….
func RoleScopes() []string {
	out := make([]string, len(BuiltinRoles))
	for i, r := range BuiltinRoles {
		out[i] = RoleScopePrefix + r
	}
	return out
}

// LooksLikeJWT reports whether a bearer value has a JWT's compact form (three dot-separated
// parts); static keys have none.
func LooksLikeJWT(token string) bool { return strings.Count(token, ".") == 2 }

// Verify returns the identity of a bearer JWT: signed with RS256 or ES256 by a key of the issuer's
// key set, from the configured issuer, for the configured audience, not expired (exp is required)
// and not before its nbf (with Leeway). A valid token without a weft role is an
// *InsufficientScope error.
func (o *OAuth) Verify(ctx context.Context, token string) (Identity, error) {
	tok, err := jwt.ParseSigned(token, SigningAlgorithms)
	if err != nil {
		return Identity{}, fmt.Errorf("the token is not a JWT signed with RS256 or ES256 (%w)", err)
	}
	if len(tok.Headers) != 1 {
		return Identity{}, errors.New("the token must have exactly one signature")
	}
	h := tok.Headers[0]
	key, err := o.key(ctx, h.KeyID, h.Algorithm)
	if err != nil {
		return Identity{}, err
	}
	var std jwt.Claims
	extra := map[string]any{}
	if err := tok.Claims(key.Key, &std, &extra); err != nil {
		return Identity{}, fmt.Errorf("the token's signature does not verify against the issuer's key %q (%w)", h.KeyID, err)
	}
	err = std.ValidateWithLeeway(jwt.Expected{Issuer: o.c.Issuer, AnyAudience: jwt.Audience{o.c.Audience}, Time: o.c.Now()}, o.c.Leeway)
	switch {
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return Identity{}, fmt.Errorf("the token was issued by %q, not by this gateway's issuer %q", std.Issuer, o.c.Issuer)
	case errors.Is(err, jwt.ErrInvalidAudience):
		return Identity{}, fmt.Errorf("the token is for %q, not for this gateway (%s): ask for a token with resource=%s", strings.Join(std.Audience, ", "), o.c.Audience, o.c.Audience)
	case errors.Is(err, jwt.ErrExpired):
		return Identity{}, errors.New("the token has expired: get a fresh one from the authorization server")
	case errors.Is(err, jwt.ErrNotValidYet), errors.Is(err, jwt.ErrIssuedInTheFuture):
		return Identity{}, errors.New("the token is not valid yet (nbf or iat in the future): check the clocks")
	case err != nil:
		return Identity{}, fmt.Errorf("the token's claims are not valid: %w", err)
	}
	if std.Expiry == nil {
		return Identity{}, errors.New("the token has no exp: access tokens must expire")
	}
	if std.Subject == "" {
		return Identity{}, errors.New("the token has no sub: it names nobody")
	}
	roles := rolesOf(extra[o.c.RolesClaim])
	if len(roles) == 0 {
		return Identity{}, &InsufficientScope{Claim: o.c.RolesClaim}
	}
	return Identity{Name: OAuthName(std.Subject), Roles: roles}, nil
}

// OAuthName is the identity name of a token's sub: OAuthPrefix and the sub with every byte but
// letters, digits, "." "@" "-" written "_XX" (hex), so different subs never share a name and the
// name is usable wherever a key's is (a memory scope "notes:oauth/…", a reviewers list).
func OAuthName(sub string) string {
	var b strings.Builder
	b.WriteString(OAuthPrefix)
	for i := 0; i < len(sub); i++ {
		c := sub[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '@' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "_%02x", c)
		}
	}
	return b.String()
}

// rolesOf reads the roles of a claim's value: "weft:"-prefixed entries of a space-separated
// string or a list of strings; other entries (openid, email…) grant nothing.
func rolesOf(v any) []string {
	var vals []string
	switch x := v.(type) {
	case string:
		vals = strings.Fields(x)
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok {
				vals = append(vals, s)
			}
		}
	}
	var roles []string
	for _, s := range vals {
		if r, ok := strings.CutPrefix(s, RoleScopePrefix); ok && CheckRole(r) == nil && !slices.Contains(roles, r) {
			roles = append(roles, r)
		}
	}
	return roles
}

// key is the verification key kid names in the issuer's key set, fetched again (rate limited)
// when the set does not hold it.
func (o *OAuth) key(ctx context.Context, kid string, alg string) (jose.JSONWebKey, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.c.Now()
	stale := o.keys == nil || now.Sub(o.fetched) > o.c.Lifetime
	if stale && (o.attempted.IsZero() || now.Sub(o.attempted) >= o.c.Refetch) {
		if err := o.fetchLocked(ctx, now); err != nil && o.keys == nil {
			return jose.JSONWebKey{}, err
		}
	}
	if o.keys == nil {
		// the last fetch failed a moment ago: the issuer is not asked again before Refetch
		return jose.JSONWebKey{}, fmt.Errorf("the issuer's key set (%s) could not be fetched; it is tried again %s after the last attempt", o.c.JWKSURL, o.c.Refetch)
	}
	k, ok := pick(o.keys, kid, alg)
	if !ok && now.Sub(o.attempted) >= o.c.Refetch {
		// a key the set did not hold: the issuer may have rotated its keys
		if err := o.fetchLocked(ctx, now); err != nil {
			return jose.JSONWebKey{}, err
		}
		k, ok = pick(o.keys, kid, alg)
	}
	if !ok {
		return jose.JSONWebKey{}, fmt.Errorf("the token's key %q is not in the issuer's key set (%s): a token from another issuer, or a key the issuer no longer publishes", kid, o.c.JWKSURL)
	}
	return k, nil
}

// pick finds kid's signing key for alg in set; a token without a kid is taken only when the set
// has one signing key.
func pick(set *jose.JSONWebKeySet, kid, alg string) (jose.JSONWebKey, bool) {
	if set == nil {
		return jose.JSONWebKey{}, false
	}
	var found []jose.JSONWebKey
	for _, k := range set.Keys {
		if (k.Use != "" && k.Use != "sig") || (k.Algorithm != "" && k.Algorithm != alg) || !k.Valid() {
			continue
		}
		if kid == "" || k.KeyID == kid {
			found = append(found, k.Public())
		}
	}
	if len(found) != 1 || !found[0].Valid() {
		return jose.JSONWebKey{}, false
	}
	return found[0], true
}

// fetchLocked fetches the key set; o.mu held.
func (o *OAuth) fetchLocked(ctx context.Context, now time.Time) error {
	o.attempted = now
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.c.JWKSURL, nil)
	if err != nil {
		return fmt.Errorf("%s %q: %w", EnvOAuthJWKSURL, o.c.JWKSURL, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := o.c.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("the issuer's key set (%s) cannot be fetched: %w", o.c.JWKSURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the issuer's key set (%s) answered %s: check %s", o.c.JWKSURL, resp.Status, EnvOAuthJWKSURL)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxJWKSBytes+1))
	if err != nil {
		return fmt.Errorf("the issuer's key set (%s): %w", o.c.JWKSURL, err)
	}
	if len(body) > MaxJWKSBytes {
		return fmt.Errorf("the issuer's key set (%s) is over %d bytes: check %s", o.c.JWKSURL, MaxJWKSBytes, EnvOAuthJWKSURL)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(body, &set); err != nil {
		return fmt.Errorf("the issuer's key set (%s) is not a JWKS: %w", o.c.JWKSURL, err)
	}
	o.keys, o.fetched = &set, now
	return nil
}

// ProtectedResourceMetadata is the document of RFC 9728 the gateway serves at MetadataPath.
type ProtectedResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ScopesSupported        []string `json:"scopes_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
}

// Metadata is the gateway's protected-resource metadata: the audience is the resource, the
// issuer its authorization server, bearer tokens in the Authorization header only.
func (o *OAuth) Metadata() ProtectedResourceMetadata {
	return ProtectedResourceMetadata{Resource: o.c.Audience, AuthorizationServers: []string{o.c.Issuer}, BearerMethodsSupported: []string{"header"},
		ScopesSupported: RoleScopes(), ResourceName: "weft"}
}

// MetadataPaths are the paths the metadata is served at: MetadataPath, and (RFC 9728 §3.1) the
// same with the resource's path after it when the audience has one
// (/.well-known/oauth-protected-resource/mcp for https://host/mcp).
func (o *OAuth) MetadataPaths() []string {
	paths := []string{MetadataPath}
	if p := strings.TrimSuffix(o.resource.EscapedPath(), "/"); p != "" {
		paths = append(paths, MetadataPath+p)
	}
	return paths
}

// MetadataURL is the absolute URL of the metadata that a 401's WWW-Authenticate names: on the
// audience's origin, with its path (the last of MetadataPaths).
func (o *OAuth) MetadataURL() string {
	paths := o.MetadataPaths()
	return o.resource.Scheme + "://" + o.resource.Host + paths[len(paths)-1]
}

// MetadataHandler serves Metadata as JSON (GET, no authentication: it is how a client learns
// where to get a token).
func (o *OAuth) MetadataHandler() http.Handler {
	body, _ := json.Marshal(o.Metadata())
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=3600")
		_, _ = w.Write(body)
	})
}

// challenge is the WWW-Authenticate value of a refusal (RFC 6750 §3, RFC 9728 §5.1): errCode is
// "" (no credentials), "invalid_token" or "insufficient_scope".
func (o *OAuth) challenge(errCode, desc string) string {
	var b strings.Builder
	b.WriteString("Bearer")
	sep := " "
	add := func(k, v string) {
		b.WriteString(sep + k + `="` + strings.NewReplacer(`\`, `\\`, `"`, `'`).Replace(v) + `"`)
		sep = ", "
	}
	if errCode != "" {
		add("error", errCode)
		if desc != "" {
			add("error_description", desc)
		}
	}
	if errCode == "insufficient_scope" {
		add("scope", strings.Join(RoleScopes(), " "))
	}
	add("resource_metadata", o.MetadataURL())
	return b.String()
}
