package console_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/console"
	"github.com/weftworks/weft/templates"
	"github.com/weftworks/weft/workflows/dsl"
)

// The builder's browser tests drive Debian's chromium (as integration/console_test.go does) against
// a console with no Temporal behind it: the builder needs none.

// chromium is a tab of the package's one chromium (started by the first test that asks, stopped
// by TestMain) in a browser context of its own, which is as a fresh profile: no cookies, storage
// or cache of another test's. Starting a chromium a test took 2 to 3 s each, 33 times.
func chromium(t testing.TB) context.Context {
	t.Helper()
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("WEFT_NO_BROWSER") != "" {
			t.Skip("WEFT_NO_BROWSER is set and no chromium is installed")
		}
		t.Fatal("the console's browser tests need chromium: apt-get install chromium (or set WEFT_NO_BROWSER=1 to skip them)")
	}
	browser.once.Do(func() { browser.ctx, browser.err = startBrowser(path) })
	require.NoError(t, browser.err, "starting %s", path)
	// The browser context and its window are made here, not with chromedp.WithNewBrowserContext:
	// chromedp opens its tab with no window of its own, which chromium refuses in a new browser
	// context ("Failed to open new tab - no browser is open").
	bx := cdp.WithExecutor(browser.ctx, chromedp.FromContext(browser.ctx).Browser)
	bcid, err := target.CreateBrowserContext().WithDisposeOnDetach(true).Do(bx)
	require.NoError(t, err, "a browser context in %s", path)
	tid, err := target.CreateTarget("about:blank").WithBrowserContextID(bcid).WithNewWindow(true).Do(bx)
	require.NoError(t, err, "a window in %s", path)
	ctx, cancelC := chromedp.NewContext(browser.ctx, chromedp.WithTargetID(tid))
	ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() {
		_ = chromedp.Cancel(ctx) // closes the tab
		cancelT()
		cancelC()
		_ = target.DisposeBrowserContext(bcid).Do(bx)
	})
	require.NoError(t, chromedp.Run(ctx), "opening a tab in %s", path)
	return ctx
}

// browser is the package's chromium: ctx is its first tab, from which each test's tab is made.
var browser struct {
	once sync.Once
	ctx  context.Context
	err  error
	stop func()
}

func startBrowser(path string) (context.Context, error) {
	profile, err := os.MkdirTemp("", "weft-chromium-")
	if err != nil {
		return nil, err
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(profile), chromedp.WindowSize(1440, 1000), chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	browser.stop = func() {
		_ = chromedp.Cancel(ctx)
		cancelC()
		cancelA()
		_ = os.RemoveAll(profile)
	}
	return ctx, chromedp.Run(ctx)
}

// TestMain stops the package's chromium when the tests are done.
func TestMain(m *testing.M) {
	code := m.Run()
	if browser.stop != nil {
		browser.stop()
	}
	os.Exit(code)
}

// run runs actions; when they fail it says what the page showed and keeps a screenshot in
// bin/artifacts/console.
func run(t *testing.T, ctx context.Context, name string, actions ...chromedp.Action) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := chromedp.Run(sctx, actions...)
	if err == nil {
		return
	}
	var text, url string
	_ = chromedp.Run(ctx, chromedp.Location(&url), chromedp.Evaluate(`document.body ? document.body.innerText.slice(0, 2000) : ''`, &text))
	shot(t, ctx, name+"-failed")
	t.Fatalf("%s: %v\npage %s showed:\n%s", name, err, url, text)
}

func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("WEFT_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("..", "bin", "artifacts", "console")
	}
	if os.MkdirAll(dir, 0o755) != nil {
		return
	}
	var png []byte
	if chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)) == nil {
		_ = os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
	}
}

// center is the middle of the element sel on the screen, scrolled into view first (as a person
// scrolls the palette to the tool they want), once it has stopped moving: the builder fits its
// view a frame after an import, and a point taken before that lands beside the element (a drag
// from it drew no edge under load). It waits for two frames in a row that place the element
// alike, re-finding it each frame (the page may replace it).
func center(t *testing.T, ctx context.Context, sel string) (float64, float64) {
	t.Helper()
	var p []float64
	run(t, ctx, "locate "+sel, chromedp.Evaluate(fmt.Sprintf(`new Promise((resolve, reject) => {
	  const at = () => { const e = document.querySelector(%q); if (!e) return null; e.scrollIntoView({block: 'nearest'});
	    const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; };
	  let last = at(), frames = 0;
	  const next = () => requestAnimationFrame(() => {
	    const now = at();
	    if (now && last && now[0] === last[0] && now[1] === last[1]) return resolve(now);
	    if (++frames > 600) return reject(new Error('%s did not stop moving in 600 frames'));
	    last = now; next();
	  });
	  next();
	})`, sel, strings.ReplaceAll(sel, "'", "")), &p, awaitPromise))
	return p[0], p[1]
}

// dragMouse presses at (x1, y1), moves to (x2, y2) in steps, and releases: real mouse input,
// as a person drags.
func dragMouse(x1, y1, x2, y2 float64) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		if err := input.DispatchMouseEvent(input.MouseMoved, x1, y1).Do(ctx); err != nil {
			return err
		}
		if err := input.DispatchMouseEvent(input.MousePressed, x1, y1).WithButton(input.Left).WithButtons(1).WithClickCount(1).Do(ctx); err != nil {
			return err
		}
		for i := 1; i <= 10; i++ {
			x, y := x1+(x2-x1)*float64(i)/10, y1+(y2-y1)*float64(i)/10
			if err := input.DispatchMouseEvent(input.MouseMoved, x, y).WithButton(input.Left).WithButtons(1).Do(ctx); err != nil {
				return err
			}
		}
		return input.DispatchMouseEvent(input.MouseReleased, x2, y2).WithButton(input.Left).WithClickCount(1).Do(ctx)
	})
}

func exported(t *testing.T, ctx context.Context) map[string]any {
	t.Helper()
	var text string
	run(t, ctx, "export", chromedp.Evaluate(`window.__weftBuilder.exportText()`, &text))
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(text), &out), text)
	return out
}

// TestToolsAreTheRegistry: the tools the builder page is given are the registry's, every one.
func TestToolsAreTheRegistry(t *testing.T) {
	got := struct{ Tools []console.ToolInfo }{console.Tools()}
	all := toolspec.All()
	require.Len(t, got.Tools, len(all), "every registry tool, nothing else")
	for i, s := range all {
		require.Equal(t, s.Name, got.Tools[i].Name)
		require.Equal(t, s.Category(), got.Tools[i].Category)
		require.NotEmpty(t, got.Tools[i].Input, "%s has an input schema", s.Name)
	}
}

// TestVendoredDrawflowMatchesItsChecksums: the graph-editing library is the pinned release.
func TestVendoredDrawflowMatchesItsChecksums(t *testing.T) {
	require.Equal(t, 3, vendoredMatchesItsSums(t, filepath.Join("static", "vendor", "drawflow")), "the script, its style and the licence")
}

// vendoredMatchesItsSums checks every file a vendored folder's SHA256SUMS lists against its sum
// and returns how many it listed.
func vendoredMatchesItsSums(t *testing.T, dir string) int {
	t.Helper()
	sums, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	require.NoError(t, err)
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		want, name, ok := strings.Cut(line, "  ")
		require.True(t, ok, line)
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		sum := sha256.Sum256(b)
		require.Equal(t, want, hex.EncodeToString(sum[:]), name)
		n++
	}
	return n
}

// roundTripFiles are every built-in template and every workflow file of testdata/examples.
func roundTripFiles(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, tpl := range templates.All() {
		files["template "+tpl.Name] = string(tpl.Data)
	}
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "examples", "*.json"))
	require.NoError(t, err)
	for _, p := range paths {
		if strings.HasSuffix(p, ".test.json") {
			continue
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		files[filepath.Base(p)] = string(b)
	}
	require.Greater(t, len(files), 10)
	return files
}

// TestBuilderRoundTrip: every valid file imported into the builder and exported unchanged is the
// same JSON (key order aside).
func TestBuilderRoundTrip(t *testing.T) {
	srv := newConsole(t, console.Options{Client: lazyClient(t)})
	ctx := chromium(t)
	run(t, ctx, "open the builder", chromedp.Navigate(srv.URL+"/build"), chromedp.Poll(`window.__weftBuilderReady === true`, nil))
	for name, text := range roundTripFiles(t) {
		t.Run(name, func(t *testing.T) {
			_, err := dsl.Load(name, []byte(text))
			require.NoError(t, err, "the file is valid")
			var ok bool
			run(t, ctx, "import "+name, chromedp.Evaluate(fmt.Sprintf(`window.__weftBuilder.importText(%s, %q)`, mustJS(text), name), &ok))
			require.True(t, ok)
			var want any
			require.NoError(t, json.Unmarshal([]byte(text), &want))
			require.Equal(t, want, any(exported(t, ctx)))
		})
	}
}

func mustJS(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestBuilderInBrowser: a tool dragged from the palette onto the canvas becomes a step; its form
// comes from the tool's input schema; a required input left empty puts a badge on the node, which
// goes when it is filled; an edge drawn between two handles writes the template reference; the
// export compiles; undo takes the edge back.
func TestBuilderInBrowser(t *testing.T) {
	srv := newConsole(t, console.Options{Client: lazyClient(t)})
	ctx := chromium(t)
	var tools int
	run(t, ctx, "open the builder", chromedp.Navigate(srv.URL+"/build"), chromedp.Poll(`window.__weftBuilderReady === true`, nil),
		chromedp.Evaluate(`document.querySelectorAll('#b-tools .b-tool').length`, &tools))
	require.Equal(t, len(toolspec.All()), tools, "the palette lists every registry tool")

	// drag "template" onto the canvas
	px, py := center(t, ctx, `.b-tool[data-tool="template"]`)
	cx, cy := center(t, ctx, `#b-canvas`)
	run(t, ctx, "drag a tool onto the canvas", dragMouse(px, py, cx-150, cy-100),
		chromedp.WaitVisible(`.drawflow-node[data-step="template"]`),
		chromedp.WaitVisible(`#f-inputs-text`))
	// its required input is empty: the validation badge appears on the node
	var badge, label string
	var fieldProblem string
	run(t, ctx, "badge", chromedp.WaitVisible(`.drawflow-node[data-step="template"] .b-badge.error`),
		chromedp.WaitVisible(`.field.b-problem[data-field="inputs.text"]`),
		chromedp.Text(`.field.b-problem[data-field="inputs.text"] .b-field-error`, &fieldProblem),
		chromedp.Text(`.drawflow-node[data-step="template"] .b-badge`, &badge),
		chromedp.AttributeValue(`.drawflow-node[data-step="template"]`, "aria-label", &label, nil))
	require.Contains(t, badge, "1")
	require.Contains(t, label, "1 problem", "the problem is in the node's accessible name, not only its colour")
	require.Contains(t, fieldProblem, `"text"`, "and on the form's field")
	shot(t, ctx, "builder-badge")
	// fill the generated form: the badge clears
	run(t, ctx, "fill the form", chromedp.SendKeys(`#f-inputs-text`, "Hello <b>world</b>"),
		chromedp.WaitNotPresent(`.drawflow-node[data-step="template"] .b-badge.error`),
		chromedp.WaitVisible(`#b-valid.ok`))

	// a second step by keyboard (focus the palette entry, Enter), then an edge drawn by dragging
	// from the first step's output handle to the second's input handle
	run(t, ctx, "add by keyboard", chromedp.Focus(`.b-tool[data-tool="template"]`), chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(`.drawflow-node[data-step="template_2"]`))
	ox, oy := center(t, ctx, `.drawflow-node[data-step="template"] .output`)
	ix, iy := center(t, ctx, `.drawflow-node[data-step="template_2"] .input`)
	run(t, ctx, "draw an edge", dragMouse(ox, oy, ix, iy),
		chromedp.WaitReady(`.connection`),
		chromedp.Poll(`document.getElementById('b-valid').classList.contains('ok')`, nil))
	doc := exported(t, ctx)
	steps := doc["steps"].([]any)
	require.Len(t, steps, 2)
	second := steps[1].(map[string]any)
	require.Equal(t, "template_2", second["id"])
	require.Equal(t, "{{ template.output.text }}", second["inputs"].(map[string]any)["text"], "the edge wrote the reference")
	shot(t, ctx, "builder-edge")

	// the export is a workflow file that compiles
	b, _ := json.Marshal(doc)
	w, err := dsl.Load("exported.json", b)
	require.NoError(t, err)
	require.Equal(t, []string{"template"}, w.Steps[1].Deps)

	// undo takes the edge back; redo puts it again
	run(t, ctx, "undo", chromedp.Click(`#b-undo`), chromedp.WaitNotPresent(`.connection`))
	_, has := exported(t, ctx)["steps"].([]any)[1].(map[string]any)["inputs"].(map[string]any)["text"]
	require.False(t, has)
	run(t, ctx, "redo", chromedp.Click(`#b-redo`), chromedp.WaitVisible(`.connection`))

	// no markup typed into a form ran or was parsed as HTML
	var bold int
	run(t, ctx, "no markup", chromedp.Evaluate(`document.querySelectorAll('#builder b').length`, &bold))
	require.Zero(t, bold)
}

// TestBuilderEditsACatalogWorkflow: "Edit in the builder" on a workflow page opens it with a node
// per step, and a hundred-step file fits the canvas.
func TestBuilderEditsACatalogWorkflow(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hundred.json"), []byte(hundredStepFile()), 0o644))
	evil := `{"name":"evil","description":"<script>window.__pwned=1</script>","steps":[{"id":"t","name":"<img src=x onerror=window.__pwned=2>","tool":"template","inputs":{"text":"<b>x</b>"}}]}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "evil.json"), []byte(evil), 0o644))
	srv := newConsole(t, console.Options{WorkflowsDir: dir, Client: lazyClient(t)})

	resp, err := srv.Client().Get(srv.URL + "/workflows/approval-demo")
	require.NoError(t, err)
	require.Contains(t, body(t, resp), `href="/build?from=approval-demo"`, "the workflow page links to the builder")
	resp, err = srv.Client().Get(srv.URL + "/build?from=nothing-here")
	require.NoError(t, err)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp.Body.Close()
	resp, err = srv.Client().Get(srv.URL + "/build?from=evil")
	require.NoError(t, err)
	page := body(t, resp)
	require.NotContains(t, page, "<script>window.__pwned")
	require.NotContains(t, page, "<img src=x")

	ctx := chromium(t)
	tpl, err := templates.Get("approval-demo")
	require.NoError(t, err)
	w, err := dsl.Load(tpl.Name, tpl.Data)
	require.NoError(t, err)
	var nodes int
	run(t, ctx, "edit approval-demo", chromedp.Navigate(srv.URL+"/workflows/approval-demo"), chromedp.Click(`#edit-in-builder`), chromedp.WaitVisible(`#b-canvas`),
		chromedp.Poll(`window.__weftBuilderReady === true`, nil), chromedp.WaitVisible(`#b-valid.ok`),
		chromedp.Evaluate(`document.querySelectorAll('.drawflow-node').length`, &nodes))
	require.Equal(t, len(w.Steps), nodes)
	shot(t, ctx, "builder-approval-demo")

	var pwned any
	run(t, ctx, "evil", chromedp.Navigate(srv.URL+"/build?from=evil"), chromedp.Poll(`window.__weftBuilderReady === true`, nil),
		chromedp.WaitVisible(`.drawflow-node[data-step="t"]`), chromedp.Evaluate(`window.__pwned === undefined ? null : window.__pwned`, &pwned))
	require.Nil(t, pwned, "no workflow text ran as script")

	var outside int
	var readyAt float64
	run(t, ctx, "a hundred steps fit", chromedp.Navigate(srv.URL+"/build?from=hundred"), chromedp.Poll(`window.__weftBuilderReady === true`, nil),
		chromedp.Evaluate(`window.__weftBuilderReadyAt`, &readyAt),
		chromedp.WaitVisible(`#b-valid.ok`),
		chromedp.Click(`#b-fit`),
		chromedp.Evaluate(`(() => { const c = document.getElementById('b-canvas').getBoundingClientRect(); let out = 0;
		  document.querySelectorAll('.drawflow-node').forEach((n) => { const r = n.getBoundingClientRect();
		    if (r.left < c.left - 1 || r.right > c.right + 1 || r.top < c.top - 1 || r.bottom > c.bottom + 1) out++; }); return out; })()`, &outside))
	require.Zero(t, outside, "after Fit every node of a 100-step workflow is on the canvas")
	t.Logf("the builder with 100 steps was interactive %.0f ms after navigation started", readyAt)
	require.Less(t, readyAt, 3000.0, "interactive in well under 3 s (the goal is 500 ms; this machine is shared)")
	shot(t, ctx, "builder-hundred-fit")
}

// TestStartEditedTextIsClientOrigin: text edited in the page is started as the person's own
// definition (client origin), so what an operator's file may declare is refused in it; a valid
// text goes on to Temporal (unreachable here: 503), text that does not compile is refused, and a
// login without the runner role may not start it.
func TestStartEditedTextIsClientOrigin(t *testing.T) {
	srv := newConsole(t, console.Options{Client: lazyClient(t)})
	c := srv.Client()
	token := csrfOf(t, c, srv.URL)
	// as the page sends it: POST /v1/runs with the definition
	payload := func(source string) string {
		if source == "" {
			return `{"inputs":{}}`
		}
		return `{"definition":` + source + `,"inputs":{}}`
	}
	for _, tc := range []struct {
		name, source string
		code         int
		want         string
	}{
		{"valid", `{"name":"edited","steps":[{"id":"t","tool":"template","inputs":{"text":"hi"}}]}`, http.StatusServiceUnavailable, ""},
		{"declares a process", `{"name":"edited","mcpServers":{"sh":{"command":"sh","args":["-c","id"]}},"steps":[{"id":"t","tool":"template","inputs":{"text":"hi"}}]}`,
			http.StatusBadRequest, "a definition sent by a client may name only the MCP servers the operator declared"},
		{"does not compile", `{"name":"edited","steps":[{"id":"t","tool":"serch","inputs":{}}]}`, http.StatusBadRequest, "does not load"},
		{"empty", ``, http.StatusBadRequest, "send workflow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := post(t, c, srv.URL+"/v1/runs", token, srv.URL, payload(tc.source))
			require.Equal(t, tc.code, code, out)
			require.Contains(t, out, tc.want)
		})
	}
	t.Run("needs the token and the console's origin", func(t *testing.T) {
		code, _ := post(t, c, srv.URL+"/v1/runs", "", srv.URL, payload(`{}`))
		require.Equal(t, http.StatusForbidden, code)
		code, _ = post(t, c, srv.URL+"/v1/runs", token, "http://evil.example", payload(`{}`))
		require.Equal(t, http.StatusForbidden, code)
	})
	t.Run("needs the runner role", func(t *testing.T) {
		srv, keys := consoleWithKeys(t)
		c, token := loginAs(t, srv, keys["ana"])
		code, out := post(t, c, srv.URL+"/v1/runs", token, srv.URL, payload(`{"name":"e","steps":[{"id":"t","tool":"template","inputs":{"text":"hi"}}]}`))
		require.Equal(t, http.StatusForbidden, code, out)
		require.Contains(t, out, `needs the role \"runner\"`)
	})
}

// TestPlaygroundStartsTheEditedText: once the playground's text is edited (and valid), Start
// sends that text, not the name of the file on disk.
func TestPlaygroundStartsTheEditedText(t *testing.T) {
	srv := newConsole(t, console.Options{Client: lazyClient(t)})
	ctx := chromium(t)
	edited := `{"name":"approval-demo","inputs":{"version":{"type":"string","default":"9"}},"steps":[{"id":"only","tool":"template","inputs":{"text":"edited {{ inputs.version }}"}}]}`
	var sent map[string]any
	var button string
	run(t, ctx, "edit and start", chromedp.Navigate(srv.URL+"/workflows/approval-demo"), chromedp.WaitVisible(`#run-form button[type=submit]`),
		chromedp.Evaluate(`(() => { window.__sent = []; const f = window.fetch; window.fetch = (u, o) => { if (o && o.method === 'POST') window.__sent.push({ url: String(u), body: JSON.parse(o.body) }); return f(u, o); }; })()`, nil),
		chromedp.SetValue(`#source`, edited),
		chromedp.Evaluate(`document.getElementById('source').dispatchEvent(new Event('input'))`, nil),
		chromedp.WaitVisible(`#diagnostics li.ok`),
		chromedp.Text(`#run-form button[type=submit]`, &button),
		chromedp.Click(`#run-form button[type=submit]`),
		chromedp.Poll(`window.__sent.some((s) => s.url.includes('/runs'))`, nil),
		chromedp.Evaluate(`window.__sent.find((s) => s.url.includes('/runs'))`, &sent))
	require.Equal(t, "Start run (edited text)", button)
	require.Equal(t, "/v1/runs", sent["url"], "the edited text is started, not the catalog file")
	var want map[string]any
	require.NoError(t, json.Unmarshal([]byte(edited), &want))
	require.Equal(t, want, sent["body"].(map[string]any)["definition"])
	require.NotContains(t, sent["body"], "workflow")

	var msg string
	run(t, ctx, "broken text is not started", chromedp.SetValue(`#source`, `{"name":"x","steps":[{"id":"a","tool":"serch","inputs":{}}]}`),
		chromedp.Evaluate(`window.__sent = []; document.getElementById('source').dispatchEvent(new Event('input'))`, nil),
		chromedp.WaitVisible(`#diagnostics li.error`),
		chromedp.Click(`#run-form button[type=submit]`),
		chromedp.Poll(`document.querySelector('#run-form .card-status').textContent.includes('does not compile')`, nil),
		chromedp.Text(`#run-form .card-status`, &msg))
	require.Contains(t, msg, "does not compile")
}

// TestGraphZoomAndFit: the workflow graph zooms, and Fit shows every step of a 30-step chain
// (before, 6 of them were visible): a chain is laid out in bands side by side.
func TestGraphZoomAndFit(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "chain.json"), []byte(chainFile()), 0o644))
	srv := newConsole(t, console.Options{WorkflowsDir: dir, Client: lazyClient(t)})
	ctx := chromium(t)
	visible := `(() => { const w = document.querySelector('.graph-wrap').getBoundingClientRect(); let n = 0;
	  document.querySelectorAll('svg#graph g.node').forEach((g) => { const r = g.getBoundingClientRect();
	    if (r.top >= w.top - 1 && r.bottom <= w.bottom + 1 && r.left >= w.left - 1 && r.right <= w.right + 1) n++; }); return n; })()`
	var before, after, zoomedW, fitW float64
	var level string
	run(t, ctx, "fit", chromedp.Navigate(srv.URL+"/workflows/chain"), chromedp.WaitVisible(`svg#graph g.node[data-step="s29"]`),
		chromedp.Evaluate(visible, &before),
		chromedp.Evaluate(`document.getElementById('graph').getBoundingClientRect().width`, &fitW),
		chromedp.Click(`.zoom-in`), chromedp.Click(`.zoom-in`), chromedp.Click(`.zoom-in`),
		chromedp.Evaluate(`document.getElementById('graph').getBoundingClientRect().width`, &zoomedW),
		chromedp.Text(`.zoom-level`, &level),
		chromedp.Click(`.zoom-fit`),
		chromedp.Evaluate(visible, &after))
	require.Equal(t, float64(30), before, "the chain is laid out in bands that fit: every step is in view")
	require.Greater(t, zoomedW, fitW, "zoom in makes the graph larger")
	require.Contains(t, level, "%")
	require.Equal(t, float64(30), after, "after Fit every step is in view again")
	shot(t, ctx, "workflow-chain-fit")
}

// TestBuilderLinksJoinTheHandles: the builder draws a file's links itself, reading the layout once
// (Drawflow reads it once per link as it adds it), along its own route: every link starts and ends
// where the path Drawflow draws for it does (the two steps' handles), on a 100-step file and after
// a step is dragged elsewhere (Drawflow draws its links as it moves; they are routed again when it
// is dropped).
func TestBuilderLinksJoinTheHandles(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hundred.json"), []byte(hundredStepFile()), 0o644))
	srv := newConsole(t, console.Options{WorkflowsDir: dir, Client: lazyClient(t)})
	ctx := chromium(t)
	paths := `[...document.querySelectorAll('#b-canvas .connection path.main-path')].map((p) => p.getAttribute('d'))`
	var ours, drawflows []string
	run(t, ctx, "open", chromedp.Navigate(srv.URL+"/build?from=hundred"), chromedp.Poll(`window.__weftBuilderReady === true`, nil),
		chromedp.Evaluate(paths, &ours),
		chromedp.Evaluate(`window.__weftBuilder.drawflowLinks()`, nil),
		chromedp.Evaluate(paths, &drawflows))
	require.Len(t, ours, 90, "10 chains of 10 steps have 90 links")
	number := regexp.MustCompile(`-?[0-9.]+(e-?[0-9]+)?`)
	// ends are a path's first and last points
	ends := func(d string) []float64 {
		n := number.FindAllString(d, -1)
		if len(n) < 4 {
			return nil
		}
		var out []float64
		for _, s := range []string{n[0], n[1], n[len(n)-2], n[len(n)-1]} {
			v, _ := strconv.ParseFloat(s, 64)
			out = append(out, v)
		}
		return out
	}
	same := func(a, b string) bool {
		ea, eb := ends(a), ends(b)
		if ea == nil || eb == nil {
			return false
		}
		for i := range ea {
			if math.Abs(ea[i]-eb[i]) > 0.01 {
				return false
			}
		}
		return true
	}
	for i := range ours {
		require.True(t, same(ours[i], drawflows[i]), "link %d: the builder drew %q, Drawflow draws %q", i, ours[i], drawflows[i])
	}

	// drag a step: its links follow it
	var before, after []string
	x, y := center(t, ctx, `.drawflow-node[data-step="s1"] .b-node-title`)
	run(t, ctx, "move s1", chromedp.Evaluate(paths, &before), dragMouse(x, y, x+80, y+60), chromedp.Evaluate(paths, &after))
	require.NotEqual(t, before, after, "the links of a moved step follow it")
	run(t, ctx, "Drawflow's drawing after the move", chromedp.Evaluate(`window.__weftBuilder.drawflowLinks()`, nil), chromedp.Evaluate(paths, &drawflows))
	for i := range after {
		require.True(t, same(after[i], drawflows[i]), "link %d after the move: the builder drew %q, Drawflow draws %q", i, after[i], drawflows[i])
	}
}

// TestBuilderLayoutFitsTheCanvas: a file's steps are laid out to the canvas's shape, so that Fit
// shows every step at a size that can still be read: a 30-step chain (in bands, not one row of 30),
// one step feeding 99 (in several columns, not one column of 99) and 10 chains of 10. No two steps
// overlap.
func TestBuilderLayoutFitsTheCanvas(t *testing.T) {
	srv := newConsole(t, console.Options{Client: lazyClient(t)})
	ctx := chromium(t)
	run(t, ctx, "open", chromedp.Navigate(srv.URL+"/build"), chromedp.Poll(`window.__weftBuilderReady === true`, nil))
	for _, tc := range []struct{ name, file string }{{"30-step chain", chainFile()}, {"one step feeding 99", fanFile()}, {"10 chains of 10", hundredStepFile()}} {
		t.Run(tc.name, func(t *testing.T) {
			var m struct {
				Zoom             float64
				Outside, Overlap int
			}
			run(t, ctx, tc.name, chromedp.Evaluate(fmt.Sprintf(`window.__weftBuilder.importText(%q, 'f.json')`, tc.file), nil),
				chromedp.Evaluate(`new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => {
				  const c = document.getElementById('b-canvas').getBoundingClientRect();
				  const boxes = [...document.querySelectorAll('.drawflow-node')].map((n) => n.getBoundingClientRect());
				  let outside = 0, overlap = 0;
				  boxes.forEach((r, i) => {
				    if (r.left < c.left - 1 || r.right > c.right + 1 || r.top < c.top - 1 || r.bottom > c.bottom + 1) outside++;
				    for (const q of boxes.slice(i + 1)) if (r.left < q.right && q.left < r.right && r.top < q.bottom && q.top < r.bottom) overlap++;
				  });
				  r({ Zoom: window.__weftBuilder.view().zoom, Outside: outside, Overlap: overlap });
				})))`, &m, awaitPromise))
			t.Logf("%s: Fit shows every step at %.0f%%", tc.name, m.Zoom*100)
			shot(t, ctx, "builder-fit-"+artifactName(tc.name))
			require.Zero(t, m.Outside, "every step is on the canvas after Fit")
			require.Zero(t, m.Overlap, "no two steps overlap")
			require.GreaterOrEqual(t, m.Zoom, 0.25, "at a zoom where a step's name can still be made out")
		})
	}
}

func awaitPromise(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }

// artifactName is name as a screenshot's file name.
func artifactName(name string) string {
	return strings.Trim(regexp.MustCompile(`[^a-z0-9.]+`).ReplaceAllString(strings.ToLower(name), "-"), "-")
}

// hundredStepFile is 10 chains of 10 template steps.
func hundredStepFile() string {
	var b strings.Builder
	b.WriteString(`{"name":"hundred","steps":[`)
	for i := range 100 {
		if i > 0 {
			b.WriteString(",")
		}
		if i%10 == 0 {
			fmt.Fprintf(&b, `{"id":"s%d","tool":"template","inputs":{"text":"start %d"}}`, i, i)
		} else {
			fmt.Fprintf(&b, `{"id":"s%d","tool":"template","inputs":{"text":"{{ s%d.output.text }} and %d"}}`, i, i-1, i)
		}
	}
	b.WriteString(`]}`)
	return b.String()
}

// chainFile is a chain of 30 template steps.
func chainFile() string {
	chain := `{"name":"chain","steps":[{"id":"s0","tool":"template","inputs":{"text":"start"}}`
	for i := 1; i < 30; i++ {
		chain += fmt.Sprintf(`,{"id":"s%d","tool":"template","inputs":{"text":"{{ s%d.output.text }}"}}`, i, i-1)
	}
	return chain + `]}`
}

// fanFile is one template step feeding 99.
func fanFile() string {
	fan := `{"name":"fan","steps":[{"id":"root","tool":"template","inputs":{"text":"start"}}`
	for i := range 99 {
		fan += fmt.Sprintf(`,{"id":"s%d","tool":"template","inputs":{"text":"{{ root.output.text }} %d"}}`, i, i)
	}
	return fan + `]}`
}

// linkFiles is what the link tests draw: the 30-step chain, one step feeding 99, 10 chains of 10,
// then every file TestBuilderRoundTrip opens, by name.
func linkFiles(t *testing.T) []struct{ name, file string } {
	t.Helper()
	files := []struct{ name, file string }{{"30-step chain", chainFile()}, {"one step feeding 99", fanFile()}, {"10 chains of 10", hundredStepFile()}}
	rt := roundTripFiles(t)
	names := make([]string, 0, len(rt))
	for name := range rt {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		files = append(files, struct{ name, file string }{name, rt[name]})
	}
	return files
}

// TestBuilderLinksClearOfSteps: after a file is opened and fitted, no link runs behind a step other
// than the two it joins: every link's path, sampled every 4 px of its length, stays out of every
// other step's box. Over the 30-step chain, one step feeding 99, 10 chains of 10, and every file
// TestBuilderRoundTrip opens (the built-in templates and testdata/examples).
func TestBuilderLinksClearOfSteps(t *testing.T) {
	files := linkFiles(t)
	srv := newConsole(t, console.Options{Client: lazyClient(t)})
	ctx := chromium(t)
	run(t, ctx, "open", chromedp.Navigate(srv.URL+"/build"), chromedp.Poll(`window.__weftBuilderReady === true`, nil))
	total := 0
	for _, tc := range files {
		t.Run(tc.name, func(t *testing.T) {
			var m struct {
				Links, Points int
				Crossings     []string
			}
			run(t, ctx, tc.name, chromedp.Evaluate(fmt.Sprintf(`window.__weftBuilder.importText(%s, 'f.json')`, mustJS(tc.file)), nil),
				chromedp.Evaluate(`new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => {
				  window.__weftBuilder.fit();
				  const boxes = [...document.querySelectorAll('#b-canvas .drawflow-node')].map((n) => [n.id, n.dataset.step, n.getBoundingClientRect()]);
				  const step = new Map(boxes.map(([id, s]) => [id, s]));
				  let links = 0, points = 0;
				  const crossings = [];
				  for (const c of document.querySelectorAll('#b-canvas .connection')) {
				    const into = c.classList[1].replace('node_in_', ''), outof = c.classList[2].replace('node_out_', '');
				    const p = c.querySelector('path.main-path'), m = p.getScreenCTM(), len = p.getTotalLength();
				    links++;
				    const hit = new Set();
				    // the ends are the handles, just outside the two steps' boxes: 10 px of either end are theirs
				    for (let l = 10; l <= len - 10; l += 4) {
				      const a = p.getPointAtLength(l), q = new DOMPoint(a.x, a.y).matrixTransform(m);
				      points++;
				      for (const [id, s, b] of boxes) {
				        if (id === into || id === outof || hit.has(s)) continue;
				        if (q.x > b.left + 1 && q.x < b.right - 1 && q.y > b.top + 1 && q.y < b.bottom - 1) hit.add(s);
				      }
				    }
				    for (const s of hit) crossings.push(step.get(outof) + ' -> ' + step.get(into) + ' runs behind ' + s);
				  }
				  r({ Links: links, Points: points, Crossings: crossings });
				})))`, &m, awaitPromise))
			shot(t, ctx, "builder-links-"+artifactName(tc.name))
			total += len(m.Crossings)
			t.Logf("%s: %d links, %d points sampled, %d run behind a step", tc.name, m.Links, m.Points, len(m.Crossings))
			require.Empty(t, m.Crossings, "no link runs behind a step it does not join")
		})
	}
	t.Logf("%d files: %d links run behind a step", len(files), total)
}
