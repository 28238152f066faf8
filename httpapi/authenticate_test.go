package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/httpapi"
)

// TestAuthenticateHook: Options.Authenticate decides who calls instead of the Gate (the console
// mounts the API so): its refusals are answered as problems with their status (401 without a
// Bearer challenge, 403, 429 with Retry-After), an identity is held to the route's role (403
// naming it), and the operator (nil) reaches every operation.
func TestAuthenticateHook(t *testing.T) {
	reader := auth.Identity{Name: "rita", Roles: []string{auth.RoleReader}}
	for _, tc := range []struct {
		name    string
		id      *auth.Identity
		refusal *auth.Refusal
		status  int
		says    string
	}{
		{"no session", nil, &auth.Refusal{Status: http.StatusUnauthorized, Message: "log in first"}, http.StatusUnauthorized, "log in first"},
		{"no CSRF token", nil, &auth.Refusal{Status: http.StatusForbidden, Message: "missing or wrong X-CSRF-Token"}, http.StatusForbidden, "X-CSRF-Token"},
		{"too many", nil, &auth.Refusal{Status: http.StatusTooManyRequests, Message: "wait"}, http.StatusTooManyRequests, "wait"},
		{"a reader cancels", &reader, nil, http.StatusForbidden, `POST /v1/runs/{id}/cancel needs the role "runner"; rita has the roles reader`},
		{"the operator", nil, nil, http.StatusServiceUnavailable, "no Temporal here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api, err := httpapi.New(httpapi.Options{
				Authenticate: func(*http.Request) (*auth.Identity, *auth.Refusal) { return tc.id, tc.refusal },
				Client:       func(context.Context) (*weftclient.Client, error) { return nil, errors.New("no Temporal here") }})
			require.NoError(t, err)
			w := httptest.NewRecorder()
			api.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/runs/weft-x/cancel", strings.NewReader(`{}`)))
			require.Equal(t, tc.status, w.Code, w.Body.String())
			var p httpapi.Problem
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &p))
			require.Contains(t, p.Detail, tc.says)
			require.Empty(t, w.Header().Get("WWW-Authenticate"), "a session is not a bearer key")
			if tc.status == http.StatusTooManyRequests {
				require.NotEmpty(t, w.Header().Get("Retry-After"))
			}
		})
	}
	_, err := httpapi.New(httpapi.Options{Client: func(context.Context) (*weftclient.Client, error) { return nil, nil }})
	require.ErrorContains(t, err, "Options.Gate (or Authenticate)")
}
