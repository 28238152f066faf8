package integration

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/console"
	"github.com/weftworks/weft/workflows/dsl"
)

// hundredSteps is 10 chains of 10 template steps: a run page of 100 nodes in 10 layers.
func hundredSteps() string {
	var steps []string
	for i := range 100 {
		text := fmt.Sprintf("step %d", i)
		if i%10 != 0 {
			text = fmt.Sprintf("{{ s%d.output.text }} + %d", i-1, i)
		}
		steps = append(steps, fmt.Sprintf(`{"id":"s%d","tool":"template","inputs":{"text":%q}}`, i, text))
	}
	return `{"name":"hundred","steps":[` + strings.Join(steps, ",") + `]}`
}

const delayFlow = `{"name":"delay","steps":[
  {"id":"gate","tool":"review","inputs":{"title":"go?","data":{"n":1}}},
  {"id":"after","tool":"template","inputs":{"text":"{{ gate.output.decision }}"}}]}`

func median(xs []float64) float64 {
	sort.Float64s(xs)
	return xs[len(xs)/2]
}

// BenchmarkConsoleRunPage measures, in headless chromium against the embedded stack, the Run page
// of a 100-step run: first contentful paint, the moment the graph is drawn, the bytes sent on a
// cold load (HTML, script, style) and the delay between a step finishing in the workflow and the
// page showing it (default 250 ms polling of the state query).
//
//	go test ./integration -run '^$' -bench ConsoleRunPage -benchtime 5x
func BenchmarkConsoleRunPage(b *testing.B) {
	c := dial(b)
	queue := "console-bench"
	startWorker(b, c, queue, nil)
	wc := weftclient.New(c, queue)
	s, err := console.New(console.Options{Client: wc})
	require.NoError(b, err)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	ctx := context.Background()
	big, err := dsl.Load("hundred.json", []byte(hundredSteps()))
	require.NoError(b, err)
	res, err := wc.Start(ctx, big, weftclient.StartOptions{Source: "hundred"})
	require.NoError(b, err)
	_, err = res.Get(ctx)
	require.NoError(b, err)
	delay, err := dsl.Load("delay.json", []byte(delayFlow))
	require.NoError(b, err)

	var fcp, ready, bytes, html, lag []float64
	for i := 0; i < b.N; i++ {
		bctx := browserFor(b)
		var m struct {
			FCP, Ready, Bytes, HTML float64
		}
		require.NoError(b, chromedp.Run(bctx,
			chromedp.Navigate(srv.URL+"/runs/"+res.ID),
			chromedp.WaitVisible(`svg#graph g.node.st-completed[data-step="s99"]`),
			chromedp.Poll(`window.__weftReadyAt !== undefined && performance.getEntriesByType('paint').length > 0`, nil, chromedp.WithPollingTimeout(10*time.Second)),
			chromedp.Evaluate(`(() => {
			  const paints = performance.getEntriesByType('paint');
			  const p = paints.find((e) => e.name === 'first-contentful-paint') || paints[0];
			  const nav = performance.getEntriesByType('navigation')[0];
			  const all = [nav, ...performance.getEntriesByType('resource')];
			  return {FCP: p ? p.startTime : -1, Ready: window.__weftReadyAt,
			    Bytes: all.reduce((n, e) => n + e.transferSize, 0), HTML: nav.encodedBodySize};
			})()`, &m),
		))
		fcp, ready, bytes, html = append(fcp, m.FCP), append(ready, m.Ready), append(bytes, m.Bytes), append(html, m.HTML)

		run, err := wc.Start(ctx, delay, weftclient.StartOptions{Source: "delay"})
		require.NoError(b, err)
		require.Eventually(b, func() bool { p, err := wc.Pending(ctx, run.ID); return err == nil && len(p) == 1 }, 20*time.Second, 20*time.Millisecond)
		require.NoError(b, chromedp.Run(bctx,
			chromedp.Navigate(srv.URL+"/runs/"+run.ID),
			chromedp.WaitVisible(`svg#graph g.node.has-review`)))
		_, err = wc.Review(ctx, run.ID, weftclient.Decision{Decision: "approve", Reviewer: "bench"})
		require.NoError(b, err)
		var seen float64
		require.NoError(b, chromedp.Run(bctx,
			chromedp.Poll(`window.__weftSeen.after && window.__weftSeen.after.completed`, &seen, chromedp.WithPollingInterval(5*time.Millisecond))))
		st, err := wc.State(ctx, run.ID)
		require.NoError(b, err)
		var finished time.Time
		for _, s := range st.Steps {
			if s.Id == "after" {
				finished = s.FinishedAt.AsTime()
			}
		}
		require.False(b, finished.IsZero())
		lag = append(lag, seen-float64(finished.UnixNano())/1e6)
	}
	b.ReportMetric(median(fcp), "fcp-ms")
	b.ReportMetric(median(ready), "graph-drawn-ms")
	b.ReportMetric(median(bytes), "cold-bytes")
	b.ReportMetric(median(html), "html-bytes")
	b.ReportMetric(median(lag), "update-delay-ms")
}

// browserFor is browser for a benchmark: a fresh profile each time, so every load is cold.
func browserFor(b *testing.B) context.Context {
	path, err := chromiumPath()
	require.NoError(b, err)
	dir, err := os.MkdirTemp("", "weft-bench-chromium")
	require.NoError(b, err)
	b.Cleanup(func() { _ = os.RemoveAll(filepath.Clean(dir)) })
	return newBrowser(b, path, dir)
}
