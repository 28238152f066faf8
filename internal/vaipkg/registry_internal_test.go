package vaipkg

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPickVersionPrereleases: a range takes a pre-release only as npm does, when the part of the
// range it satisfies names a pre-release of the same major.minor.patch.
func TestPickVersionPrereleases(t *testing.T) {
	p := packument{DistTags: map[string]string{"latest": "2.0.0"}, Versions: map[string]json.RawMessage{}}
	for _, v := range []string{"1.2.0-beta.1", "1.2.0-beta.2", "1.2.0", "1.2.5", "1.3.0-alpha.1", "2.0.0", "2.1.0-rc.1"} {
		p.Versions[v] = json.RawMessage(`{}`)
	}
	tests := []struct{ rng, want string }{
		{"^1.2.0-beta.1", "1.2.5"},
		{">=1.2.0-beta.1 <2", "1.2.5"},
		{"~1.2.0-beta.1", "1.2.5"},
		{">=1.2.0-beta.1 <1.2.0", "1.2.0-beta.2"},
		{"1.2.0-beta.1 - 1.2.0-beta.2", "1.2.0-beta.2"},
		{"^1.3.0-alpha.1", "1.3.0-alpha.1"},
		{"<1.2.0-beta.1 || ^1.3.0-alpha.0", "1.3.0-alpha.1"},
		{"^1.0.0", "1.2.5"},
		{">=1.2.6 <2.1.0", "2.0.0"},
		{"^2.1.0-rc.0", "2.1.0-rc.1"},
	}
	for _, tt := range tests {
		got, err := pickVersion(p, tt.rng)
		require.NoError(t, err, tt.rng)
		require.Equal(t, tt.want, got, tt.rng)
	}
	_, err := pickVersion(p, "^1.4.0-beta.1 <1.4.0")
	require.ErrorContains(t, err, "no version satisfies")
}

// TestRegistryTextIsCleaned: what a registry writes (version keys, the status line, a version's
// "version" field, its tarball URL) reaches an error message without a control or bidi character.
func TestRegistryTextIsCleaned(t *testing.T) {
	const evil = "\x1b]8;;https://evil.example\x07click\x1b]8;;\x07\x1b[2J\u202e"
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/vai-workflow-status":
			hj, _ := w.(http.Hijacker)
			conn, buf, _ := hj.Hijack()
			defer conn.Close()
			_, _ = buf.WriteString("HTTP/1.1 500 " + evil + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			_ = buf.Flush()
		case "/vai-workflow-keys":
			_ = json.NewEncoder(w).Encode(map[string]any{"name": "vai-workflow-keys", "dist-tags": map[string]string{"latest": "1.0.0"},
				"versions": map[string]any{"1.0.0": map[string]any{}, "3.0.0" + evil: map[string]any{}, evil: map[string]any{}}})
		case "/vai-workflow-field":
			_ = json.NewEncoder(w).Encode(map[string]any{"name": "vai-workflow-field", "dist-tags": map[string]string{"latest": "1.0.0"},
				"versions": map[string]any{"1.0.0": map[string]any{"version": "1.0.0" + evil, "dist": map[string]any{"tarball": srv.URL + "/missing.tgz"}}}})
		case "/vai-workflow-url":
			_ = json.NewEncoder(w).Encode(map[string]any{"name": "vai-workflow-url", "dist-tags": map[string]string{"latest": "1.0.0"},
				"versions": map[string]any{"1.0.0": map[string]any{"dist": map[string]any{"tarball": srv.URL + "/a\u202egzt.tgz"}}}})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	reg := Registry{URL: srv.URL}
	ctx := context.Background()
	tests := []struct {
		name string
		do   func() error
		want string
	}{
		{"status line", func() error { _, err := reg.resolve(ctx, "vai-workflow-status", ""); return err }, "GET " + srv.URL + "/vai-workflow-status: 500 "},
		{"version keys, no such version", func() error { _, err := reg.resolve(ctx, "vai-workflow-keys", "9.9.9"); return err }, "has no version or dist-tag"},
		{"version keys, no version in range", func() error { _, err := reg.resolve(ctx, "vai-workflow-keys", "^5.0.0"); return err }, "no version satisfies"},
		{"version field", func() error {
			d, err := reg.resolve(ctx, "vai-workflow-field", "")
			if err != nil {
				return err
			}
			_, _, err = reg.fetch(ctx, "vai-workflow-field", d)
			return err
		}, "downloading vai-workflow-field@1.0.0"},
		{"tarball URL", func() error { _, err := reg.resolve(ctx, "vai-workflow-url", ""); return err }, "is not an http(s) URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do()
			require.ErrorContains(t, err, tt.want)
			require.Equal(t, -1, strings.IndexFunc(err.Error(), Unsafe), "%q", err.Error())
		})
	}
}
