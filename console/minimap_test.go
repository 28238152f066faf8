package console_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/console"
)

// TestGraphMinimap: a graph larger than its box gets a minimap with every step and the part in
// view outlined; a click on the minimap moves the view there; a graph that fits has none.
func TestGraphMinimap(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fan.json"), []byte(fanFile()), 0o644))
	srv := newConsole(t, console.Options{WorkflowsDir: dir, Client: lazyClient(t)})
	ctx := chromium(t)
	var boxes int
	var hidden bool
	var at []float64
	type view struct{ Left, ViewX float64 }
	var before, after view
	scroll := `(() => { const w = document.querySelector('.graph-wrap'); const v = document.querySelector('svg.minimap .mm-view');
	  return { Left: w.scrollLeft, ViewX: Number(v.getAttribute('x')) }; })()`
	run(t, ctx, "minimap", chromedp.Navigate(srv.URL+"/workflows/fan"), chromedp.WaitVisible(`svg#graph g.node[data-step="s98"]`),
		chromedp.WaitVisible(`svg.minimap`),
		chromedp.Evaluate(`document.querySelectorAll('svg.minimap rect.mm-node').length`, &boxes),
		chromedp.Evaluate(scroll, &before),
		chromedp.Evaluate(`(() => { const b = document.querySelector('svg.minimap').getBoundingClientRect(); return [b.right - 3, b.top + b.height / 2]; })()`, &at),
		chromedp.ActionFunc(func(ctx context.Context) error { return chromedp.MouseClickXY(at[0], at[1]).Do(ctx) }),
		// the outline follows on the scroll event, after the scroll itself: wait for both
		chromedp.Poll(`document.querySelector('.graph-wrap').scrollLeft > 0 && Number(document.querySelector('svg.minimap .mm-view').getAttribute('x')) > 0`, nil),
		chromedp.Evaluate(scroll, &after))
	require.Equal(t, 100, boxes, "every step is on the minimap")
	require.Zero(t, before.Left)
	require.Greater(t, after.Left, before.Left, "a click on the minimap's right end scrolls the graph right")
	require.Greater(t, after.ViewX, before.ViewX, "and the outline of the view follows")
	shot(t, ctx, "workflow-minimap")

	run(t, ctx, "no minimap", chromedp.Navigate(srv.URL+"/workflows/approval-demo"), chromedp.WaitVisible(`svg#graph g.node`),
		chromedp.Poll(`window.__weftReady === true`, nil),
		chromedp.Evaluate(`document.querySelector('svg.minimap').hasAttribute('hidden')`, &hidden))
	require.True(t, hidden, "a graph that fits its box has no minimap")
}

// TestBuilderMinimap: the builder's canvas has the same minimap as the graphs (static/minimap.js):
// a hundred-step file zoomed in shows every step on it and the part in view outlined; panning the
// canvas moves the outline, and a click on a step's box on the minimap brings that step into view.
// A workflow that fits the canvas has none.
func TestBuilderMinimap(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fan.json"), []byte(fanFile()), 0o644))
	srv := newConsole(t, console.Options{WorkflowsDir: dir, Client: lazyClient(t)})
	ctx := chromium(t)

	type rect struct{ X, Y, Width, Height float64 }
	outline := `(() => { const v = document.querySelector('#b-minimap .mm-view');
	  return { X: Number(v.getAttribute('x')), Y: Number(v.getAttribute('y')), Width: Number(v.getAttribute('width')), Height: Number(v.getAttribute('height')) }; })()`
	var boxes int
	var level string
	var before, panned, clicked, visible rect
	run(t, ctx, "open", chromedp.Navigate(srv.URL+"/build?from=fan"), chromedp.Poll(`window.__weftBuilderReady === true`, nil),
		chromedp.WaitVisible(`.drawflow-node[data-step="s98"]`),
		chromedp.Click(`#b-zoom-in`), chromedp.Click(`#b-zoom-in`), chromedp.Click(`#b-zoom-in`), chromedp.Click(`#b-zoom-in`), chromedp.Click(`#b-zoom-in`),
		chromedp.WaitVisible(`svg#b-minimap`),
		chromedp.Text(`#b-zoom-level`, &level),
		chromedp.Evaluate(`document.querySelectorAll('#b-minimap rect.mm-node').length`, &boxes),
		chromedp.Evaluate(outline, &before))
	require.Equal(t, 100, boxes, "every step is on the minimap")
	require.NotEqual(t, "100%", level, "the zoom level is shown")
	require.Greater(t, before.Width, 0.0, "the part in view is outlined")

	// pan: the wheel over the canvas scrolls it down; the outline follows
	cx, cy := center(t, ctx, `#b-canvas`)
	run(t, ctx, "pan", chromedp.ActionFunc(func(ctx context.Context) error {
		return input.DispatchMouseEvent(input.MouseWheel, cx, cy).WithDeltaX(0).WithDeltaY(400).Do(ctx)
	}), chromedp.Poll(fmt.Sprintf(`Number(document.querySelector('#b-minimap .mm-view').getAttribute('y')) > %f`, before.Y+1), nil),
		chromedp.Evaluate(outline, &panned))
	require.Greater(t, panned.Y, before.Y, "panning down moves the outline down")

	// a click on the last step's box on the minimap brings that step into view
	var at []float64
	var s98Shown bool
	run(t, ctx, "click the minimap",
		chromedp.Evaluate(`(() => { const r = [...document.querySelectorAll('#b-minimap rect.mm-node')][99].getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()`, &at),
		chromedp.ActionFunc(func(ctx context.Context) error { return chromedp.MouseClickXY(at[0], at[1]).Do(ctx) }),
		chromedp.Poll(fmt.Sprintf(`(() => { const v = document.querySelector('#b-minimap .mm-view'); return Number(v.getAttribute('x')) !== %f || Number(v.getAttribute('y')) !== %f; })()`, panned.X, panned.Y), nil),
		chromedp.Evaluate(outline, &clicked),
		chromedp.Evaluate(`window.__weftBuilder.visible()`, &visible),
		chromedp.Evaluate(`(() => { const c = document.getElementById('b-canvas').getBoundingClientRect(), n = document.querySelector('.drawflow-node[data-step="s98"]').getBoundingClientRect();
		  return n.top >= c.top && n.bottom <= c.bottom && n.left >= c.left && n.right <= c.right; })()`, &s98Shown))
	require.NotEqual(t, panned, clicked, "the outline moved to where the minimap was clicked")
	require.True(t, s98Shown, "the last step is in view: %+v", visible)
	shot(t, ctx, "builder-minimap")

	var hidden bool
	run(t, ctx, "small workflow", chromedp.Navigate(srv.URL+"/build?from=approval-demo"), chromedp.Poll(`window.__weftBuilderReady === true`, nil),
		chromedp.WaitVisible(`.drawflow-node`),
		chromedp.Poll(`window.__weftBuilder.view().zoom > 0`, nil),
		chromedp.Evaluate(`new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(document.getElementById('b-minimap').hasAttribute('hidden')))))`, &hidden, awaitPromise))
	require.True(t, hidden, "a workflow that fits the canvas has no minimap")
}
