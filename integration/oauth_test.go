package integration

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/auth"
	"github.com/weftworks/weft/httpapi"
	"github.com/weftworks/weft/mcp"
	"github.com/weftworks/weft/starter"
)

// TestOAuthTokensOnTheGateway: a gateway configured with an issuer, an audience and the issuer's
// JWKS (served here by httptest, an RSA key generated for it) serves its protected-resource
// metadata without a key, answers a request without credentials 401 naming it on /mcp and /v1,
// and takes the issuer's tokens on both beside its static keys: a token's sub is its identity
// ("oauth/<sub>"), so a run one sub started is refused to another sub's token (owner scoping, on
// /mcp and on GET /v1/runs/{id}) and read by its own.
func TestOAuthTokensOnTheGateway(t *testing.T) {
	c := dial(t)
	queue := "oauth"
	startWorker(t, c, queue, nil)
	signer, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &signer.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	}))
	defer jwks.Close()

	keyFile := filepath.Join(t.TempDir(), "keys.json")
	static, _, err := auth.GenerateNamedKey(keyFile, "carl", []string{auth.RoleRunner})
	require.NoError(t, err)
	keys, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	const issuer, audience = "https://login.example.com/", "https://weft.example.com/mcp"
	o, err := auth.NewOAuth(auth.OAuthConfig{Issuer: issuer, Audience: audience, JWKSURL: jwks.URL})
	require.NoError(t, err)
	g := mcp.New(mcp.Options{Version: "test", CheckResults: true, Address: server.Address, Namespace: server.Namespace, TaskQueue: queue, Wait: 30 * time.Second})
	h, err := starter.GatewayHTTP(g, keys, []string{"127.0.0.1"}, httpapi.Options{Gate: auth.NewGate(keys).WithOAuth(o), NoBuiltins: true, Version: "test",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()

	token := func(sub, scope string) string {
		s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: signer}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
		require.NoError(t, err)
		tok, err := jwt.Signed(s).Claims(map[string]any{"iss": issuer, "aud": audience, "sub": sub, "scope": scope,
			"exp": time.Now().Add(10 * time.Minute).Unix(), "iat": time.Now().Unix()}).Serialize()
		require.NoError(t, err)
		return tok
	}
	get := func(path, bearer string) (int, http.Header, string) {
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, resp.Header, string(b)
	}

	// discovery: the metadata without a key, and the 401s that name it
	status, _, body := get("/.well-known/oauth-protected-resource/mcp", "")
	require.Equal(t, http.StatusOK, status)
	var meta auth.ProtectedResourceMetadata
	require.NoError(t, json.Unmarshal([]byte(body), &meta))
	require.Equal(t, audience, meta.Resource)
	require.Equal(t, []string{issuer}, meta.AuthorizationServers)
	status, _, _ = get("/.well-known/oauth-protected-resource", "")
	require.Equal(t, http.StatusOK, status)
	for _, path := range []string{"/mcp", "/v1/runs"} {
		status, hdr, _ := get(path, "")
		require.Equal(t, http.StatusUnauthorized, status, path)
		require.Equal(t, `Bearer resource_metadata="https://weft.example.com/.well-known/oauth-protected-resource/mcp"`, hdr.Get("WWW-Authenticate"), path)
	}
	status, hdr, _ := get("/v1/runs", token("ana", "openid"))
	require.Equal(t, http.StatusForbidden, status, "a valid token without a weft role")
	require.Contains(t, hdr.Get("WWW-Authenticate"), `error="insufficient_scope"`)

	// ana's token starts a run; bob's token may not read it, ana's may; the static key still works
	ana := newMCPSession(t, srv.URL+"/mcp", token("ana", "weft:runner"), "oauth-ana")
	bob := newMCPSession(t, srv.URL+"/mcp", token("bob", "weft:runner"), "oauth-bob")
	carl := newMCPSession(t, srv.URL+"/mcp", static, "oauth-carl")
	def := map[string]any{"name": "oauth-owned", "steps": []any{map[string]any{"id": "hi", "tool": "template", "inputs": map[string]any{"text": "hello"}}}}
	out, msg, isErr := ana.call("weft_run_workflow", map[string]any{"definition": def})
	require.False(t, isErr, msg)
	id := out["executionId"].(string)
	require.Equal(t, "oauth/ana", startRequest(t, c, id).GetStartedBy())

	_, msg, isErr = bob.call("weft_execution", map[string]any{"id": id})
	require.True(t, isErr, "bob's token reads ana's run")
	require.Contains(t, msg, "started by oauth/ana")
	_, msg, isErr = carl.call("weft_execution", map[string]any{"id": id})
	require.True(t, isErr, "a static key reads a token's run")
	require.Contains(t, msg, "started by oauth/ana")
	st, msg, isErr := ana.call("weft_execution", map[string]any{"id": id})
	require.False(t, isErr, msg)
	require.NotEmpty(t, st["status"], "ana reads her own run")

	status, _, body = get("/v1/runs/"+id, token("bob", "weft:runner"))
	require.Contains(t, []int{http.StatusForbidden, http.StatusNotFound}, status, body)
	status, _, body = get("/v1/runs/"+id, token("ana", "weft:reader"))
	require.Equal(t, http.StatusOK, status, body)
	require.True(t, strings.Contains(body, id), body)
}
