package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/toolspec"
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
		code, out := e.post(t, "/v1/runs", `{"workflow":"paging-flow","inputs":{}}`)
		require.Equal(t, http.StatusCreated, code, out)
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

// runsConsole serves a console over the embedded stack whose worker (task queue queue) runs
// handlers, with the workflow files given (name → JSON).
func runsConsole(t *testing.T, queue string, handlers map[string]activities.Handler, files map[string]string) *consoleEnv {
	t.Helper()
	c := dial(t)
	startWorker(t, c, queue, handlers)
	dir := t.TempDir()
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".json"), []byte(text), 0o644))
	}
	wc := weftclient.New(c, queue)
	s, err := console.New(console.Options{Client: wc, WorkflowsDir: dir, Reviewer: "console-test", PollInterval: 100 * time.Millisecond})
	require.NoError(t, err)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return &consoleEnv{url: srv.URL, client: wc, dir: dir}
}

// itemStatuses reads the items table of the step shown on a run page.
const itemStatuses = `[...document.querySelectorAll('#detail table.items tbody tr[data-item] .status')].map((x) => x.textContent)`

// TestConsoleRunLiveItems: on a run that is really in progress, a forEach's items show the state
// the run's item events give while the step runs (item 0 done while items 1 and 2 still run, two
// at a time, the others pending); the timeline has the step's bar growing; when
// the step ends, every item shows its outcome.
func TestConsoleRunLiveItems(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	// item 0 answers at once, the others wait for the test
	search := func(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
		q := fmt.Sprint(in["query"])
		if q != "0" {
			select {
			case <-release:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		}
		return map[string]any{"query": q, "results": []any{}}, nil, nil
	}
	flow := `{"name":"live-items","inputs":{"xs":{"type":"array","default":["0","1","2","4","5"]}},"steps":[
	  {"id":"each","tool":"search","forEach":"{{ inputs.xs }}","concurrency":2,"inputs":{"query":"{{ item }}","collection":"docs"}}]}`
	e := runsConsole(t, "console-live-items", map[string]activities.Handler{"search": search}, map[string]string{"live-items": flow})
	code, out := e.post(t, "/v1/runs", `{"workflow":"live-items","inputs":{}}`)
	require.Equal(t, http.StatusCreated, code, out)
	id := out["id"].(string)

	ctx := browser(t)
	var live []string
	var bar, barLater string
	inPage(t, ctx, "items while the step runs", 60*time.Second,
		openItems(e.url, id, "each"),
		chromedp.Poll(itemStatuses+`.join('|') === '✓ completed|⟳ running|⟳ running|○ pending|○ pending'`, nil, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.Evaluate(itemStatuses, &live),
		chromedp.Evaluate(`window.__bar = document.querySelector('#timeline .tl-bar[data-step="each"]').title`, &bar),
		chromedp.Poll(`document.querySelector('#timeline .tl-bar[data-step="each"]').title !== window.__bar`, nil,
			chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.Evaluate(`document.querySelector('#timeline .tl-bar[data-step="each"]').title`, &barLater))
	require.Equal(t, []string{"✓ completed", "⟳ running", "⟳ running", "○ pending", "○ pending"}, live, "item 0 done while items 1 and 2 run")
	require.Contains(t, bar, "running")
	require.Contains(t, bar, "so far")
	require.NotEqual(t, bar, barLater, "the running step's bar follows the time")
	screenshot(t, ctx, "e2e-run-live-items")

	once.Do(func() { close(release) })
	var done []string
	inPage(t, ctx, "items when the step ended", 60*time.Second,
		chromedp.Poll(itemStatuses+`.every((s) => s.includes('completed'))`, nil, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.Evaluate(itemStatuses, &done))
	require.Len(t, done, 5)
	_, err := e.client.Result(context.Background(), id)
	require.NoError(t, err)
}

// TestConsoleRunItemFails: on a run in progress, a forEach item that fails shows failed with its
// error in its row as soon as it fails, and when the step has failed the item never started
// shows not run; the page opened after the run failed shows the same.
func TestConsoleRunItemFails(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	search := func(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
		q := fmt.Sprint(in["query"])
		if q != "bad" {
			return map[string]any{"query": q, "results": []any{}}, nil, nil
		}
		select {
		case <-release:
			return nil, nil, &activities.InputError{Msg: "the query bad is refused"}
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
	flow := `{"name":"item-fails","inputs":{"xs":{"type":"array","default":["a","bad","c"]}},"steps":[
	  {"id":"each","tool":"search","forEach":"{{ inputs.xs }}","concurrency":1,"inputs":{"query":"{{ item }}","collection":"docs"}}]}`
	e := runsConsole(t, "console-item-fails", map[string]activities.Handler{"search": search}, map[string]string{"item-fails": flow})
	code, out := e.post(t, "/v1/runs", `{"workflow":"item-fails","inputs":{}}`)
	require.Equal(t, http.StatusCreated, code, out)
	id := out["id"].(string)

	ctx := browser(t)
	inPage(t, ctx, "an item in flight", 60*time.Second,
		openItems(e.url, id, "each"),
		chromedp.Poll(itemStatuses+`.join('|') === '✓ completed|⟳ running|○ pending'`, nil, chromedp.WithPollingTimeout(30*time.Second)))
	once.Do(func() { close(release) })
	var statuses []string
	var preview string
	inPage(t, ctx, "a failed item", 60*time.Second,
		chromedp.Poll(itemStatuses+`[1] === '✕ failed'`, nil, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.WaitVisible(`#run-error`),
		chromedp.Evaluate(itemStatuses, &statuses),
		liveText(`#detail tr[data-item="1"] .item-preview`, &preview))
	require.Equal(t, []string{"✓ completed", "✕ failed", "not run"}, statuses)
	require.Contains(t, preview, "bad is refused", "the item's error in its row")
	_, err := e.client.Result(context.Background(), id)
	require.Error(t, err)

	// opened after the run failed: the state has no items' outcomes (the failed step has no
	// output), so the page reads the run's events again and shows what they tell
	var later []string
	inPage(t, ctx, "the failed run opened again", 60*time.Second,
		openItems(e.url, id, "each"),
		chromedp.Poll(itemStatuses+`[0] === '✓ completed'`, nil, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.Evaluate(itemStatuses, &later),
		liveText(`#detail tr[data-item="1"] .item-preview`, &preview))
	require.Equal(t, []string{"✓ completed", "✕ failed", "not run"}, later, "not unknown")
	require.Contains(t, preview, "bad is refused")
}

// TestConsoleRunItemsCancelledInFlight: with three items at a time, one failing cancels the two
// in flight with it: on the page they are cancelled (word and mark), not failed, the failing one
// failed with its error, the two never started not run; the same when the page is opened after.
func TestConsoleRunItemsCancelledInFlight(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	started := make(chan string, 8)
	ended := make(chan struct{})
	search := func(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
		q := fmt.Sprint(in["query"])
		started <- q
		if q == "bad" {
			select {
			case <-release:
				return nil, nil, &activities.InputError{Msg: "the query bad is refused"}
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		}
		select { // the others wait until they are cancelled (or the test ends)
		case <-ctx.Done():
		case <-ended:
		}
		return nil, nil, errors.New("cancelled in flight")
	}
	flow := `{"name":"items-cancelled","inputs":{"xs":{"type":"array","default":["a","bad","c","d","e"]}},"steps":[
	  {"id":"each","tool":"search","forEach":"{{ inputs.xs }}","concurrency":3,"inputs":{"query":"{{ item }}","collection":"docs"}}]}`
	e := runsConsole(t, "console-items-cancelled", map[string]activities.Handler{"search": search}, map[string]string{"items-cancelled": flow})
	t.Cleanup(func() { close(ended) }) // before the worker stops
	code, out := e.post(t, "/v1/runs", `{"workflow":"items-cancelled","inputs":{}}`)
	require.Equal(t, http.StatusCreated, code, out)
	id := out["id"].(string)

	ctx := browser(t)
	inPage(t, ctx, "three items in flight", 60*time.Second,
		openItems(e.url, id, "each"),
		chromedp.Poll(itemStatuses+`.join('|') === '⟳ running|⟳ running|⟳ running|○ pending|○ pending'`, nil, chromedp.WithPollingTimeout(30*time.Second)))
	for range 3 {
		<-started
	}
	once.Do(func() { close(release) })
	want := []string{"⊘ cancelled", "✕ failed", "⊘ cancelled", "not run", "not run"}
	var statuses []string
	inPage(t, ctx, "one failed, two cancelled", 60*time.Second,
		chromedp.WaitVisible(`#run-error`),
		chromedp.Poll(itemStatuses+`.join('|') === `+fmt.Sprintf("%q", strings.Join(want, "|")), nil, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.Evaluate(itemStatuses, &statuses))
	require.Equal(t, want, statuses)
	_, err := e.client.Result(context.Background(), id)
	require.Error(t, err)

	var later []string
	var preview string
	inPage(t, ctx, "the failed run opened again", 60*time.Second,
		openItems(e.url, id, "each"),
		chromedp.Poll(itemStatuses+`[0] !== 'unknown'`, nil, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.Evaluate(itemStatuses, &later),
		liveText(`#detail tr[data-item="1"] .item-preview`, &preview))
	require.Equal(t, want, later)
	require.Contains(t, preview, "bad is refused")
}

// TestConsoleRunAgentIterations: an agent's run page, on a real history: its tool calls grouped by
// iteration with the model's text of each, the last iteration open, each call's status in words.
func TestConsoleRunAgentIterations(t *testing.T) {
	model := func(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
		msgs, _ := in["messages"].([]any)
		seen := 0
		for _, m := range msgs {
			if mm, _ := m.(map[string]any); mm["role"] == "tool" {
				seen++
			}
		}
		if seen >= 2 {
			return map[string]any{"text": "all done", "toolCalls": []any{}}, &toolspec.Usage{TotalTokens: 3}, nil
		}
		return map[string]any{"text": fmt.Sprintf("looking, turn %d", seen+1), "toolCalls": []any{map[string]any{
			"id": fmt.Sprintf("c%d", seen+1), "name": "search", "arguments": fmt.Sprintf(`{"query":"q%d","collection":"docs"}`, seen+1)}}}, &toolspec.Usage{TotalTokens: 3}, nil
	}
	flow := `{"name":"agent-view","steps":[{"id":"a","tool":"agent","inputs":{"prompt":"find it","tools":["search"],"maxIterations":5}}],"output":"{{ a.output.text }}"}`
	e := runsConsole(t, "console-agent-view", map[string]activities.Handler{"llm": model, "search": fakeSearch}, map[string]string{"agent-view": flow})
	code, out := e.post(t, "/v1/runs", `{"workflow":"agent-view","inputs":{}}`)
	require.Equal(t, http.StatusCreated, code, out)
	id := out["id"].(string)
	_, err := e.client.Result(context.Background(), id)
	require.NoError(t, err)

	ctx := browser(t)
	type group struct {
		Summary, Text string
		Open          bool
		Calls         []string
	}
	var groups []group
	var args string
	inPage(t, ctx, "agent iterations", 60*time.Second,
		chromedp.Navigate(e.url+"/runs/"+id),
		chromedp.WaitVisible(`svg#graph g.node[data-step="a"]`),
		chromedp.Click(`svg#graph g.node[data-step="a"]`),
		chromedp.WaitVisible(`#detail details.iteration`),
		chromedp.Evaluate(`[...document.querySelectorAll('#detail details.iteration')].map((d) => ({ Summary: d.querySelector('summary').textContent, Open: d.open,
		  Text: (d.querySelector('.model-text') || {}).textContent || '', Calls: [...d.querySelectorAll('li.call .call-head')].map((c) => c.textContent) }))`, &groups),
		chromedp.Click(`#detail details.iteration[data-iteration="2"] > summary`),
		chromedp.Click(`#detail details.iteration[data-iteration="2"] li.call details.call-args > summary`),
		liveText(`#detail details.iteration[data-iteration="2"] li.call details.call-args pre`, &args))
	require.Len(t, groups, 3, "two iterations with a search each, and the answer: %+v", groups)
	for i, g := range groups {
		require.Contains(t, g.Summary, fmt.Sprintf("Iteration %d", i+1))
		require.Equal(t, i == 2, g.Open, "only the last iteration starts open: %+v", g)
	}
	require.Len(t, groups[0].Calls, 1)
	require.Contains(t, groups[0].Calls[0], "search")
	require.Contains(t, groups[0].Calls[0], "completed", "the call's status in words")
	require.Contains(t, groups[0].Text, "looking, turn 1")
	require.Contains(t, groups[1].Text, "looking, turn 2")
	require.Contains(t, groups[2].Text, "all done")
	require.Empty(t, groups[2].Calls)
	require.Contains(t, args, "q2", "the call's arguments as the run recorded them")
	screenshot(t, ctx, "e2e-run-agent-iterations")
}

// TestConsoleRunReviewItems: a forEach of reviews in progress shows, from the run's events, the
// item decided as done and each item whose gate waits as awaiting review (in words and a mark),
// on the page opened before the decision.
func TestConsoleRunReviewItems(t *testing.T) {
	flow := `{"name":"review-items","inputs":{"xs":{"type":"array","default":["a","b","c"]}},"steps":[
	  {"id":"each","tool":"review","forEach":"{{ inputs.xs }}","inputs":{"title":"ok {{ item }}?","data":"{{ item }}"}}]}`
	e := runsConsole(t, "console-review-items", nil, map[string]string{"review-items": flow})
	code, out := e.post(t, "/v1/runs", `{"workflow":"review-items","inputs":{}}`)
	require.Equal(t, http.StatusCreated, code, out)
	id := out["id"].(string)
	var gates []string
	digests := map[string]string{}
	require.Eventually(t, func() bool {
		p, err := e.client.Pending(context.Background(), id)
		gates = gates[:0]
		for _, r := range p {
			gates = append(gates, r.GetId())
			digests[r.GetId()] = r.GetDigest()
		}
		return err == nil && len(p) == 3
	}, 20*time.Second, 50*time.Millisecond)
	slices.Sort(gates)

	ctx := browser(t)
	inPage(t, ctx, "items waiting", 60*time.Second,
		openItems(e.url, id, "each"),
		chromedp.Poll(itemStatuses+`.join('|') === '⏸ awaiting review|⏸ awaiting review|⏸ awaiting review'`, nil, chromedp.WithPollingTimeout(30*time.Second)))
	code, out = e.post(t, "/v1/runs/"+id+"/reviews", fmt.Sprintf(`{"review":%q,"decision":"approve","reviewer":"ana","digest":%q}`, gates[0], digests[gates[0]]))
	require.Equal(t, http.StatusOK, code, out)
	var got []string
	var inputs, card string
	inPage(t, ctx, "one item decided", 60*time.Second,
		chromedp.Poll(itemStatuses+`[0] === '✓ completed'`, nil, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.Evaluate(itemStatuses, &got),
		liveText(`#detail .detail-inputs`, &inputs),
		chromedp.Evaluate(`document.querySelector('#pending .card').innerText`, &card))
	require.Equal(t, []string{"✓ completed", "⏸ awaiting review", "⏸ awaiting review"}, got, "gates %v", gates)
	require.Contains(t, inputs, "a review the workflow waits on", "a review step has no activity call: not \"a run from an older worker\"")
	require.NotContains(t, inputs, "[object", "the inputs as written are drawn, not written as text")
	require.NotContains(t, card, "null", "a review without instructions shows none")
	screenshot(t, ctx, "e2e-run-review-items")
}

// openItems opens run id's page and the items view of its forEach step.
func openItems(url, id, step string) chromedp.Tasks {
	node := fmt.Sprintf(`svg#graph g.node[data-step=%q]`, step)
	return chromedp.Tasks{
		chromedp.Navigate(url + "/runs/" + id),
		chromedp.WaitVisible(node),
		chromedp.Click(node),
		chromedp.WaitVisible(`#detail table.items`),
	}
}
