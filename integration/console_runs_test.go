package integration

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/console"
)

// TestConsoleRunsPagesAndSearch: the runs page pages through more runs than a page holds (Older,
// Newer, the live refresh keeping the page shown) and searches as one types; times are relative
// with the absolute time as a tooltip, durations as the console writes them everywhere.
func TestConsoleRunsPagesAndSearch(t *testing.T) {
	const queue, perPage, total = "console-runs-paging", 3, 7
	c := dial(t)
	startWorker(t, c, queue, nil)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "paging-flow.json"),
		[]byte(`{"name":"paging-flow","steps":[{"id":"say","tool":"template","inputs":{"text":"hello"}}]}`), 0o644))
	wc := weftclient.New(c, queue)
	s, err := console.New(console.Options{Client: wc, WorkflowsDir: dir, Reviewer: "console-test", PollInterval: 100 * time.Millisecond, RunsPerPage: perPage})
	require.NoError(t, err)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	e := &consoleEnv{url: srv.URL, client: wc, dir: dir}

	// newest first: ids[0] is the last started
	var ids []string
	for range total {
		code, out := e.post(t, "/api/workflows/paging-flow/runs", `{"inputs":{}}`)
		require.Equal(t, http.StatusOK, code, out)
		id := out["id"].(string)
		_, err := wc.Result(context.Background(), id)
		require.NoError(t, err)
		ids = append([]string{id}, ids...)
	}

	ctx := browser(t)
	rows := `[...document.querySelectorAll('#runs-body tr[data-run]')].map((r) => r.dataset.run)`
	// refreshed waits for two more reads of the list by the page's live refresh
	countReads := chromedp.Evaluate(`(() => { if (window.__reads !== undefined) return; window.__reads = 0; const f = window.fetch;
	  window.fetch = (u, o) => { if (String(u).startsWith('/api/runs?')) window.__reads++; return f(u, o); }; })()`, nil)
	refreshed := func() chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			var n int
			if err := chromedp.Evaluate(`window.__reads`, &n).Do(ctx); err != nil {
				return err
			}
			return chromedp.Poll(fmt.Sprintf(`window.__reads >= %d`, n+2), nil).Do(ctx)
		})
	}
	var page1, page2, page3, again []string
	var pageNo string
	var olderHidden bool
	var times []map[string]string
	inPage(t, ctx, "first page", 30*time.Second,
		chromedp.Navigate(srv.URL+"/?workflow=paging-flow"),
		chromedp.WaitVisible(`#runs-body tr[data-run]`),
		chromedp.Evaluate(rows, &page1),
		chromedp.Evaluate(`[...document.querySelectorAll('#runs-body tr[data-run]')].map((r) => ({
		  text: r.querySelector('time').textContent, title: r.querySelector('time').title, duration: r.cells[4].textContent }))`, &times),
		chromedp.Text(`#page-no`, &pageNo))
	require.Equal(t, ids[:perPage], page1, "the newest runs first")
	require.Equal(t, "page 1", pageNo)
	for _, tm := range times {
		require.Regexp(t, `^(just now|\d+ (s|min) ago)$`, tm["text"], "relative start time")
		require.Regexp(t, `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+$`, tm["title"], "absolute time as the tooltip")
		require.Regexp(t, `^(\d+ ms|\d+\.\d s)$`, tm["duration"], "durations as the console writes them")
	}
	screenshot(t, ctx, "runs-page-1")

	inPage(t, ctx, "second page", 30*time.Second,
		chromedp.Click(`#older`),
		chromedp.WaitVisible(`#newer`),
		countReads,
		refreshed(), // the live refresh keeps the second page
		chromedp.Evaluate(rows, &page2),
		chromedp.Text(`#page-no`, &pageNo))
	require.Equal(t, ids[perPage:2*perPage], page2)
	require.Equal(t, "page 2", pageNo)
	screenshot(t, ctx, "runs-page-2")

	inPage(t, ctx, "last page", 30*time.Second,
		chromedp.Click(`#older`),
		chromedp.WaitVisible(`#newer`),
		chromedp.Evaluate(rows, &page3),
		chromedp.Evaluate(`document.getElementById('older').hidden`, &olderHidden),
		chromedp.Click(`#newer`),
		chromedp.WaitVisible(`#newest`),
		chromedp.Evaluate(rows, &again))
	require.Equal(t, ids[2*perPage:], page3)
	require.True(t, olderHidden, "no Older on the last page")
	require.Equal(t, page2, again, "Newer goes back one page")

	// search, as one types: from any page, back to the newest runs that match
	oldest := ids[total-1]
	var url string
	var found []string
	inPage(t, ctx, "search", 30*time.Second,
		chromedp.SendKeys(`input[name=q]`, oldest[len(oldest)-8:]),
		chromedp.Poll(fmt.Sprintf(`JSON.stringify(%s) === JSON.stringify([%q])`, rows, oldest), nil),
		chromedp.Evaluate(rows, &found),
		chromedp.Location(&url),
		chromedp.Text(`#page-no`, &pageNo))
	require.Equal(t, []string{oldest}, found)
	require.Contains(t, url, "q=")
	require.NotContains(t, url, "after=", "a new search starts at the newest runs")
	require.Equal(t, "page 1", pageNo)
	screenshot(t, ctx, "runs-search")

	// the search and the pages together, without the script: the server renders the same
	var status string
	var text string
	inPage(t, ctx, "search pages", 30*time.Second,
		chromedp.Navigate(srv.URL+"/?q=paging-flow+completed"),
		chromedp.WaitVisible(`#older`),
		chromedp.Evaluate(rows, &found),
		chromedp.Text(`#runs-body tr:first-child td:nth-child(3)`, &status),
		chromedp.Text(`.pager`, &text))
	require.Len(t, found, perPage)
	require.True(t, slices.Contains(ids, found[0]))
	require.Equal(t, "completed", status)
	require.Contains(t, text, "Older")
}
