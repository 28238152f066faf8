package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/console"
	"github.com/weftworks/weft/internal/testkit/fakellm"
	"github.com/weftworks/weft/workflows/dsl"
)

// A review whose title, data and upstream output carry markup: the console must show it as text.
const consoleFlow = `{"name":"console-flow","inputs":{"text":{"type":"string","default":"<img src=x onerror=\"window.__pwned=1\">"}},"steps":[
  {"id":"split","tool":"chunk","inputs":{"text":"{{ inputs.text }} and more words to split","chunkSize":200}},
  {"id":"draft","tool":"template","inputs":{"text":"<script>window.__pwned=2</script>{{ inputs.text }}"}},
  {"id":"approve","tool":"review","inputs":{"title":"Publish <b>this</b>?","instructions":"<script>window.__pwned=3</script>",
    "data":{"headline":"{{ draft.output.text }}","count":2}}},
  {"id":"publish","tool":"template","inputs":{"text":"{{ approve.output.data.headline }}"}}],
  "output":"{{ publish.output.text }}"}`

type consoleEnv struct {
	url    string
	client *weftclient.Client
	dir    string
}

func startConsole(t *testing.T, queue string) *consoleEnv {
	t.Helper()
	c := dial(t)
	startWorker(t, c, queue, nil)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "console-flow.json"), []byte(consoleFlow), 0o644))
	wc := weftclient.New(c, queue)
	s, err := console.New(console.Options{Client: wc, WorkflowsDir: dir, Reviewer: "console-test", PollInterval: 100 * time.Millisecond,
		TemporalUI: "http://127.0.0.1:8233", Namespace: server.Namespace})
	require.NoError(t, err)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return &consoleEnv{url: srv.URL, client: wc, dir: dir}
}

var csrfToken = regexp.MustCompile(`<meta name="csrf-token" content="([0-9a-f]+)">`)

func (e *consoleEnv) csrf(t *testing.T) string {
	t.Helper()
	resp, err := http.Get(e.url + "/workflows")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := csrfToken.FindStringSubmatch(string(b))
	require.Len(t, m, 2)
	return m[1]
}

func (e *consoleEnv) post(t *testing.T, path, payload string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.url+path, strings.NewReader(payload))
	req.Header.Set("X-CSRF-Token", e.csrf(t))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return resp.StatusCode, out
}

func (e *consoleEnv) get(t *testing.T, path string, v any) int {
	t.Helper()
	resp, err := http.Get(e.url + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	if v != nil {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(v))
	}
	return resp.StatusCode
}

func (e *consoleEnv) start(t *testing.T) string {
	t.Helper()
	code, out := e.post(t, "/v1/runs", `{"workflow":"console-flow","inputs":{}}`)
	require.Equal(t, http.StatusCreated, code, out)
	id := out["id"].(string)
	require.Eventually(t, func() bool {
		p, err := e.client.Pending(context.Background(), id)
		return err == nil && len(p) == 1
	}, 20*time.Second, 50*time.Millisecond)
	return id
}

// TestConsoleHandlers: the console's run, review, events, inputs and cancel endpoints on the
// embedded stack, through the one client package: those the page calls on /v1 (start, a step's
// inputs, a decision, cancel) and the console's own (a run as its page draws it, its snapshots,
// the reviews, the runs' rows).
func TestConsoleHandlers(t *testing.T) {
	e := startConsole(t, "console-handlers")
	id := e.start(t)

	resp, err := http.Get(e.url + "/runs/" + id)
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NotContains(t, string(page), "<script>window.__pwned")
	require.NotContains(t, string(page), "<img src=x")
	require.Contains(t, string(page), "/namespaces/default/workflows/"+id, "links to the Temporal UI")

	var view console.RunView
	require.Equal(t, http.StatusOK, e.get(t, "/api/runs/"+id, &view))
	require.NotNil(t, view.Graph)
	require.Len(t, view.Graph.Nodes, 4)
	require.Equal(t, "console-flow", view.Workflow)

	// the events stream starts with a snapshot showing the pending review
	resp, err = http.Get(e.url + "/api/runs/" + id + "/events")
	require.NoError(t, err)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var first string
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			first = strings.TrimPrefix(sc.Text(), "data: ")
			break
		}
	}
	resp.Body.Close()
	require.Contains(t, first, `"awaiting_review"`)
	require.Contains(t, first, `"pendingReviews"`)

	var reviews struct {
		Reviews []struct {
			Run    string         `json:"run"`
			Review map[string]any `json:"review"`
		} `json:"reviews"`
	}
	require.Equal(t, http.StatusOK, e.get(t, "/api/reviews", &reviews))
	found, digest := false, ""
	for _, r := range reviews.Reviews {
		if r.Run == id {
			found, digest = true, fmt.Sprint(r.Review["digest"])
			require.Equal(t, "Publish <b>this</b>?", r.Review["title"], "JSON keeps the text as it is")
		}
	}
	require.True(t, found)

	var calls weftclient.StepCalls
	require.Equal(t, http.StatusOK, e.get(t, "/v1/runs/"+id+"/steps/split/inputs", &calls))
	require.Equal(t, 1, calls.Total)
	require.Contains(t, fmt.Sprint(calls.Inputs[0]), "and more words to split", "the resolved inputs of the activity call")

	// an edit that does not match the data's shape is refused with the reason; then approve
	code, out := e.post(t, "/v1/runs/"+id+"/reviews", `{"review":"approve","decision":"edit","data":{"headline":7},"digest":"`+digest+`"}`)
	require.Equal(t, http.StatusConflict, code, out)
	require.Contains(t, out["detail"], "headline")
	code, out = e.post(t, "/v1/runs/"+id+"/reviews", `{"review":"approve","decision":"edit","data":{"headline":"Plain","count":1},"reviewer":"ana","digest":"`+digest+`"}`)
	require.Equal(t, http.StatusOK, code, out)
	require.Equal(t, "ana", out["reviewer"])
	res, err := e.client.Result(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, "Plain", res.GetOutput().GetStringValue())

	// The listing reads Temporal's visibility store, which learns of the completion a moment after
	// the result is there: wait for it.
	var ids []string
	require.Eventually(t, func() bool {
		var runs struct {
			Runs []console.RunRow `json:"runs"`
		}
		resp, err := http.Get(e.url + "/api/runs?status=completed&workflow=console-flow")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&runs) != nil {
			return false
		}
		ids = ids[:0]
		for _, r := range runs.Runs {
			if r.Status != "completed" {
				return false
			}
			ids = append(ids, r.ID)
		}
		return slices.Contains(ids, id)
	}, 10*time.Second, 50*time.Millisecond, "completed runs listed: %v", ids)
	require.Equal(t, http.StatusBadRequest, e.get(t, "/api/runs?status=sleeping", nil))

	// cancel from the run page
	other := e.start(t)
	code, out = e.post(t, "/v1/runs/"+other+"/cancel", `{}`)
	require.Equal(t, http.StatusOK, code, out)
	require.Eventually(t, func() bool {
		d, err := e.client.Describe(context.Background(), other)
		return err == nil && d.Status == "cancelled"
	}, 20*time.Second, 50*time.Millisecond)
	code, out = e.post(t, "/v1/runs/"+other+"/cancel", `{}`)
	require.Equal(t, http.StatusConflict, code, out)
	require.Equal(t, http.StatusNotFound, e.get(t, "/api/runs/no-such-run", nil))
}

func chromiumPath() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("the console's browser tests need chromium: apt-get install chromium (or set WEFT_NO_BROWSER=1 to skip them)")
}

// browser starts Debian's chromium headless (.ci/run installs it).
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := chromiumPath()
	if err != nil && os.Getenv("WEFT_NO_BROWSER") != "" {
		t.Skip("WEFT_NO_BROWSER is set and no chromium is installed")
	}
	require.NoError(t, err)
	// not t.TempDir(): chromium may still be writing its profile while the test's cleanup runs
	profile, err := os.MkdirTemp("", "weft-chromium-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(profile) })
	return newBrowser(t, path, profile)
}

func newBrowser(t testing.TB, path, profile string) context.Context {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(profile), chromedp.WindowSize(1400, 1000), chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() {
		_ = chromedp.Cancel(ctx) // closes the browser and waits for it
		cancelT()
		cancelC()
		cancelA()
	})
	require.NoError(t, chromedp.Run(ctx), "starting %s", path)
	return ctx
}

// artifacts is where screenshots go (not committed): $WEFT_ARTIFACTS or bin/artifacts.
func artifacts(t *testing.T) string {
	dir := os.Getenv("WEFT_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("..", "bin", "artifacts", "console")
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// inPage runs actions with a time limit; when they fail it says what the page showed (its text,
// and a screenshot NAME-failed.png in the artifacts).
func inPage(t *testing.T, ctx context.Context, name string, limit time.Duration, actions ...chromedp.Action) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	err := chromedp.Run(sctx, actions...)
	if err == nil {
		return
	}
	var text, url string
	_ = chromedp.Run(ctx, chromedp.Location(&url), chromedp.Evaluate(`document.body ? document.body.innerText.slice(0, 2000) : ''`, &text))
	screenshot(t, ctx, name+"-failed")
	t.Fatalf("%s: %v\npage %s showed:\n%s", name, err, url, text)
}

// liveText reads the text of the first node sel matches, in one step of the page's own script: a
// live page replaces the nodes of its detail as the run's updates arrive, so a node found by one
// DevTools call may be gone by the next ("No node with given id found", a CI run's failure). It
// waits until a node matches.
func liveText(sel string, out *string) chromedp.Action {
	js := fmt.Sprintf(`(() => { const n = document.querySelector(%q); return n ? n.textContent : null; })()`, sel)
	return chromedp.Poll(js, out, chromedp.WithPollingTimeout(30*time.Second))
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	var png []byte
	require.NoError(t, chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)))
	require.NoError(t, os.WriteFile(filepath.Join(artifacts(t), name+".png"), png, 0o644))
}

// TestConsoleInBrowser: a run that pauses for review, its Run page in a real browser with the
// review node highlighted, approved in the page, seen to complete; markup in the run's data never
// runs; the playground validates as one types. Screenshots of each page go to bin/artifacts.
func TestConsoleInBrowser(t *testing.T) {
	e := startConsole(t, "console-browser")
	ctx := browser(t)
	id := e.start(t)

	var pwned any
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(e.url+"/runs/"+id),
		chromedp.WaitVisible(`svg#graph g.node.has-review[data-step="approve"]`),
		chromedp.WaitVisible(`article.card[data-review="approve"] button.approve`),
	))
	screenshot(t, ctx, "run-awaiting-review")
	var title string
	inPage(t, ctx, "approve", 45*time.Second,
		chromedp.Text(`article.card[data-review="approve"] h3`, &title),
		// The answer to the decision arrives 1.5 s late, after state updates without the gate
		// (the run goes on at once): the card must stay and say who approved, not vanish.
		chromedp.Evaluate(`(() => { const f = window.fetch; window.fetch = (u, o) => f(u, o).then((r) =>
			o && o.method === 'POST' && String(u).includes('/reviews') ? new Promise((ok) => setTimeout(() => ok(r), 1500)) : r); })()`, nil),
		chromedp.Click(`article.card[data-review="approve"] button.approve`),
		chromedp.WaitVisible(`article.card.decided`),
		chromedp.Poll(`document.getElementById('run-status').textContent === 'completed'`, nil, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.WaitVisible(`svg#graph g.node.st-completed[data-step="publish"]`),
		chromedp.Evaluate(`window.__pwned === undefined ? null : window.__pwned`, &pwned),
	)
	require.Equal(t, "Publish <b>this</b>?", title, "markup is shown as text")
	require.Nil(t, pwned, "no workflow data ran as script")
	screenshot(t, ctx, "run-completed")
	res, err := e.client.Result(context.Background(), id)
	require.NoError(t, err)
	require.Contains(t, res.GetOutput().GetStringValue(), "<script>window.__pwned=2</script>")
	var facts, output string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Click(`svg#graph g.node[data-step="approve"]`),
		chromedp.WaitVisible(`#detail dl`),
		liveText(`#detail dl`, &facts),
		liveText(`#detail pre.json`, &output)))
	require.Contains(t, facts, "completed")
	require.Contains(t, facts, "review · review", "tool and category")
	require.NotContains(t, facts, "HTMLElement")
	require.Contains(t, output, `"reviewer": "console-test"`, "the step shows who decided")
	screenshot(t, ctx, "run-step-detail")

	// the reviews page decides too (reject with a comment)
	other := e.start(t)
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(e.url+"/reviews"),
		chromedp.WaitVisible(`article.card[data-run="`+other+`"] button.reject`),
		chromedp.WaitVisible(`#review-count`), // the nav counts the pending reviews
	))
	screenshot(t, ctx, "reviews")
	var status string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.SendKeys(`article.card[data-run="`+other+`"] input.comment`, "not this week"),
		chromedp.Click(`article.card[data-run="`+other+`"] button.reject`),
		chromedp.WaitVisible(`article.card.decided[data-run="`+other+`"]`),
		chromedp.Text(`article.card.decided[data-run="`+other+`"] .card-status`, &status),
	))
	require.Contains(t, status, "rejected by console-test")
	require.Contains(t, status, "not this week")

	// runs page, then the playground: the form starts a run, the editor validates as one types
	var rows int
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(e.url+"/"),
		chromedp.WaitVisible(`tr[data-run="`+id+`"]`),
		chromedp.Evaluate(`document.querySelectorAll('#runs-body tr[data-run]').length`, &rows)))
	require.GreaterOrEqual(t, rows, 2)
	screenshot(t, ctx, "runs")
	var diag string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(e.url+"/workflows/console-flow"),
		chromedp.WaitVisible(`svg#graph g.node.c-review`),
		chromedp.WaitVisible(`#run-form button[type=submit]`),
	))
	screenshot(t, ctx, "workflow")
	require.NoError(t, chromedp.Run(ctx,
		chromedp.SetValue(`#source`, `{"name":"x","steps":[{"id":"a","tool":"serch","inputs":{}}]}`),
		chromedp.Evaluate(`document.getElementById('source').dispatchEvent(new Event('input'))`, nil),
		chromedp.WaitVisible(`#diagnostics li.error`),
		chromedp.Text(`#diagnostics li.error`, &diag),
	))
	require.Contains(t, diag, "1:")
	require.Contains(t, diag, "search", "did-you-mean hint")
	screenshot(t, ctx, "workflow-editor")
	var url string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(e.url+"/workflows/console-flow"),
		chromedp.WaitVisible(`#run-form button[type=submit]`),
		chromedp.Click(`#run-form button[type=submit]`),
		chromedp.WaitVisible(`svg#graph g.node.has-review`),
		chromedp.Location(&url),
	))
	require.Contains(t, url, "/runs/weft-console-flow-")
	started := url[strings.LastIndex(url, "/")+1:]
	require.NoError(t, e.client.Cancel(context.Background(), started, "test"))
}

// TestConsoleStreamsModelText: while an agent's model call streams, the run's events carry the
// text so far under the step's id, and the step's tool calls.
func TestConsoleStreamsModelText(t *testing.T) {
	queue := "console-stream"
	answer := "Retries back off exponentially, start after one second, and stop after five attempts."
	fake := fakellm.New(
		fakellm.ToolCall("c1", "search", `{"query":"retries"}`),
		fakellm.Reply{Text: answer, ChunkDelay: 150 * time.Millisecond},
	)
	defer fake.Close()
	startWorkerWithConfig(t, queue, activities.Config{OpenAIBaseURL: fake.BaseURL, ChatModel: "local-model"}, map[string]activities.Handler{"search": fakeSearch})
	wc := weftclient.New(dial(t), queue)
	s, err := console.New(console.Options{Client: wc, PollInterval: 100 * time.Millisecond})
	require.NoError(t, err)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	w, err := dsl.Load("stream.json", []byte(`{"name":"stream","defaults":{"collection":"docs"},"steps":[
	  {"id":"helper","tool":"agent","inputs":{"prompt":"how do retries work?","tools":["search"]}}],"output":"{{ helper.output.text }}"}`))
	require.NoError(t, err)
	run, err := wc.Start(context.Background(), w, weftclient.StartOptions{Source: "stream"})
	require.NoError(t, err)

	resp, err := http.Get(srv.URL + "/api/runs/" + run.ID + "/events")
	require.NoError(t, err)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	streamed, calls, ended := "", false, false
	event := ""
	for sc.Scan() {
		if sc.Text() == "event: end" {
			ended = true
			break
		}
		if e, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			event = e
			continue
		}
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || event != "snapshot" {
			continue // a run event's data is not a snapshot (its usage is the run event's)
		}
		var snap console.Snapshot
		require.NoError(t, json.Unmarshal([]byte(data), &snap))
		if text := snap.Streaming["helper"]; text != "" {
			require.True(t, strings.HasPrefix(answer, text), "the text so far is a prefix of the answer: %q", text)
			streamed = text
		}
		calls = calls || strings.Contains(string(snap.State), `"toolCalls"`)
	}
	require.True(t, ended, "the stream ends with the run")
	require.NotEmpty(t, streamed, "the answer streamed into the page before the step completed")
	require.True(t, calls, "the agent's tool calls are in the state")
}
