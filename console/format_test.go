package console_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/console"
)

// TestFormatsAgreeInBrowser: console.js writes times and durations as the Go pages do
// (console/format.go): every example of TestFormats, run through fmtAgo and fmtDuration in
// chromium.
func TestFormatsAgreeInBrowser(t *testing.T) {
	srv := newConsole(t, console.Options{Client: lazyClient(t)})
	ctx := chromium(t)
	ago, _ := json.Marshal(console.AgoCases())
	durations, _ := json.Marshal(console.DurationCases())
	var got struct{ Ago, Durations []string }
	run(t, ctx, "formats", chromedp.Navigate(srv.URL+"/workflows"), chromedp.Poll(`window.__weftReady === true`, nil),
		chromedp.Evaluate(fmt.Sprintf(`(() => { const now = Date.now();
		  return { Ago: %s.map((c) => weftFormat.fmtAgo(new Date(now - c.Ms).toISOString(), now)),
		           Durations: %s.map((c) => weftFormat.fmtDuration(c.Ms)) }; })()`, ago, durations), &got))
	for i, c := range console.AgoCases() {
		require.Equal(t, c.Want, got.Ago[i], "fmtAgo of %d ms ago", c.Ms)
	}
	for i, c := range console.DurationCases() {
		require.Equal(t, c.Want, got.Durations[i], "fmtDuration of %d ms", c.Ms)
	}
}
