package console_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/console"
)

// TestGraphMinimap: a graph larger than its box gets a minimap with every step and the part in
// view outlined; a click on the minimap moves the view there; a graph that fits has none.
func TestGraphMinimap(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(`{"name":"wide","steps":[{"id":"root","tool":"template","inputs":{"text":"start"}}`)
	for i := range 99 {
		fmt.Fprintf(&b, `,{"id":"s%d","tool":"template","inputs":{"text":"{{ root.output.text }} %d"}}`, i, i)
	}
	b.WriteString(`]}`)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "wide.json"), []byte(b.String()), 0o644))
	srv := newConsole(t, console.Options{WorkflowsDir: dir, Client: lazyClient(t)})
	ctx := chromium(t)
	var boxes int
	var hidden bool
	var at []float64
	type view struct{ Left, ViewX float64 }
	var before, after view
	scroll := `(() => { const w = document.querySelector('.graph-wrap'); const v = document.querySelector('svg.minimap .mm-view');
	  return { Left: w.scrollLeft, ViewX: Number(v.getAttribute('x')) }; })()`
	run(t, ctx, "minimap", chromedp.Navigate(srv.URL+"/workflows/wide"), chromedp.WaitVisible(`svg#graph g.node[data-step="s98"]`),
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
