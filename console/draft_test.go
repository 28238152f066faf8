package console_test

import (
	"sync/atomic"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/console"
)

// TestBuilderKeepsADraft: the file being edited is kept across a nav click and Back, a fresh
// /build and a reload; /build?from= a file offers the draft rather than putting it over the file;
// and while there are changes not downloaded the page asks before it is left.
func TestBuilderKeepsADraft(t *testing.T) {
	srv := newConsole(t, console.Options{Client: lazyClient(t)})
	ctx := chromium(t)
	var dialogs atomic.Int32
	chromedp.ListenTarget(ctx, func(ev any) {
		if e, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			if e.Type == page.DialogTypeBeforeunload {
				dialogs.Add(1)
			}
			go func() { _ = chromedp.Run(ctx, page.HandleJavaScriptDialog(true)) }()
		}
	})
	state := func(name string) (unsaved, guarded bool) {
		run(t, ctx, name, chromedp.Evaluate(`window.__weftBuilder.unsaved()`, &unsaved), chromedp.Evaluate(`window.__weftBuilder.guard()`, &guarded))
		return unsaved, guarded
	}
	text := func() string {
		steps, _ := exported(t, ctx)["steps"].([]any)
		require.Len(t, steps, 1, "the draft's one step")
		return steps[0].(map[string]any)["inputs"].(map[string]any)["text"].(string)
	}

	run(t, ctx, "open the builder", chromedp.Navigate(srv.URL+"/build"), chromedp.Poll(`window.__weftBuilderReady === true`, nil))
	unsaved, guarded := state("fresh")
	require.False(t, unsaved, "an empty builder has nothing to lose")
	require.False(t, guarded, "and does not ask before it is left")

	run(t, ctx, "edit", chromedp.Focus(`.b-tool[data-tool="template"]`), chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(`#f-inputs-text`), chromedp.SendKeys(`#f-inputs-text`, "kept"),
		chromedp.Poll(`window.__weftBuilder.unsaved()`, nil))
	unsaved, guarded = state("edited")
	require.True(t, unsaved)
	require.True(t, guarded, "the beforeunload guard is armed after an edit")

	run(t, ctx, "a nav click", chromedp.Click(`nav a[href="/workflows"]`), chromedp.WaitVisible(`a[href="/workflows/approval-demo"]`))
	require.EqualValues(t, 1, dialogs.Load(), "chromium asked before leaving the edited file")
	run(t, ctx, "and Back", chromedp.NavigateBack(), chromedp.Poll(`location.pathname === '/build' && window.__weftBuilderReady === true`, nil),
		chromedp.WaitVisible(`.drawflow-node[data-step="template"]`))
	require.Equal(t, "kept", text(), "Back gives the builder as it was left")
	unsaved, _ = state("after Back")
	require.True(t, unsaved, "the restored draft is still not downloaded")

	run(t, ctx, "a fresh /build", chromedp.Navigate(srv.URL+"/build"), chromedp.Poll(`window.__weftBuilderReady === true`, nil),
		chromedp.WaitVisible(`.drawflow-node[data-step="template"]`), chromedp.WaitVisible(`#b-say`))
	require.Equal(t, "kept", text(), "a new visit to /build restores the draft")

	// a file asked for is opened as it is; the draft is offered beside it
	var nodes int
	run(t, ctx, "open a catalog file", chromedp.Navigate(srv.URL+"/build?from=approval-demo"), chromedp.Poll(`window.__weftBuilderReady === true`, nil),
		chromedp.WaitVisible(`#b-restore-draft`), chromedp.Evaluate(`document.querySelectorAll('.drawflow-node[data-step="template"]').length`, &nodes))
	require.Zero(t, nodes, "the draft is not put over the file asked for")
	unsaved, _ = state("catalog file")
	require.False(t, unsaved, "a file just opened has no unsaved changes")
	run(t, ctx, "restore the draft", chromedp.Click(`#b-restore-draft`), chromedp.WaitVisible(`.drawflow-node[data-step="template"]`))
	require.Equal(t, "kept", text())

	// downloading disarms the guard
	run(t, ctx, "download", chromedp.Click(`#b-export`), chromedp.Poll(`!window.__weftBuilder.unsaved()`, nil))
	_, guarded = state("downloaded")
	require.False(t, guarded, "no question once the file is downloaded")
}
