package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/console"
)

// nameMismatches lists the controls of the page whose accessible name (aria-label) does not hold
// the words they show (axe's label-content-name-mismatch, WCAG 2.5.3): the text of each button or
// link that has an aria-label (an svg title of it included, as axe reads it), without its
// aria-hidden parts, compared as axe does — letters and digits only, case and spacing aside.
const nameMismatches = `(() => {
  const curate = (s) => s.toLowerCase().replace(/[^\p{L}\p{N}\s]/gu, '').replace(/\s+/g, ' ').trim();
  const shown = (e) => [...e.childNodes].map((c) => c.nodeType === 3 ? c.textContent
    : c.nodeType === 1 && c.getAttribute('aria-hidden') !== 'true' ? shown(c) : '').join(' ');
  const out = [];
  for (const e of document.querySelectorAll('[aria-label]')) {
    const role = e.getAttribute('role') || e.tagName.toLowerCase();
    if (!['button', 'a', 'link'].includes(role)) continue;
    const text = curate(shown(e)), name = curate(e.getAttribute('aria-label'));
    if (text && !name.includes(text)) out.push(JSON.stringify(text) + ' not in ' + JSON.stringify(name));
  }
  return out;
})()`

// TestNamesHoldWhatControlsShow: the run graph's steps (one with a name cut to fit) and the
// builder's palette buttons and steps have accessible names that hold the words they show.
func TestNamesHoldWhatControlsShow(t *testing.T) {
	def := `{"name":"named","steps":[{"id":"s","name":"summarise_each_section_of_the_report","tool":"template","forEach":"{{ [1, 2] }}","inputs":{"text":"{{ item }}"}},
	  {"id":"t","tool":"template","inputs":{"text":"{{ s.output.count }}"}}]}`
	page := fixtureRun(t, def, `{"workflow":"named","status":"completed","steps":[{"id":"s","tool":"template","status":"completed","itemsTotal":2,"itemsDone":2},{"id":"t","tool":"template","status":"completed"}]}`)
	ctx := chromium(t)
	var run1, build []string
	var tools int
	run(t, ctx, "run graph", chromedp.Navigate(page), chromedp.WaitVisible(`svg#graph g.node[data-step="s"]`),
		chromedp.Poll(`document.querySelector('svg#graph g.node[data-step="s"] .progress').textContent === '2/2'`, nil),
		chromedp.Evaluate(nameMismatches, &run1))
	require.Empty(t, run1, "the run page")
	base := strings.TrimSuffix(page, "/runs/weft-fixture")
	run(t, ctx, "builder", chromedp.Navigate(base+"/build"), chromedp.WaitVisible(`#b-tools .b-tool`),
		chromedp.Evaluate(`document.querySelectorAll('#b-tools .b-tool').length`, &tools),
		chromedp.Focus(`.b-tool[data-tool="template"]`), chromedp.KeyEvent("\r"), chromedp.WaitVisible(`.drawflow-node[data-step]`),
		chromedp.Evaluate(nameMismatches, &build))
	require.Positive(t, tools)
	require.Empty(t, build, "the builder")
}

// TestSkipLinks: the first Tab of every page reaches a link that skips the header to the page's
// content (on the builder, a second one goes to the tool filter), and following it puts the
// keyboard there: the next Tab is in the content.
func TestSkipLinks(t *testing.T) {
	srv := newConsole(t, console.Options{Client: lazyClient(t), Reviewer: "op"})
	ctx := chromium(t)
	var first, focused, next, second, filter string
	run(t, ctx, "workflows page", chromedp.Navigate(srv.URL+"/workflows"), chromedp.WaitReady(`main`),
		chromedp.KeyEvent(kb.Tab), chromedp.Evaluate(`document.activeElement.textContent`, &first),
		chromedp.KeyEvent(kb.Enter), chromedp.Poll(`document.activeElement.id === 'main'`, nil),
		chromedp.Evaluate(`document.activeElement.id`, &focused),
		chromedp.KeyEvent(kb.Tab), chromedp.Evaluate(`document.activeElement.closest('main') ? 'in main' : document.activeElement.outerHTML`, &next))
	require.Equal(t, "Skip to the content", first)
	require.Equal(t, "main", focused)
	require.Equal(t, "in main", next, "the next Tab is in the content, not the header")
	run(t, ctx, "builder", chromedp.Navigate(srv.URL+"/build"), chromedp.WaitVisible(`#b-filter`),
		chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Tab), chromedp.Evaluate(`document.activeElement.textContent`, &second),
		chromedp.KeyEvent(kb.Enter), chromedp.Poll(`document.activeElement.id === 'b-filter'`, nil),
		chromedp.Evaluate(`document.activeElement.id`, &filter))
	require.Equal(t, "Skip to the tool filter", second)
	require.Equal(t, "b-filter", filter, "two Tabs and Enter to the tool filter")
}

// TestNotFoundPage: a path the console has no page for answers 404 with the console's own page:
// what was asked, where to go, and a search of the runs for its last part; under /api/ a JSON
// error.
func TestNotFoundPage(t *testing.T) {
	srv := newConsole(t, console.Options{Client: lazyClient(t), Reviewer: "op"})
	code, page := getPage(t, srv, "/run/weft-abc123")
	require.Equal(t, http.StatusNotFound, code)
	for _, want := range []string{"Nothing here", "<code>/run/weft-abc123</code>", `href="/?q=weft-abc123"`, `href="/reviews"`, `href="/workflows"`, "Skip to the content"} {
		require.Contains(t, page, want)
	}
	code, out := getPage(t, srv, "/api/nothing")
	require.Equal(t, http.StatusNotFound, code)
	require.Contains(t, out, `"error":"no such endpoint: GET /api/nothing"`)
}
