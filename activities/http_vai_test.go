package activities_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
)

// TestHTTPToolLikeVai: the http tool's output carries what vai's executeHttp returns (every body
// in output.body: parsed JSON unless responseType says otherwise or it does not parse, else the
// text; extract "text" strips the HTML tags; status, statusText, headers), and it takes every
// method vai does, in any case. weft's own fields (text for a body that is not JSON) stay.
func TestHTTPToolLikeVai(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><head><style>p{}</style><script>var x = "<p>";</script></head><body><h1>Title</h1><p>Fish &amp; chips</p><div>two</div></body></html>`)
		case "/jsontext": // JSON without a JSON content type: vai parses it all the same
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, `{"a":1}`)
		case "/echo":
			w.Header().Set("X-Seen", "yes")
			fmt.Fprintf(w, "%s %s", r.Method, b)
		}
	}))
	defer srv.Close()
	allowed := activities.Config{HTTPAllow: []string{"127.0.0.0/8"}}
	for _, tc := range []struct {
		name   string
		in     map[string]any
		body   any
		text   any
		header string
	}{
		{name: "a page's body is its text", in: map[string]any{"url": srv.URL + "/page"},
			body: `<html><head><style>p{}</style><script>var x = "<p>";</script></head><body><h1>Title</h1><p>Fish &amp; chips</p><div>two</div></body></html>`},
		{name: "extract text strips the tags", in: map[string]any{"url": srv.URL + "/page", "extract": "text"},
			body: "Title\n\nFish & chips\n\ntwo", text: "Title\n\nFish & chips\n\ntwo"},
		{name: "JSON parses whatever its content type", in: map[string]any{"url": srv.URL + "/jsontext"},
			body: map[string]any{"a": float64(1)}, text: `{"a":1}`},
		{name: "url-knowledge-base's fetch", in: map[string]any{"url": srv.URL + "/page", "method": "GET", "responseType": "text", "extract": "text"},
			body: "Title\n\nFish & chips\n\ntwo", text: "Title\n\nFish & chips\n\ntwo"},
		{name: "responseType text keeps it a string", in: map[string]any{"url": srv.URL + "/jsontext", "responseType": "text"},
			body: `{"a":1}`, text: `{"a":1}`},
		{name: "lower-case put sends its body", in: map[string]any{"url": srv.URL + "/echo", "method": "put", "body": "hi"},
			body: "PUT hi", text: "PUT hi", header: "yes"},
		{name: "patch", in: map[string]any{"url": srv.URL + "/echo", "method": "Patch", "body": "x"},
			body: "PATCH x", text: "PATCH x", header: "yes"},
		{name: "delete sends no body, as in vai", in: map[string]any{"url": srv.URL + "/echo", "method": "DELETE", "body": "x"},
			body: "DELETE ", text: "DELETE ", header: "yes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := run(t, allowed, "http", tc.in)
			require.NoError(t, err)
			out := res.Output.(map[string]any)
			require.Equal(t, tc.body, out["body"])
			if tc.text == nil && strings.HasSuffix(tc.in["url"].(string), "/page") {
				tc.text = tc.body
			}
			require.Equal(t, tc.text, out["text"])
			require.Equal(t, "OK", out["statusText"])
			if tc.header != "" {
				require.Equal(t, tc.header, out["headers"].(map[string]any)["x-seen"])
			}
		})
	}
	_, err := run(t, allowed, "http", map[string]any{"url": srv.URL + "/echo", "method": "TRACE"})
	require.ErrorContains(t, err, "invalid inputs")
}
