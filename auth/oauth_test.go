package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/auth"
)

const (
	testIssuer   = "https://login.example.com/"
	testAudience = "https://weft.example.com/mcp"
)

// issuer is an authorization server's key set served over HTTP (httptest), with the keys it
// signs with; fetches counts the requests for the set.
type issuer struct {
	srv     *httptest.Server
	mu      sync.Mutex
	set     jose.JSONWebKeySet
	rsa     *rsa.PrivateKey
	fetches atomic.Int32
}

func newIssuer(t testing.TB) *issuer {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	is := &issuer{rsa: k}
	is.publish(jose.JSONWebKey{Key: &k.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"})
	is.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		is.fetches.Add(1)
		is.mu.Lock()
		defer is.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(is.set)
	}))
	t.Cleanup(is.srv.Close)
	return is
}

// publish adds a public key to the set served.
func (is *issuer) publish(k jose.JSONWebKey) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.set.Keys = append(is.set.Keys, k)
}

// sign makes a compact JWT of claims signed with key as kid with alg.
func sign(t testing.TB, alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	require.NoError(t, err)
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	require.NoError(t, err)
	return tok
}

// clock is a settable time for the validator.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newValidator(t *testing.T, is *issuer, clk *clock, claim string) *auth.OAuth {
	t.Helper()
	o, err := auth.NewOAuth(auth.OAuthConfig{Issuer: testIssuer, Audience: testAudience, JWKSURL: is.srv.URL + "/jwks", RolesClaim: claim, Now: clk.Now})
	require.NoError(t, err)
	return o
}

// claims of a good token at now, with over changing or removing (nil) some.
func claims(now time.Time, over map[string]any) map[string]any {
	c := map[string]any{"iss": testIssuer, "aud": testAudience, "sub": "ana@example.com", "exp": now.Add(5 * time.Minute).Unix(),
		"iat": now.Unix(), "scope": "openid weft:runner email"}
	for k, v := range over {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

// TestOAuthVerify: a token the issuer signed (RS256 or ES256) for this audience is its sub's
// identity with the weft: roles of its scope; every other token is refused saying why: expired
// (past the leeway), not yet valid, without exp, for another audience or from another issuer,
// alg none, HS256 signed with the issuer's public key as the secret, signed by another key under
// the issuer's kid, or naming a kid the set does not hold. A valid token without a weft role is
// refused as insufficient scope.
func TestOAuthVerify(t *testing.T) {
	is := newIssuer(t)
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	is.publish(jose.JSONWebKey{Key: &ec.PublicKey, KeyID: "e1", Algorithm: "ES256", Use: "sig"})
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	clk := &clock{now: time.Unix(1_900_000_000, 0)}
	o := newValidator(t, is, clk, "")
	now := clk.Now()
	pubDER, err := x509.MarshalPKIXPublicKey(&is.rsa.PublicKey)
	require.NoError(t, err)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	b64 := base64.RawURLEncoding.EncodeToString
	payload, err := json.Marshal(claims(now, nil))
	require.NoError(t, err)

	for _, c := range []struct {
		name, token, want string
		roles             []string
	}{
		{name: "RS256", token: sign(t, jose.RS256, is.rsa, "k1", claims(now, nil)), roles: []string{auth.RoleRunner}},
		{name: "ES256", token: sign(t, jose.ES256, ec, "e1", claims(now, map[string]any{"scope": "weft:reviewer weft:finance"})), roles: []string{auth.RoleReviewer, "finance"}},
		{name: "expired within the leeway", token: sign(t, jose.RS256, is.rsa, "k1", claims(now, map[string]any{"exp": now.Add(-10 * time.Second).Unix()})), roles: []string{auth.RoleRunner}},
		{name: "expired", token: sign(t, jose.RS256, is.rsa, "k1", claims(now, map[string]any{"exp": now.Add(-2 * time.Minute).Unix()})), want: "expired"},
		{name: "not yet valid", token: sign(t, jose.RS256, is.rsa, "k1", claims(now, map[string]any{"nbf": now.Add(2 * time.Minute).Unix()})), want: "not valid yet"},
		{name: "no exp", token: sign(t, jose.RS256, is.rsa, "k1", claims(now, map[string]any{"exp": nil})), want: "no exp"},
		{name: "no sub", token: sign(t, jose.RS256, is.rsa, "k1", claims(now, map[string]any{"sub": nil})), want: "no sub"},
		{name: "wrong aud", token: sign(t, jose.RS256, is.rsa, "k1", claims(now, map[string]any{"aud": "https://other.example.com/mcp"})), want: "not for this gateway"},
		{name: "wrong iss", token: sign(t, jose.RS256, is.rsa, "k1", claims(now, map[string]any{"iss": "https://evil.example.com/"})), want: "not by this gateway's issuer"},
		{name: "alg none", token: b64([]byte(`{"alg":"none","typ":"JWT","kid":"k1"}`)) + "." + b64(payload) + ".", want: "not a JWT signed with RS256 or ES256"},
		{name: "HS256 with the public key as secret", token: sign(t, jose.HS256, pubPEM, "k1", claims(now, nil)), want: "not a JWT signed with RS256 or ES256"},
		{name: "another key under the issuer's kid", token: sign(t, jose.RS256, other, "k1", claims(now, nil)), want: "signature does not verify"},
		{name: "unknown kid", token: sign(t, jose.RS256, other, "k9", claims(now, nil)), want: `key "k9" is not in the issuer's key set`},
		{name: "ES256 header on the RSA key", token: sign(t, jose.ES256, ec, "k1", claims(now, nil)), want: `key "k1" is not in the issuer's key set`},
	} {
		t.Run(c.name, func(t *testing.T) {
			id, err := o.Verify(context.Background(), c.token)
			if c.want != "" {
				require.ErrorContains(t, err, c.want)
				return
			}
			require.NoError(t, err)
			require.Equal(t, "oauth/ana@example.com", id.Name)
			require.Equal(t, c.roles, id.Roles)
		})
	}

	t.Run("no weft role", func(t *testing.T) {
		for _, over := range []map[string]any{{"scope": nil}, {"scope": "openid email"}, {"scope": 7}} {
			_, err := o.Verify(context.Background(), sign(t, jose.RS256, is.rsa, "k1", claims(now, over)))
			var scope *auth.InsufficientScope
			require.True(t, errors.As(err, &scope), "%v: %v", over, err)
			require.ErrorContains(t, err, "weft:runner")
		}
	})
	t.Run("roles from a list claim", func(t *testing.T) {
		lo := newValidator(t, is, clk, "roles")
		id, err := lo.Verify(context.Background(), sign(t, jose.RS256, is.rsa, "k1", claims(now, map[string]any{"roles": []any{"weft:admin", "staff"}})))
		require.NoError(t, err)
		require.Equal(t, []string{auth.RoleAdmin}, id.Roles)
	})
}

// TestOAuthKeySetRefetch: the key set is fetched once and kept; a token with a kid it does not
// hold fetches it again (a rotated key is then accepted), but at most once per Refetch, so tokens
// with made-up kids do not hammer the issuer.
func TestOAuthKeySetRefetch(t *testing.T) {
	is := newIssuer(t)
	clk := &clock{now: time.Unix(1_900_000_000, 0)}
	o := newValidator(t, is, clk, "")
	ctx := context.Background()
	ok := func() string { return sign(t, jose.RS256, is.rsa, "k1", claims(clk.Now(), nil)) }
	for range 3 {
		_, err := o.Verify(ctx, ok())
		require.NoError(t, err)
	}
	require.EqualValues(t, 1, is.fetches.Load(), "one fetch for three tokens")

	rotated, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	is.publish(jose.JSONWebKey{Key: &rotated.PublicKey, KeyID: "k2", Algorithm: "RS256", Use: "sig"})
	// within Refetch of the first fetch: the set is not asked again
	_, err = o.Verify(ctx, sign(t, jose.RS256, rotated, "k2", claims(clk.Now(), nil)))
	require.ErrorContains(t, err, `key "k2" is not in the issuer's key set`)
	require.EqualValues(t, 1, is.fetches.Load())

	clk.add(auth.DefaultJWKSRefetch)
	id, err := o.Verify(ctx, sign(t, jose.RS256, rotated, "k2", claims(clk.Now(), nil)))
	require.NoError(t, err, "the rotated key, after one refetch")
	require.Equal(t, "oauth/ana@example.com", id.Name)
	require.EqualValues(t, 2, is.fetches.Load())

	for _, kid := range []string{"x1", "x2", "x3"} {
		_, err = o.Verify(ctx, sign(t, jose.RS256, rotated, kid, claims(clk.Now(), nil)))
		require.Error(t, err)
	}
	require.EqualValues(t, 2, is.fetches.Load(), "made-up kids fetch nothing within Refetch")
}

// TestOAuthNames: a token's identity is "oauth/" and its sub with every byte but letters, digits
// and . @ - escaped, so two subs never share a name and none is a name a static key can have.
func TestOAuthNames(t *testing.T) {
	for sub, want := range map[string]string{
		"ana":            "oauth/ana",
		"auth0|123":      "oauth/auth0_7c123",
		"auth0_7c123":    "oauth/auth0_5f7c123",
		"a:b":            "oauth/a_3ab",
		"a/b c":          "oauth/a_2fb_20c",
		"ana@example.io": "oauth/ana@example.io",
	} {
		require.Equal(t, want, auth.OAuthName(sub), sub)
		require.Error(t, auth.CheckName(want), "%s cannot be a static key's name", want)
	}
}

// TestGateWithOAuth: a Gate with OAuth takes its static keys unchanged and the issuer's tokens;
// without credentials or with a bad token it answers 401 naming the protected-resource metadata
// (and invalid_token with why), a valid token without a weft role 403 insufficient_scope; a
// refused token counts against the address's failure limit like a wrong key.
func TestGateWithOAuth(t *testing.T) {
	is := newIssuer(t)
	clk := &clock{now: time.Now()}
	o := newValidator(t, is, clk, "")
	f := filepath.Join(t.TempDir(), "k.json")
	key, _, err := auth.GenerateNamedKey(f, "ana", []string{auth.RoleReader})
	require.NoError(t, err)
	keys, err := auth.LoadKeys(f)
	require.NoError(t, err)
	g := auth.NewGate(keys).WithOAuth(o)
	req := func(header string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		if header != "" {
			r.Header.Set("Authorization", header)
		}
		return r
	}
	meta := `resource_metadata="https://weft.example.com/.well-known/oauth-protected-resource/mcp"`
	for _, c := range []struct {
		name, header, who, challenge, message string
		status                                int
	}{
		{name: "static key", header: "Bearer " + key, who: "ana"},
		{name: "token", header: "Bearer " + sign(t, jose.RS256, is.rsa, "k1", claims(clk.Now(), nil)), who: "oauth/ana@example.com"},
		{name: "nothing", status: 401, challenge: "Bearer " + meta, message: "an access token from " + testIssuer},
		{name: "wrong key", header: "Bearer nope", status: 401, challenge: `Bearer error="invalid_token", error_description="not a key of this gateway", ` + meta, message: "revoked or mistyped"},
		{name: "expired token", header: "Bearer " + sign(t, jose.RS256, is.rsa, "k1", claims(clk.Now(), map[string]any{"exp": clk.Now().Add(-time.Hour).Unix()})),
			status: 401, challenge: `Bearer error="invalid_token", error_description="the token has expired: get a fresh one from the authorization server", ` + meta, message: "the bearer token was refused: the token has expired"},
		{name: "no weft role", header: "Bearer " + sign(t, jose.RS256, is.rsa, "k1", claims(clk.Now(), map[string]any{"scope": "openid"})),
			status: 403, challenge: `Bearer error="insufficient_scope", error_description="the token holds no weft role", scope="weft:reader weft:runner weft:reviewer weft:admin", ` + meta, message: "no weft role"},
	} {
		t.Run(c.name, func(t *testing.T) {
			id, refused := g.Check(req(c.header))
			if c.status == 0 {
				require.Nil(t, refused)
				require.Equal(t, c.who, id.Name)
				return
			}
			require.NotNil(t, refused)
			require.Equal(t, c.status, refused.Status)
			require.Equal(t, c.challenge, refused.Challenge)
			require.Contains(t, refused.Message, c.message)
		})
	}
	bad := "Bearer " + sign(t, jose.RS256, is.rsa, "k1", claims(clk.Now(), map[string]any{"aud": "https://other.example.com"}))
	var last *auth.Refusal
	for range auth.FailureBurst + 1 {
		_, last = g.Check(req(bad))
	}
	require.Equal(t, http.StatusTooManyRequests, last.Status, "bad tokens are failed attempts")
	_, refused := g.Check(req("Bearer " + sign(t, jose.RS256, is.rsa, "k1", claims(clk.Now(), nil))))
	require.Nil(t, refused, "a good token works at once")

	// without OAuth the challenge is the plain one it always was
	_, refused = auth.NewGate(keys).Check(req(""))
	require.Equal(t, "Bearer", refused.Challenge)
}

// TestProtectedResourceMetadata: the RFC 9728 document names the audience as the resource, the
// issuer as its authorization server, header bearer tokens and the weft: scopes; it is served at
// the well-known path and at the well-known path with the resource's path after it.
func TestProtectedResourceMetadata(t *testing.T) {
	is := newIssuer(t)
	o := newValidator(t, is, &clock{now: time.Now()}, "")
	require.Equal(t, []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"}, o.MetadataPaths())
	rec := httptest.NewRecorder()
	o.MetadataHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/.well-known/oauth-protected-resource", nil))
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	require.JSONEq(t, `{"resource":"https://weft.example.com/mcp","authorization_servers":["https://login.example.com/"],
		"bearer_methods_supported":["header"],"scopes_supported":["weft:reader","weft:runner","weft:reviewer","weft:admin"],"resource_name":"weft"}`, rec.Body.String())

	root, err := auth.NewOAuth(auth.OAuthConfig{Issuer: testIssuer, Audience: "https://weft.example.com", JWKSURL: is.srv.URL})
	require.NoError(t, err)
	require.Equal(t, []string{"/.well-known/oauth-protected-resource"}, root.MetadataPaths())
	require.Equal(t, "https://weft.example.com/.well-known/oauth-protected-resource", root.MetadataURL())
}

// TestOAuthConfig: the environment configures all three settings or none; a half configuration,
// a relative audience or a JWKS URL over plain http off loopback is refused saying what to set.
func TestOAuthConfig(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	c, err := auth.OAuthFromEnv(env(nil))
	require.NoError(t, err)
	require.Nil(t, c, "nothing set: keys only")
	_, err = auth.OAuthFromEnv(env(map[string]string{auth.EnvOAuthIssuer: testIssuer}))
	require.ErrorContains(t, err, "set WEFT_OAUTH_AUDIENCE and WEFT_OAUTH_JWKS_URL too")
	c, err = auth.OAuthFromEnv(env(map[string]string{auth.EnvOAuthIssuer: testIssuer, auth.EnvOAuthAudience: testAudience, auth.EnvOAuthJWKSURL: "https://login.example.com/jwks"}))
	require.NoError(t, err)
	_, err = auth.NewOAuth(*c)
	require.NoError(t, err)
	for _, bad := range []auth.OAuthConfig{
		{Issuer: testIssuer, Audience: "/mcp", JWKSURL: "https://login.example.com/jwks"},
		{Issuer: testIssuer, Audience: testAudience, JWKSURL: "http://login.example.com/jwks"},
	} {
		_, err := auth.NewOAuth(bad)
		require.Error(t, err)
		require.True(t, strings.Contains(err.Error(), "WEFT_OAUTH_AUDIENCE") || strings.Contains(err.Error(), "WEFT_OAUTH_JWKS_URL"), err.Error())
	}
}

// BenchmarkGateCheck: what deciding who calls costs per request, with a static key and with an
// RS256 token (its key set cached).
func BenchmarkGateCheck(b *testing.B) {
	is := newIssuer(b)
	clk := &clock{now: time.Now()}
	o, err := auth.NewOAuth(auth.OAuthConfig{Issuer: testIssuer, Audience: testAudience, JWKSURL: is.srv.URL, Now: clk.Now})
	require.NoError(b, err)
	f := filepath.Join(b.TempDir(), "k.json")
	key, _, err := auth.GenerateNamedKey(f, "ana", []string{auth.RoleReader})
	require.NoError(b, err)
	keys, err := auth.LoadKeys(f)
	require.NoError(b, err)
	g := auth.NewGate(keys).WithOAuth(o)
	for name, bearer := range map[string]string{"key": key, "RS256 token": sign(b, jose.RS256, is.rsa, "k1", claims(clk.Now(), nil))} {
		b.Run(name, func(b *testing.B) {
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			r.Header.Set("Authorization", "Bearer "+bearer)
			for b.Loop() {
				if _, refused := g.Check(r); refused != nil {
					b.Fatal(refused.Message)
				}
			}
		})
	}
}
