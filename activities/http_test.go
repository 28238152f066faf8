package activities_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/weftworks/weft/activities"
)

func TestHTTPTool(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"method":%q,"ua":%q}`, r.Method, r.UserAgent())
		case "/big":
			fmt.Fprint(w, strings.Repeat("x", 5000))
		case "/missing":
			w.WriteHeader(404)
			fmt.Fprint(w, "no such page")
		case "/busy":
			w.Header().Set("Retry-After", "4")
			w.WriteHeader(503)
		}
	}))
	defer srv.Close()
	allowed := activities.Config{HTTPAllow: []string{"127.0.0.0/8"}}

	res, err := run(t, allowed, "http", map[string]any{"url": srv.URL + "/json", "method": "POST", "body": map[string]any{"a": 1}})
	require.NoError(t, err)
	out := res.Output.(map[string]any)
	require.Equal(t, float64(200), out["status"])
	require.Equal(t, map[string]any{"method": "POST", "ua": "weft-http-tool"}, out["body"])

	res, err = run(t, allowed, "http", map[string]any{"url": srv.URL + "/big", "maxBytes": 100})
	require.NoError(t, err)
	out = res.Output.(map[string]any)
	require.Equal(t, true, out["truncated"])
	require.Len(t, out["text"], 100)

	res, err = run(t, allowed, "http", map[string]any{"url": srv.URL + "/missing"})
	require.NoError(t, err, "a 404 is an answer the workflow can branch on")
	require.Equal(t, float64(404), res.Output.(map[string]any)["status"])

	_, err = run(t, allowed, "http", map[string]any{"url": srv.URL + "/busy"})
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae))
	require.False(t, ae.NonRetryable())
	require.Equal(t, "4s", ae.NextRetryDelay().String())

	// Without the allowlist, loopback is refused and the error says which setting allows it.
	_, err = run(t, activities.Config{}, "http", map[string]any{"url": srv.URL + "/json"})
	require.True(t, errors.As(err, &ae), "%v", err)
	require.True(t, ae.NonRetryable())
	require.Contains(t, ae.Error(), "need WEFT_HTTP_ALLOW")

	_, err = run(t, allowed, "http", map[string]any{"url": "ftp://example.com/x"})
	require.ErrorContains(t, err, "invalid inputs")
}

// TestHTTPToolErrorsSayItOnce: the http tool's errors name the tool once, then the request
// (issue 21, item 9: they said `http: http: Get …`).
func TestHTTPToolErrorsSayItOnce(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprint(w, "upstream down")
	}))
	allowed := activities.Config{HTTPAllow: []string{"127.0.0.0/8"}}
	_, err := run(t, allowed, "http", map[string]any{"url": srv.URL + "/busy?token=secret"})
	require.Error(t, err)
	require.Contains(t, err.Error(), "http: GET "+srv.URL+"/busy: HTTP 502: upstream down")
	require.NotContains(t, err.Error(), "secret", "the query may hold credentials")

	srv.Close() // nothing listens there now
	_, err = run(t, allowed, "http", map[string]any{"url": srv.URL + "/gone"})
	require.Error(t, err)
	msg := err.Error()
	require.Contains(t, msg, "http: GET "+srv.URL+"/gone: dial tcp")
	require.NotContains(t, msg, "http: http:")
	require.NotContains(t, msg, `Get "`)
}
