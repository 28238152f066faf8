package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/workflows/dsl"
)

// TestConsoleRunPageShowsStepsAsTheyAre: the run graph is a group of buttons (not an image hiding
// them from screen readers) whose names and marks say each step's status in words and a symbol,
// not colour alone; an inline step says it is computed inside the workflow (not "a run from an
// older worker"); a cancelled run shows its in-flight step as cancelled, without a streaming block.
func TestConsoleRunPageShowsStepsAsTheyAre(t *testing.T) {
	e := startConsole(t, "console-run-page")
	ctx := browser(t)
	id := e.start(t)

	var role, label, mark, note string
	inPage(t, ctx, "run page", 45*time.Second,
		chromedp.Navigate(e.url+"/runs/"+id),
		chromedp.WaitVisible(`svg#graph g.node.has-review[data-step="approve"]`),
		chromedp.WaitVisible(`svg#graph g.node.st-completed[data-step="draft"]`),
		chromedp.AttributeValue(`svg#graph`, "role", &role, nil),
		chromedp.AttributeValue(`svg#graph g.node[data-step="draft"]`, "aria-label", &label, nil),
		chromedp.Evaluate(`document.querySelector('svg#graph g.node[data-step="draft"] .st-mark').textContent`, &mark),
		chromedp.Click(`svg#graph g.node[data-step="draft"]`),
		chromedp.WaitVisible(`#detail .inline-note`),
		liveText(`#detail`, &note))
	require.NotEqual(t, "img", role, "focusable steps are not hidden inside an image")
	require.Contains(t, label, "completed", "the status is in the step's accessible name")
	require.Equal(t, "✓", mark, "and shown by a mark, not colour alone")
	require.Contains(t, note, "computed inside the workflow")
	require.NotContains(t, note, "older worker")

	require.NoError(t, e.client.Cancel(context.Background(), id, "test"))
	var detail string
	inPage(t, ctx, "cancelled", 45*time.Second,
		chromedp.Poll(`document.getElementById('run-status').textContent === 'cancelled'`, nil, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.WaitVisible(`svg#graph g.node.st-cancelled[data-step="approve"]`),
		chromedp.AttributeValue(`svg#graph g.node[data-step="approve"]`, "aria-label", &label, nil),
		chromedp.Click(`svg#graph g.node[data-step="approve"]`),
		chromedp.WaitVisible(`#detail dl`),
		liveText(`#detail dl`, &detail))
	require.Contains(t, label, "cancelled")
	require.Contains(t, detail, "cancelled")
	require.NotContains(t, detail, "failed")
	var streams int
	require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`document.querySelectorAll('#detail pre.stream').length`, &streams)))
	require.Zero(t, streams, "no streaming block for a step of a closed run")
	screenshot(t, ctx, "run-cancelled")
}

// TestBuilderRunsWhatItBuilt: a workflow imported into the builder, changed there (a step added
// and linked by the builder's own model), started from the builder (client origin) completes with
// the built steps; its export, loaded as a file, runs too.
func TestBuilderRunsWhatItBuilt(t *testing.T) {
	e := startConsole(t, "console-builder-run")
	ctx := browser(t)
	file := `{"name":"built","inputs":{"who":{"type":"string","default":"ana"}},"steps":[
	  {"id":"hello","tool":"template","inputs":{"text":"hello {{ inputs.who }}"}}],"output":"{{ hello.output.text }}"}`
	var said, exported, url string
	inPage(t, ctx, "build", 45*time.Second,
		chromedp.Navigate(e.url+"/build"),
		chromedp.Poll(`window.__weftBuilderReady === true`, nil),
		chromedp.Evaluate(fmt.Sprintf(`window.__weftBuilder.importText(%q, 'built.json')`, file), nil),
		chromedp.Evaluate(`window.__weftBuilder.addStep('template')`, nil),
		chromedp.Evaluate(`window.__weftBuilder.connect('hello', 'template')`, &said),
		chromedp.WaitVisible(`#b-valid.ok`),
		chromedp.Evaluate(`window.__weftBuilder.exportText()`, &exported))
	require.Contains(t, said, "{{ hello.output.text }}")
	inPage(t, ctx, "run", 45*time.Second,
		chromedp.Click(`#b-settings`), // the workflow's settings, with Run it
		chromedp.WaitVisible(`#b-run`),
		chromedp.Click(`#b-run`),
		chromedp.WaitVisible(`#run-status`),
		chromedp.Poll(`document.getElementById('run-status').textContent === 'completed'`, nil, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.Location(&url))
	runID := url[strings.LastIndex(url, "/")+1:]
	res, err := e.client.Result(context.Background(), runID)
	require.NoError(t, err)
	require.Equal(t, "hello ana", res.GetOutput().GetStringValue())
	d, err := e.client.Describe(context.Background(), runID)
	require.NoError(t, err)
	require.Equal(t, "completed", d.Status)

	w, err := dsl.Load("built.json", []byte(exported))
	require.NoError(t, err, "the export is a workflow file")
	require.Len(t, w.Steps, 2)
	run, err := e.client.Start(context.Background(), w, weftclient.StartOptions{Source: "built.json"})
	require.NoError(t, err)
	out, err := e.client.Result(context.Background(), run.ID)
	require.NoError(t, err)
	require.Equal(t, "hello ana", out.GetOutput().GetStringValue())
	screenshot(t, ctx, "builder-run")
}
