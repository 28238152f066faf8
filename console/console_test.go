package console_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	tclient "go.temporal.io/sdk/client"

	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/console"
	"github.com/weftworks/weft/internal/testkit/reviewfake"
	"github.com/weftworks/weft/templates"
	"github.com/weftworks/weft/workflows/dsl"
)

// The handlers that need no Temporal: the playground, validation, login, CSRF, escaping. The
// ones that read runs are tested on the embedded stack in integration/ (console_test.go).

func newConsole(t testing.TB, o console.Options) *httptest.Server {
	t.Helper()
	s, err := console.New(o)
	require.NoError(t, err)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv
}

func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([0-9a-f]+)">`)

func csrfOf(t *testing.T, c *http.Client, base string) string {
	t.Helper()
	resp, err := c.Get(base + "/workflows")
	require.NoError(t, err)
	m := csrfMeta.FindStringSubmatch(body(t, resp))
	require.Len(t, m, 2, "the page carries its CSRF token")
	return m[1]
}

func post(t *testing.T, c *http.Client, u, csrf, origin, payload string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(payload))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if csrf != "" {
		req.Header.Set("X-CSRF-Token", csrf)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	return resp.StatusCode, body(t, resp)
}

func TestGraphOfTemplates(t *testing.T) {
	for _, tc := range []struct {
		template string
		check    func(t *testing.T, g *console.Graph)
	}{
		{"multi-collection-search", func(t *testing.T, g *console.Graph) {
			require.GreaterOrEqual(t, len(g.Layers), 2)
			require.Len(t, g.Layers[0], 2, "the two searches run side by side")
			cats := map[string]string{}
			for _, n := range g.Nodes {
				cats[n.Tool] = n.Category
			}
			require.Equal(t, "retrieval", cats["query"])
			require.Equal(t, "control", cats["merge"])
		}},
		{"approval-demo", func(t *testing.T, g *console.Graph) {
			found := false
			for _, n := range g.Nodes {
				if n.Tool == "review" {
					found = true
					require.Equal(t, "review", n.Category, "review steps have a category of their own")
				}
			}
			require.True(t, found)
			require.NotEmpty(t, g.Edges)
		}},
	} {
		t.Run(tc.template, func(t *testing.T) {
			tpl, err := templates.Get(tc.template)
			require.NoError(t, err)
			w, err := dsl.Load(tpl.Name, tpl.Data)
			require.NoError(t, err)
			g := console.NewGraph(w)
			require.Len(t, g.Nodes, len(w.Steps))
			layer := map[string]int{}
			for i, l := range g.Layers {
				for _, id := range l {
					layer[id] = i
				}
			}
			for _, e := range g.Edges {
				require.Less(t, layer[e.From], layer[e.To], "edge %s -> %s goes down the layers", e.From, e.To)
			}
			tc.check(t, g)
		})
	}
}

func TestGraphMarksBranchesAndForEach(t *testing.T) {
	w, err := dsl.Load("b.json", []byte(`{"name":"b","inputs":{"items":{"type":"array","default":["x"]}},"steps":[
	  {"id":"check","tool":"conditional","inputs":{"condition":"{{ inputs.items.length > 0 }}","then":["yes"],"else":["no"]}},
	  {"id":"yes","tool":"template","inputs":{"text":"y"}},
	  {"id":"no","tool":"template","inputs":{"text":"n"}},
	  {"id":"each","tool":"template","forEach":"{{ inputs.items }}","inputs":{"text":"{{ item }}"},"dependsOn":["yes"]}]}`))
	require.NoError(t, err)
	g := console.NewGraph(w)
	kinds := map[string]string{}
	for _, e := range g.Edges {
		kinds[e.From+">"+e.To] = e.Kind
	}
	require.Equal(t, "then", kinds["check>yes"])
	require.Equal(t, "else", kinds["check>no"])
	require.Equal(t, "dependsOn", kinds["yes>each"])
	for _, n := range g.Nodes {
		switch n.ID {
		case "yes":
			require.Equal(t, "check: then", n.Branch)
		case "each":
			require.Equal(t, "{{ inputs.items }}", n.ForEach)
		}
	}
}

// TestValidateEndpoint: the page's editor is checked by /v1 (POST /v1/workflows/validate with
// the text: diagnostics in its lines) and a valid text drawn by /api/graph.
func TestValidateEndpoint(t *testing.T) {
	srv := newConsole(t, console.Options{Reviewer: "ana"})
	c := srv.Client()
	token := csrfOf(t, c, srv.URL)
	for _, tc := range []struct {
		name, source string
		valid        bool
		want         string // in a diagnostic
		line         int
	}{
		{"valid", `{"name":"ok","steps":[{"id":"t","tool":"template","inputs":{"text":"hi"}}]}`, true, "", 0},
		{"unknown tool", "{\"name\":\"x\",\n \"steps\":[{\"id\":\"t\",\"tool\":\"serch\",\"inputs\":{}}]}", false, "search", 2},
		{"not json", `{"name":`, false, "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := json.Marshal(map[string]string{"source": tc.source})
			code, out := post(t, c, srv.URL+"/v1/workflows/validate", token, srv.URL, string(b))
			require.Equal(t, http.StatusOK, code, out)
			var res weftclient.Validation
			require.NoError(t, json.Unmarshal([]byte(out), &res))
			require.Equal(t, tc.valid, res.Valid, out)
			code, drawn := post(t, c, srv.URL+"/api/graph", token, srv.URL, string(b))
			if tc.valid {
				require.Equal(t, http.StatusOK, code, drawn)
				var g struct{ Graph *console.Graph }
				require.NoError(t, json.Unmarshal([]byte(drawn), &g))
				require.NotNil(t, g.Graph)
				require.Len(t, g.Graph.Nodes, 1)
				return
			}
			require.Equal(t, http.StatusBadRequest, code, "an invalid text is not drawn: %s", drawn)
			require.NotEmpty(t, res.Diagnostics)
			require.Equal(t, tc.line, res.Diagnostics[0].Line, out)
			require.Contains(t, res.Diagnostics[0].String(), tc.want)
		})
	}
}

// TestStateChangesNeedTheTokenAndTheOrigin: a request another site makes the browser send is
// refused, as is one without the page's token.
func TestStateChangesNeedTheTokenAndTheOrigin(t *testing.T) {
	srv := newConsole(t, console.Options{})
	c := srv.Client()
	token := csrfOf(t, c, srv.URL)
	src := `{"source":"{}"}`
	// /v1 as the page uses it, and the console's own route left (POST /api/graph): both guarded
	for _, tc := range []struct {
		name, token, origin string
		want                int
	}{
		{"no token", "", srv.URL, http.StatusForbidden},
		{"wrong token", "00", srv.URL, http.StatusForbidden},
		{"other origin", token, "http://evil.example", http.StatusForbidden},
		{"right token, same origin", token, srv.URL, http.StatusOK},
		{"right token, no origin (not a browser)", token, "", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := post(t, c, srv.URL+"/v1/workflows/validate", tc.token, tc.origin, src)
			require.Equal(t, tc.want, code, out)
			code, out = post(t, c, srv.URL+"/api/graph", tc.token, tc.origin, src)
			if tc.want == http.StatusOK {
				require.Equal(t, http.StatusBadRequest, code, "{} is no workflow: %s", out)
			} else {
				require.Equal(t, tc.want, code, out)
			}
		})
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/workflows", nil)
	req.Host = "evil.example"
	resp, err := c.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "DNS rebinding guard")
	resp.Body.Close()
}

func TestLoginOffHost(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	key, _, err := auth.GenerateNamedKey(keyFile, "ana", []string{"reviewer"})
	require.NoError(t, err)
	keys, err := auth.LoadKeys(keyFile)
	require.NoError(t, err)
	srv := newConsole(t, console.Options{Keys: keys, RequireLogin: true})
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	resp, err := c.Get(srv.URL + "/workflows")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/login?next=%2Fworkflows", resp.Header.Get("Location"))

	resp, err = c.Get(srv.URL + "/api/runs")
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	resp.Body.Close()

	resp, err = c.PostForm(srv.URL+"/login", url.Values{"key": {"wrong"}, "name": {"ana"}})
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Contains(t, body(t, resp), "not valid")

	resp, err = c.PostForm(srv.URL+"/login", url.Values{"key": {key}, "next": {"//evil.example/"}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/", resp.Header.Get("Location"), "redirects stay on this site")
	var cookie *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == "weft_session" {
			cookie = ck
		}
	}
	require.NotNil(t, cookie)
	require.True(t, cookie.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, cookie.SameSite)

	resp, err = c.Get(srv.URL + "/workflows")
	require.NoError(t, err)
	page := body(t, resp)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, page, `<span class="who">ana `, "the session is the key's identity")
	token := csrfMeta.FindStringSubmatch(page)[1]
	code, _ := post(t, c, srv.URL+"/v1/workflows/validate", token, "", `{"source":"{}"}`)
	require.Equal(t, http.StatusOK, code)
	resp, err = http.Get(srv.URL + "/v1/runs")
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "/v1 without the session is refused")
	require.Contains(t, body(t, resp), "log in first")

	// guessing keys gets slow; the right key keeps working
	limited := false
	for range 40 {
		resp, err := c.PostForm(srv.URL+"/login", url.Values{"key": {"guess"}, "name": {"x"}})
		require.NoError(t, err)
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			limited = true
			require.NotEmpty(t, resp.Header.Get("Retry-After"))
			break
		}
	}
	require.True(t, limited, "failed logins are limited")
	resp, err = c.PostForm(srv.URL+"/login", url.Values{"key": {key}, "name": {"ana"}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
}

// TestPlaygroundEscapesWorkflowText: a workflow file's text is data, never markup.
func TestPlaygroundEscapesWorkflowText(t *testing.T) {
	dir := t.TempDir()
	evil := `{"name":"evil","inputs":{"x":{"type":"string","default":"<i>x</i>"}},"description":"<script>alert(1)</script><img src=x onerror=alert(2)>","steps":[
	  {"id":"t","name":"</script><script>alert(3)</script>","tool":"template","inputs":{"text":"<b>{{ inputs.x }}</b>"}}]}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "evil.json"), []byte(evil), 0o644))
	srv := newConsole(t, console.Options{WorkflowsDir: dir})
	for _, path := range []string{"/workflows", "/workflows/evil"} {
		resp, err := srv.Client().Get(srv.URL + path)
		require.NoError(t, err)
		page := body(t, resp)
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		require.NotContains(t, page, "<script>alert", path)
		require.NotContains(t, page, "<img src=x", path)
		require.Contains(t, page, "&lt;script&gt;alert(1)", path)
		require.Contains(t, resp.Header.Get("Content-Security-Policy"), "script-src 'self'", path)
		require.Contains(t, page, "evil.json", path)
		require.NotContains(t, page, dir, "the page names the file, not where it is on the machine (issue 40)")
	}
	resp, err := srv.Client().Get(srv.URL + "/workflows/nothing-here")
	require.NoError(t, err)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Contains(t, body(t, resp), "no workflow")
}

// consoleWithKeys serves a console that asks for a login, with one key per role, over a Temporal
// that is never reached (a lazy client): a request that passes the role check fails with 502.
func consoleWithKeys(t *testing.T) (*httptest.Server, map[string]string) {
	t.Helper()
	loaded, keys := testKeys(t)
	return newConsole(t, console.Options{Keys: loaded, RequireLogin: true, Client: lazyClient(t)}), keys
}

// testKeys are one key per role — rita reader, ana reviewer, carl runner, fin finance — and env,
// a plain admin key, by name.
func testKeys(t *testing.T) (*auth.Keys, map[string]string) {
	t.Helper()
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	keys := map[string]string{}
	for name, roles := range map[string][]string{"rita": {"reader"}, "ana": {"reviewer"}, "carl": {"runner"}, "fin": {"finance"}} {
		k, _, err := auth.GenerateNamedKey(keyFile, name, roles)
		require.NoError(t, err)
		keys[name] = k
	}
	loaded, err := auth.LoadKeys(keyFile, "env-admin-key")
	require.NoError(t, err)
	keys["env"] = "env-admin-key"
	return loaded, keys
}

func lazyClient(t testing.TB) *weftclient.Client {
	t.Helper()
	tc, err := tclient.NewLazyClient(tclient.Options{HostPort: "127.0.0.1:1", Logger: weftclient.QuietLogger()})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	return weftclient.New(tc, "console-test")
}

// loginAs logs in with key and returns the client (with its cookie) and the page's CSRF token.
func loginAs(t *testing.T, srv *httptest.Server, key string) (*http.Client, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(srv.URL+"/login", url.Values{"key": {key}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	return c, csrfOf(t, c, srv.URL)
}

// TestConsoleRoles: a logged-in person may approve only as a reviewer and start or cancel only
// as a runner, through /v1 as the page does them; the refusal (403, a problem) names the role and
// the command that grants it. Allowed requests go on to Temporal (unreachable here: 503).
func TestConsoleRoles(t *testing.T) {
	srv, keys := consoleWithKeys(t)
	approve := func(c *http.Client, token string) (int, string) {
		return post(t, c, srv.URL+"/v1/runs/weft-x/reviews", token, srv.URL, `{"review":"approve","decision":"approve","reviewer":"mallory","digest":"abc"}`)
	}
	cancel := func(c *http.Client, token string) (int, string) {
		return post(t, c, srv.URL+"/v1/runs/weft-x/cancel", token, srv.URL, `{}`)
	}
	start := func(c *http.Client, token string) (int, string) {
		return post(t, c, srv.URL+"/v1/runs", token, srv.URL, `{"workflow":"approval-demo","inputs":{"version":"1"}}`)
	}
	for _, tc := range []struct {
		who                    string
		approve, cancel, start string // "" allowed, else the role named in the refusal
	}{
		{"rita", "reviewer", "runner", "runner"},
		{"ana", "", "runner", "runner"},
		{"carl", "reviewer", "", ""},
		{"env", "", "", ""},
	} {
		t.Run(tc.who, func(t *testing.T) {
			c, token := loginAs(t, srv, keys[tc.who])
			for what, do := range map[string]func(*http.Client, string) (int, string){"approve": approve, "cancel": cancel, "start": start} {
				want := map[string]string{"approve": tc.approve, "cancel": tc.cancel, "start": tc.start}[what]
				code, out := do(c, token)
				if want == "" {
					require.Equal(t, http.StatusServiceUnavailable, code, "%s may %s: the request reaches Temporal: %s", tc.who, what, out)
					continue
				}
				require.Equal(t, http.StatusForbidden, code, "%s may not %s: %s", tc.who, what, out)
				require.Contains(t, out, `needs the role \"`+want+`\"`, what)
				require.Contains(t, out, "weft mcp generate-key --name "+tc.who, "the refusal says how to grant it")
			}
		})
	}
	t.Run("a routing role alone cannot log in", func(t *testing.T) {
		resp, err := http.PostForm(srv.URL+"/login", url.Values{"key": {keys["fin"]}})
		require.NoError(t, err)
		page := body(t, resp)
		require.Equal(t, http.StatusForbidden, resp.StatusCode)
		require.Contains(t, page, "--role finance --role reader")
		require.Empty(t, resp.Cookies(), "no session")
	})
}

// TestConsoleOperatorOnLoopback: without a login the console is the operator's, who may decide
// and start (the requests reach Temporal).
func TestConsoleOperatorOnLoopback(t *testing.T) {
	srv := newConsole(t, console.Options{Client: lazyClient(t), Reviewer: "op"})
	c := srv.Client()
	token := csrfOf(t, c, srv.URL)
	code, out := post(t, c, srv.URL+"/v1/runs/weft-x/reviews", token, srv.URL, `{"review":"approve","decision":"approve","digest":"abc"}`)
	require.Equal(t, http.StatusServiceUnavailable, code, out)
	code, out = post(t, c, srv.URL+"/v1/runs", token, srv.URL, `{"workflow":"approval-demo","inputs":{"version":"1"}}`)
	require.Equal(t, http.StatusServiceUnavailable, code, out)
}

// reviewsTemporal is a Temporal whose n running runs (r0 … r{n-1}) each wait on one review, r0
// asked first, listed as visibility lists them (reviewfake.Runs), each review with its data.
// Every third run (r0, r3, …) was started by rita, the others by bo.
func reviewsTemporal(n int) *reviewfake.Runs {
	return &reviewfake.Runs{N: n, Data: true, MemoKey: weftclient.MemoStartedBy, StartedBy: func(i int) string {
		if i%3 == 0 {
			return "rita"
		}
		return "bo"
	}}
}

// TestReviewsPaging: the reviews list is paged as the runs list is (the longest waiting first,
// ReviewsPerPage a page, First/Previous/Next, the page kept by the live refresh), and the nav's
// count and the list say how many wait in all, not how many one page shows.
func TestReviewsPaging(t *testing.T) {
	const n, per = 7, 3
	srv := newConsole(t, console.Options{Client: weftclient.New(reviewsTemporal(n), "console-test"), Reviewer: "op", ReviewsPerPage: per})
	type page struct {
		Reviews []struct {
			Run string `json:"run"`
		} `json:"reviews"`
		Pager struct {
			Page  int    `json:"page"`
			Newer string `json:"newerURL"`
			Older string `json:"olderURL"`
		} `json:"pager"`
		Total int `json:"total"`
	}
	read := func(u string) page {
		resp, err := http.Get(srv.URL + u)
		require.NoError(t, err)
		var p page
		require.NoError(t, json.Unmarshal([]byte(body(t, resp)), &p), u)
		return p
	}
	runs := func(p page) []string {
		var out []string
		for _, r := range p.Reviews {
			out = append(out, r.Run)
		}
		return out
	}
	first := read("/api/reviews")
	require.Equal(t, []string{"r0", "r1", "r2"}, runs(first), "the longest waiting first")
	require.Equal(t, n, first.Total)
	require.Equal(t, 1, first.Pager.Page)
	require.Empty(t, first.Pager.Newer)
	require.True(t, strings.HasPrefix(first.Pager.Older, "/reviews?before="), first.Pager.Older)
	second := read("/api" + first.Pager.Older)
	require.Equal(t, []string{"r3", "r4", "r5"}, runs(second))
	require.Equal(t, 2, second.Pager.Page)
	require.Equal(t, "/reviews", second.Pager.Newer)
	last := read("/api" + second.Pager.Older)
	require.Equal(t, []string{"r6"}, runs(last))
	require.Empty(t, last.Pager.Older)

	ctx := chromium(t)
	cards := `[...document.querySelectorAll('#review-list .card')].map((c) => c.dataset.run)`
	var got struct {
		Cards           []string
		Count, Total    string
		Page, Next, Prv string
		Card            string
	}
	state := `({ Cards: ` + cards + `, Card: document.querySelector('#review-list .card').innerText, Count: document.getElementById('review-count').textContent, Total: document.getElementById('review-total').textContent,
	  Page: document.getElementById('page-no').textContent, Next: document.getElementById('older').textContent, Prv: document.getElementById('newer').textContent })`
	run(t, ctx, "first page", chromedp.Navigate(srv.URL+"/reviews"), chromedp.WaitVisible(`#review-list .card`), chromedp.Evaluate(state, &got))
	require.Equal(t, []string{"r0", "r1", "r2"}, got.Cards)
	require.Equal(t, "7", got.Count, "the nav counts every review waiting")
	require.Equal(t, "7 waiting in all, 3 on this page.", got.Total)
	require.Equal(t, "page 1", got.Page)
	require.Equal(t, "Next ›", got.Next, "a queue's pager says Next, not Older")
	require.Contains(t, got.Card, "data of r0")
	require.NotContains(t, got.Card, "null", "a review without instructions shows none (not the text null)")

	// the second page, kept by the live refresh (two more reads of the list)
	run(t, ctx, "second page", chromedp.Click(`#older`), chromedp.WaitVisible(`#newer`),
		chromedp.Evaluate(`(() => { window.__reads = 0; const f = window.fetch; window.fetch = (u, o) => { if (String(u).startsWith('/api/reviews')) window.__reads++; return f(u, o); }; })()`, nil),
		chromedp.Poll(`window.__reads >= 2`, nil, chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.Evaluate(state, &got))
	require.Equal(t, []string{"r3", "r4", "r5"}, got.Cards)
	require.Equal(t, "page 2", got.Page)
	require.Equal(t, "‹ Previous", got.Prv)
	require.Equal(t, "7", got.Count)
	shot(t, ctx, "reviews-page-2")
}

// TestReviewsTotalOfAllRuns: with more than 100 runs waiting (listed newest first, a page at a
// time) the reviews list counts the reviews of all of them and starts with the longest waiting;
// a signed-in reader's count is of the reviews they may read among all of them; past the bound
// (weftclient.MaxReviewRuns runs) the list says "at least" and the nav's count "N+".
func TestReviewsTotalOfAllRuns(t *testing.T) {
	type page struct {
		Reviews []struct {
			Run string `json:"run"`
		} `json:"reviews"`
		Total   int `json:"total"`
		Counted struct {
			Total string `json:"total"`
			More  bool   `json:"more"`
		} `json:"counted"`
	}
	read := func(c *http.Client, u string) page {
		resp, err := c.Get(u)
		require.NoError(t, err)
		var p page
		b := body(t, resp)
		require.NoError(t, json.Unmarshal([]byte(b), &p), b)
		return p
	}
	t.Run("150 runs", func(t *testing.T) {
		srv := newConsole(t, console.Options{Client: weftclient.New(reviewsTemporal(150), "console-test"), Reviewer: "op", ReviewsPerPage: 20})
		p := read(http.DefaultClient, srv.URL+"/api/reviews")
		require.Equal(t, 150, p.Total, "every run waiting counted, not the 100 newest")
		require.Equal(t, "r0", p.Reviews[0].Run, "the longest waiting first")
		require.Equal(t, "150 waiting in all, 20 on this page.", p.Counted.Total)
		require.False(t, p.Counted.More)
		resp, err := http.Get(srv.URL + "/reviews")
		require.NoError(t, err)
		require.Contains(t, body(t, resp), "150 waiting in all, 20 on this page.", "the page says the same as it is rendered")

		// a ?before= that sorts ahead of every review is the first page, without a First link
		var first struct {
			Pager struct {
				Page   int    `json:"page"`
				Newest string `json:"newestURL"`
			} `json:"pager"`
		}
		resp, err = http.Get(srv.URL + "/api/reviews?before=9999999999999999999")
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal([]byte(body(t, resp)), &first))
		require.Equal(t, 1, first.Pager.Page)
		require.Empty(t, first.Pager.Newest, "page 1 has no « First")
	})
	t.Run("the listing fails", func(t *testing.T) {
		srv := newConsole(t, console.Options{Client: lazyClient(t), Reviewer: "op"})
		resp, err := http.Get(srv.URL + "/reviews")
		require.NoError(t, err)
		page := body(t, resp)
		require.Contains(t, page, "listing runs waiting for a review", "the error is shown")
		require.NotContains(t, page, "waiting in all", "no count under the error")
		require.NotContains(t, page, "Nothing waits for a decision", "the list was not read: nothing is said of it")
	})
	t.Run("a signed-in reader", func(t *testing.T) {
		loaded, keys := testKeys(t)
		srv := newConsole(t, console.Options{Keys: loaded, RequireLogin: true, Client: weftclient.New(reviewsTemporal(150), "console-test"), ReviewsPerPage: 20})
		c, _ := loginAs(t, srv, keys["rita"])
		p := read(c, srv.URL+"/api/reviews")
		require.Equal(t, 50, p.Total, "rita started every third run of the 150")
		require.Equal(t, "r0", p.Reviews[0].Run)
		require.Equal(t, "50 waiting in all, 20 on this page.", p.Counted.Total)
	})
	t.Run("past the bound", func(t *testing.T) {
		n := weftclient.MaxReviewRuns + 5
		srv := newConsole(t, console.Options{Client: weftclient.New(reviewsTemporal(n), "console-test"), Reviewer: "op", ReviewsPerPage: 20})
		p := read(http.DefaultClient, srv.URL+"/api/reviews")
		require.Equal(t, weftclient.MaxReviewRuns, p.Total)
		require.Equal(t, "r5", p.Reviews[0].Run, "the reviews of the newest runs waiting")
		require.True(t, p.Counted.More)
		require.Equal(t, fmt.Sprintf("At least %d waiting: the reviews of the %d newest runs waiting are listed; older runs wait too, and they may have waited longest. The older ones are listed once newer ones are decided. 20 on this page.", weftclient.MaxReviewRuns, weftclient.MaxReviewRuns), p.Counted.Total)

		// a reader who started none of the newest runs waiting is told so, not "at least 0"
		loaded, keys := testKeys(t)
		srv = newConsole(t, console.Options{Keys: loaded, RequireLogin: true, Client: weftclient.New(reviewsTemporal(n), "console-test"), ReviewsPerPage: 20})
		c, _ := loginAs(t, srv, keys["carl"])
		p = read(c, srv.URL+"/api/reviews")
		require.Zero(t, p.Total)
		require.True(t, p.Counted.More)
		require.Equal(t, fmt.Sprintf("No review you may see waits in the %d newest runs waiting; older runs wait too, and they may have waited longest. The older ones are listed once newer ones are decided.", weftclient.MaxReviewRuns), p.Counted.Total)
		resp, err := c.Get(srv.URL + "/reviews")
		require.NoError(t, err)
		page := body(t, resp)
		require.NotContains(t, page, "At least 0")
		require.Contains(t, page, `<p id="no-reviews" class="note" hidden></p>`, "said once on the page, in the count")
	})
}

// TestConsoleLookupsAndActsAreOwnerScoped crosses the read and act rules through the console
// with logins, over a Temporal of runs started by bob, carl and the operator
// (reviewfake.Owners): a near miss of an id on the run page, its API, its event stream and its
// cancel suggests only the runs the login may read, and a cancel acts only for the run's starter
// and an admin (403 naming who may otherwise).
func TestConsoleLookupsAndActsAreOwnerScoped(t *testing.T) {
	const probe = "weft-finance-approval-"
	keyFile := filepath.Join(t.TempDir(), "keys.json")
	keys := map[string]string{"admin": "env-admin-key"}
	for name, roles := range map[string][]string{"rita": {"reader"}, "carl": {"runner"}, "bob": {"runner"}} {
		k, _, err := auth.GenerateNamedKey(keyFile, name, roles)
		require.NoError(t, err)
		keys[name] = k
	}
	loaded, err := auth.LoadKeys(keyFile, keys["admin"])
	require.NoError(t, err)
	f := &reviewfake.Runs{N: 6, Prefix: probe, MemoKey: weftclient.MemoStartedBy, StartedBy: reviewfake.Owners}
	srv := newConsole(t, console.Options{Client: weftclient.New(f, "console-test"), Keys: loaded, RequireLogin: true})

	for who, want := range map[string]string{ // what each login is told it may have meant
		"rita":  probe + "5, " + probe + "2?",
		"carl":  probe + "5, " + probe + "4, " + probe + "2?",
		"bob":   probe + "5, " + probe + "3, " + probe + "2?",
		"admin": probe + "5, " + probe + "4, " + probe + "3?",
	} {
		c, token := loginAs(t, srv, keys[who])
		for _, path := range []string{"/runs/", "/api/runs/", "/api/runs/%s/events", "/v1/runs/%s/cancel", "/v1/runs/%s"} {
			u := srv.URL + path + probe
			if strings.Contains(path, "%s") {
				u = srv.URL + fmt.Sprintf(path, probe)
			}
			if who == "admin" && strings.HasSuffix(path, "/events") {
				continue // an admin reads every run: the stream opens without a lookup, and says what it finds in the stream
			}
			var code int
			var out string
			if strings.HasSuffix(path, "/cancel") {
				if who == "rita" {
					continue // a reader may not cancel at all (TestConsoleRoles)
				}
				code, out = post(t, c, u, token, srv.URL, `{}`)
			} else {
				resp, err := c.Get(u)
				require.NoError(t, err)
				code, out = resp.StatusCode, body(t, resp)
			}
			require.Equal(t, http.StatusNotFound, code, "%s %s: %s", who, path, out)
			require.Contains(t, out, "(did you mean "+want+")", "%s %s", who, path)
		}
	}

	const bobs, carls, operators = probe + "0", probe + "1", probe + "2"
	for _, tc := range []struct {
		who, id string
		code    int
		want    string
	}{
		{"carl", bobs, http.StatusForbidden, "run " + bobs + " was started by bob: carl may read only"},
		{"carl", operators, http.StatusForbidden, "cannot cancel run " + operators + ": it is the operator's"},
		{"bob", bobs, http.StatusOK, `"cancelRequested":true`},
		{"admin", carls, http.StatusOK, `"cancelRequested":true`},
	} {
		c, token := loginAs(t, srv, keys[tc.who])
		code, out := post(t, c, srv.URL+"/v1/runs/"+tc.id+"/cancel", token, srv.URL, `{}`)
		require.Equal(t, tc.code, code, "%s cancels %s: %s", tc.who, tc.id, out)
		require.Contains(t, out, tc.want)
	}
	require.Equal(t, []string{bobs, carls}, f.Cancelled(), "only the starter's and the admin's cancels reached Temporal")
}
