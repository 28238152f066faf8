package console_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/console"
)

// framed is put in every page before its scripts: when the builder says it is ready (its canvas
// drawn, its palette built), it notes the end of the next frame's task, the moment a drag from the
// palette is handled.
const framed = `Object.defineProperty(window, '__weftBuilderReady', { configurable: true, set(v) {
  Object.defineProperty(window, '__weftBuilderReady', { value: v, writable: true });
  requestAnimationFrame(() => setTimeout(() => { window.__weftFramedAt = performance.now(); }, 0));
} });`

// builderLoad is one load of /build with a 100-step file in a new tab, the browser's cache off.
type builderLoad struct {
	FCP, Ready, Framed, DCL    float64 // ms from the start of navigation
	HTML, Script, Style, Bytes float64 // bytes transferred: the page, scripts, style sheets, all three
	API                        float64 // bytes of the page's own fetches (validation)
}

func loadBuilder(ctx context.Context, url string) (builderLoad, error) {
	tab, cancel := chromedp.NewContext(ctx)
	defer cancel()
	var m builderLoad
	err := chromedp.Run(tab,
		network.Enable(), network.SetCacheDisabled(true),
		chromedp.ActionFunc(func(ctx context.Context) error {
			_, err := page.AddScriptToEvaluateOnNewDocument(framed).Do(ctx)
			return err
		}),
		chromedp.Navigate(url),
		chromedp.Poll(`window.__weftFramedAt !== undefined && performance.getEntriesByType('paint').length > 0 && document.getElementById('b-valid').classList.contains('ok')`, nil),
		chromedp.Evaluate(`(() => {
		  const paints = performance.getEntriesByType('paint');
		  const p = paints.find((e) => e.name === 'first-contentful-paint') || paints[0];
		  const nav = performance.getEntriesByType('navigation')[0];
		  const res = performance.getEntriesByType('resource');
		  const sum = (f) => res.filter(f).reduce((n, e) => n + e.transferSize, 0);
		  const script = sum((e) => e.initiatorType === 'script' || e.name.endsWith('.js'));
		  const style = sum((e) => e.initiatorType === 'link' || e.name.endsWith('.css'));
		  return { FCP: p ? p.startTime : -1, Ready: window.__weftBuilderReadyAt, Framed: window.__weftFramedAt, DCL: nav.domContentLoadedEventEnd,
		    HTML: nav.transferSize, Script: script, Style: style, Bytes: nav.transferSize + script + style,
		    API: sum((e) => e.initiatorType === 'fetch' || e.initiatorType === 'xmlhttprequest') };
		})()`, &m))
	return m, err
}

// BenchmarkBuilderLoad: the builder (/build) with a 100-step workflow file, loaded cold in
// headless chromium: bytes of HTML, script and style transferred (Drawflow included), first
// contentful paint, when the builder's script is done (canvas drawn, palette built) and when the
// frame after it is painted and a palette drag would be handled. Medians of the loads; one load
// per iteration. The goal is interactive within 500 ms.
//
//	go test ./console -run '^$' -bench BuilderLoad -benchtime 9x
func BenchmarkBuilderLoad(b *testing.B) {
	dir := b.TempDir()
	require.NoError(b, os.WriteFile(filepath.Join(dir, "hundred.json"), []byte(hundredStepFile()), 0o644))
	srv := newConsole(b, console.Options{WorkflowsDir: dir, Client: lazyClient(b)})
	ctx := chromium(b)
	// a first load outside the figures: chromium's own start-up (fonts, the profile)
	_, err := loadBuilder(ctx, srv.URL+"/build?from=hundred")
	require.NoError(b, err)
	var loads []builderLoad
	b.ResetTimer()
	for range b.N {
		m, err := loadBuilder(ctx, srv.URL+"/build?from=hundred")
		require.NoError(b, err)
		loads = append(loads, m)
	}
	b.StopTimer()
	med := func(f func(builderLoad) float64) float64 {
		xs := make([]float64, len(loads))
		for i, l := range loads {
			xs[i] = f(l)
		}
		sort.Float64s(xs)
		return xs[len(xs)/2]
	}
	b.ReportMetric(med(func(l builderLoad) float64 { return l.FCP }), "fcp-ms")
	b.ReportMetric(med(func(l builderLoad) float64 { return l.Ready }), "ready-ms")
	b.ReportMetric(med(func(l builderLoad) float64 { return l.Framed }), "interactive-ms")
	b.ReportMetric(med(func(l builderLoad) float64 { return l.Bytes }), "page-bytes")
	b.ReportMetric(med(func(l builderLoad) float64 { return l.HTML }), "html-bytes")
	b.ReportMetric(med(func(l builderLoad) float64 { return l.Script }), "script-bytes")
	b.ReportMetric(med(func(l builderLoad) float64 { return l.Style }), "style-bytes")
	b.ReportMetric(med(func(l builderLoad) float64 { return l.API }), "validate-bytes")
	b.ReportMetric(0, "ns/op")
	for i, l := range loads {
		b.Logf("load %d: %+v", i+1, l)
	}
}

// BenchmarkBuilderOpenSaveReopen: a 100-step file of the workflows folder opened in the builder
// (/build?from=, until its validation says ok and the next frame is painted), one field changed
// and saved (Save: PUT /v1/workflows/{name}, until the page says it is saved), and re-opened (a
// reload, as after a Save). Medians; one open, save and re-open per iteration, each save a new
// version.
//
//	go test ./console -run '^$' -bench BuilderOpenSaveReopen -benchtime 5x
func BenchmarkBuilderOpenSaveReopen(b *testing.B) {
	dir := b.TempDir()
	require.NoError(b, os.WriteFile(filepath.Join(dir, "hundred.json"), []byte(hundredStepFile()), 0o644))
	srv := newConsole(b, console.Options{WorkflowsDir: dir, Client: lazyClient(b)})
	ctx := chromium(b)
	url := srv.URL + "/build?from=hundred"
	opened := chromedp.Poll(`window.__weftFramedAt !== undefined && document.getElementById('b-valid').classList.contains('ok')`, nil)
	// saveMs clicks Save and answers the milliseconds until the page says the file is saved
	const saveMs = `new Promise((done) => {
	  const say = document.getElementById('b-say'), t0 = performance.now();
	  const o = new MutationObserver(() => { if (/^saved hundred as version/.test(say.textContent)) { o.disconnect(); done(performance.now() - t0); } });
	  o.observe(say, { childList: true, characterData: true, subtree: true });
	  document.getElementById('b-save').click();
	})`
	await := func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }
	var opens, saves, reopens []float64
	for i := -1; i < b.N; i++ { // the first round, outside the figures: chromium's own start-up
		tab, cancel := chromedp.NewContext(ctx)
		var open, save, reopen float64
		err := chromedp.Run(tab,
			chromedp.ActionFunc(func(ctx context.Context) error {
				_, err := page.AddScriptToEvaluateOnNewDocument(framed).Do(ctx)
				return err
			}),
			chromedp.Navigate(url), opened, chromedp.Evaluate(`window.__weftFramedAt`, &open),
			chromedp.Click(`.drawflow-node[data-step="s0"]`), chromedp.WaitVisible(`#f-inputs-text`),
			chromedp.SendKeys(`#f-inputs-text`, "x"), chromedp.Poll(`window.__weftBuilder.unsaved()`, nil),
			chromedp.Evaluate(saveMs, &save, await),
			chromedp.Reload(), opened, chromedp.Evaluate(`window.__weftFramedAt`, &reopen))
		cancel()
		require.NoError(b, err)
		if i < 0 {
			b.ResetTimer()
			continue
		}
		opens, saves, reopens = append(opens, open), append(saves, save), append(reopens, reopen)
		b.Logf("round %d: open %.0f ms, save %.0f ms, re-open %.0f ms", i+1, open, save, reopen)
	}
	b.StopTimer()
	med := func(xs []float64) float64 {
		xs = append([]float64(nil), xs...)
		sort.Float64s(xs)
		return xs[len(xs)/2]
	}
	b.ReportMetric(med(opens), "open-ms")
	b.ReportMetric(med(saves), "save-ms")
	b.ReportMetric(med(reopens), "reopen-ms")
	b.ReportMetric(0, "ns/op")
}
