package console_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/console"
)

// consoleRoutes are the console's own /api/ routes the page still calls, each with why /v1 does
// not serve it (docs/console.md says the same). Everything else the page reads and does goes
// through /v1.
var consoleRoutes = map[string]string{
	"/api/runs":           "the runs page's rows: each run's cost and tokens, and the page's pager",
	"/api/runs/{}":        "a run as its page draws it: the graph, the snapshot with who may decide each review, whether the viewer may act",
	"/api/runs/{}/events": "the run page's live snapshots (state, streamed model text, review access), not the run's events",
	"/api/reviews":        "the reviews the viewer may read (not only decide), with who may decide each, in pages",
	"/api/graph":          "the console's drawing of an edited definition (checked by /v1/workflows/validate first)",
}

// pagePaths are the /api/ and /v1/ paths the page's scripts name in strings (a ${...} part as {},
// without the query), with the files that name them.
func pagePaths(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("static", "*.js"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	quoted := regexp.MustCompile("['\"`](/(?:api|v1)/[^'\"`?]*)")
	param := regexp.MustCompile(`\$\{[^}]*\}`)
	out := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range quoted.FindAllStringSubmatch(string(b), -1) {
			p := param.ReplaceAllString(m[1], "{}")
			out[p] = append(out[p], filepath.Base(f))
		}
	}
	return out
}

// docPaths are the paths of the operations the console's /v1 serves (its OpenAPI document), each
// {param} as {}.
func docPaths(t *testing.T, srv *httptest.Server) map[string]bool {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + "/v1/openapi.json")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var doc struct {
		Paths map[string]any `json:"paths"`
	}
	require.NoError(t, json.Unmarshal([]byte(body(t, resp)), &doc))
	param := regexp.MustCompile(`\{[^}]*\}`)
	out := map[string]bool{}
	for p := range doc.Paths {
		out[param.ReplaceAllString(p, "{}")] = true
	}
	return out
}

// TestPageUsesV1: the page's scripts call /api/ only for what /v1 does not serve (consoleRoutes,
// each of them used), and every /v1 path they call is one of the API's operations; the /api/
// routes /v1 replaced answer 404.
func TestPageUsesV1(t *testing.T) {
	srv := newConsole(t, console.Options{Client: lazyClient(t)})
	ops := docPaths(t, srv)
	used := pagePaths(t)
	var stray, unknown []string
	for p, files := range used {
		switch {
		case strings.HasPrefix(p, "/api/"):
			if _, ok := consoleRoutes[p]; !ok {
				stray = append(stray, fmt.Sprintf("%s (%s)", p, strings.Join(files, ", ")))
			}
		case !ops[p]:
			unknown = append(unknown, fmt.Sprintf("%s (%s)", p, strings.Join(files, ", ")))
		}
	}
	sort.Strings(stray)
	sort.Strings(unknown)
	require.Empty(t, stray, "the page calls /api/ for these: call /v1 (or, when /v1 cannot serve it, add it to consoleRoutes and docs/console.md with why)")
	require.Empty(t, unknown, "the page calls /v1 paths the API does not serve")
	for p := range consoleRoutes {
		require.Contains(t, used, p, "consoleRoutes lists %s, which the page no longer calls: take it out, and its handler", p)
	}
	for _, v1 := range []string{"/v1/runs", "/v1/runs/{}/reviews", "/v1/runs/{}/cancel", "/v1/runs/{}/retry", "/v1/runs/{}/steps/{}/inputs", "/v1/workflows/validate"} {
		require.Contains(t, used, v1, "the page does this through /v1")
	}

	token := csrfOf(t, srv.Client(), srv.URL)
	for _, gone := range []struct{ method, path string }{
		{http.MethodPost, "/api/runs"}, {http.MethodPost, "/api/validate"}, {http.MethodPost, "/api/runs/weft-x/reviews"},
		{http.MethodPost, "/api/runs/weft-x/cancel"}, {http.MethodPost, "/api/runs/weft-x/retry"},
		{http.MethodPost, "/api/workflows/approval-demo/runs"}, {http.MethodGet, "/api/tools"}, {http.MethodGet, "/api/runs/weft-x/steps/a/inputs"},
	} {
		req, err := http.NewRequest(gone.method, srv.URL+gone.path, strings.NewReader(`{}`))
		require.NoError(t, err)
		req.Header.Set("X-CSRF-Token", token)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusNotFound, resp.StatusCode, "%s %s: /v1 serves it now", gone.method, gone.path)
	}
}

// TestV1RefusesACrossSitePost crosses the CSRF check of /v1 in the console: with the session
// cookie of a logged-in admin, a POST without the page's token, or from another site, or with the
// token from another origin, is refused (403) and the run is not touched; the page's own request
// (cookie, token, same origin) gets through. Then the same from a real browser: a page on another
// origin of the same site (the cookie, SameSite=Strict, is sent) auto-submits a form that forges
// a decision as JSON: refused, and the run took no decision.
func TestV1RefusesACrossSitePost(t *testing.T) {
	f := newGated(t)
	o := console.Options{Client: weftclient.New(f, "console-test"), RequireLogin: true}
	var keys map[string]string
	o.Keys, keys = testKeys(t)
	srv := newConsole(t, o)
	c, token := loginAs(t, srv, keys["env"])
	decide := srv.URL + "/v1/runs/weft-fixture/reviews"
	const decision = `{"review":"check","decision":"approve","digest":"d1"}`
	for _, tc := range []struct {
		name, token, origin, site string
		want                      int
		says                      string
	}{
		{"no token", "", srv.URL, "", http.StatusForbidden, "missing or wrong X-CSRF-Token"},
		{"a wrong token", "00", srv.URL, "", http.StatusForbidden, "missing or wrong X-CSRF-Token"},
		{"another origin", token, "http://evil.example", "", http.StatusForbidden, "cross-origin request refused"},
		{"a browser says cross-site", token, "", "cross-site", http.StatusForbidden, "cross-origin request refused"},
		{"a browser says same-site, another port", token, "", "same-site", http.StatusForbidden, "cross-origin request refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, decide, strings.NewReader(decision))
			require.NoError(t, err)
			if tc.token != "" {
				req.Header.Set("X-CSRF-Token", tc.token)
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.site != "" {
				req.Header.Set("Sec-Fetch-Site", tc.site)
			}
			resp, err := c.Do(req)
			require.NoError(t, err)
			out := body(t, resp)
			require.Equal(t, tc.want, resp.StatusCode, out)
			require.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
			require.Contains(t, out, tc.says)
		})
	}
	f.mu.Lock()
	require.Zero(t, f.decisions, "no refused request reached the run")
	f.mu.Unlock()

	// a real browser, crossing from another origin of the same site (127.0.0.1, another port)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<form id="f" method="POST" action="%s" enctype="text/plain"><input type="hidden" name='{"review":"check","decision":"approve","digest":"d1","x":"' value='"}'></form><script>document.getElementById('f').submit()</script>`, decide)
	}))
	t.Cleanup(evil.Close)
	ctx := chromium(t)
	var answer string
	run(t, ctx, "a forged decision from another origin", network.ClearBrowserCookies(),
		chromedp.Navigate(srv.URL+"/login?next=/reviews"), chromedp.SendKeys(`input[name="key"]`, keys["env"]), chromedp.Submit(`form.login`),
		chromedp.WaitVisible(`#review-list`),
		chromedp.Navigate(evil.URL),
		chromedp.Poll(`location.href.includes('/v1/') && document.body && document.body.innerText.length > 0`, nil),
		chromedp.Evaluate(`document.body.innerText`, &answer))
	require.Contains(t, answer, "cross-origin request refused", "the browser sent the session cookie; the origin check refused it")
	require.Contains(t, answer, `"status":403`)
	f.mu.Lock()
	require.Zero(t, f.decisions, "the forged decision did not reach the run")
	f.mu.Unlock()

	code, out := post(t, c, decide, token, srv.URL, decision)
	require.NotEqual(t, http.StatusForbidden, code, "the page's own request gets through: %s", out)
}

// TestReviewerDecidesThroughV1: a logged-in reviewer's decision in the page goes to POST
// /v1/runs/{id}/reviews (the review's id and digest as shown) and the card says who decided; a
// reader logged in who sends a decision from the page is refused by /v1 with 403 naming the role
// it needs and how it is granted.
func TestReviewerDecidesThroughV1(t *testing.T) {
	f := newGated(t)
	o := console.Options{Client: weftclient.New(f, "console-test"), RequireLogin: true}
	var keys map[string]string
	o.Keys, keys = testKeys(t)
	srv := newConsole(t, o)
	ctx := chromium(t)
	login := func(who string) chromedp.Action {
		return chromedp.Tasks{network.ClearBrowserCookies(), chromedp.Navigate(srv.URL + "/login?next=/runs/weft-fixture"),
			chromedp.SendKeys(`input[name="key"]`, keys[who]), chromedp.Submit(`form.login`), chromedp.WaitVisible(`#pending .card`)}
	}
	const spy = `(() => { window.__sent = []; const f = window.fetch; window.fetch = (u, o) => { if (o && o.method === 'POST') window.__sent.push({ url: String(u), body: JSON.parse(o.body) }); return f(u, o); }; })()`

	var refused struct {
		Status int
		Type   string
		Detail string
	}
	run(t, ctx, "a reader's decision", login("rita"),
		chromedp.Evaluate(`fetch('/v1/runs/weft-fixture/reviews', { method: 'POST', credentials: 'same-origin',
		  headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': document.querySelector('meta[name="csrf-token"]').content },
		  body: JSON.stringify({ review: 'check', decision: 'approve', digest: 'd1' }) }).then(async (r) => Object.assign({ Status: r.status }, await r.json()))`,
			&refused, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	require.Equal(t, http.StatusForbidden, refused.Status)
	require.Contains(t, refused.Detail, `POST /v1/runs/{id}/reviews needs the role "reviewer"; rita has the roles reader`)
	require.Contains(t, refused.Detail, "weft mcp generate-key --name rita --role reader --role reviewer")
	f.mu.Lock()
	require.Zero(t, f.decisions, "the reader's decision did not reach the run")
	f.mu.Unlock()

	var sent []struct {
		URL  string
		Body map[string]any
	}
	var decided string
	run(t, ctx, "the reviewer's decisions", login("ana"), chromedp.Evaluate(spy, nil),
		chromedp.Click(`#pending .card button.approve`),
		chromedp.Poll(`document.querySelector('#pending .card .card-status').textContent.includes('changed since')`, nil),
		chromedp.Click(`#pending .card button.approve`),
		chromedp.Poll(`document.querySelector('#pending .card.decided') !== null`, nil),
		liveText(`#pending .card .card-status`, &decided),
		chromedp.Evaluate(`window.__sent`, &sent))
	require.Contains(t, decided, "approved by ana")
	require.Len(t, sent, 2, "the refused decision, then the one taken")
	for _, s := range sent {
		require.Equal(t, "/v1/runs/weft-fixture/reviews", s.URL)
		require.Equal(t, "check", s.Body["review"])
		require.Equal(t, "d1", s.Body["digest"], "the digest of the card shown")
		require.Equal(t, "approve", s.Body["decision"])
	}
}
