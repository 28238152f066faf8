package console_test

import (
	"encoding/json"
	"html"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/auth"
	"github.com/weftworks/weft/console"
)

const greetFile = `{
  "name": "greet",
  "steps": [
    { "id": "hello", "tool": "template", "inputs": { "text": "hi" } }
  ]
}
`

// TestBuilderSaves: an admin opens a file of the workflows folder in the builder, changes one
// field and saves it (PUT /v1/workflows/{name} with the version it was opened at as base): the
// file on disk is that one line changed and the unsaved-changes guard is disarmed; a reload opens
// the saved file; Versions lists the two versions (the file found on disk, and the save, by the
// login's name) with a diff, and Restore of the first brings its content back as a new version,
// on disk and in the builder. A save over a version another saved meanwhile is refused (409) and
// the page says what to do. A runner sees Save disabled, told who may.
func TestBuilderSaves(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "greet.json")
	require.NoError(t, os.WriteFile(file, []byte(greetFile), 0o644))
	o := console.Options{Client: lazyClient(t), WorkflowsDir: dir, RequireLogin: true}
	var keys map[string]string
	o.Keys, keys = testKeys(t)
	srv := newConsole(t, o)
	ctx := chromium(t)
	chromedp.ListenTarget(ctx, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			go func() { _ = chromedp.Run(ctx, page.HandleJavaScriptDialog(true)) }()
		}
	})
	login := func(who, next string) chromedp.Action {
		return chromedp.Tasks{network.ClearBrowserCookies(), chromedp.Navigate(srv.URL + "/login?next=" + next),
			chromedp.SendKeys(`input[name="key"]`, keys[who]), chromedp.Submit(`form.login`), chromedp.WaitVisible(`#b-save`), chromedp.Poll(`window.__weftBuilderReady === true`, nil)}
	}
	say := func(name, want string) string {
		var s string
		run(t, ctx, name, chromedp.Poll(`document.getElementById('b-say').textContent.includes(`+mustJS(want)+`)`, nil),
			chromedp.Text(`#b-say`, &s))
		return s
	}
	unsaved := func() (u, guarded bool) {
		run(t, ctx, "unsaved?", chromedp.Evaluate(`window.__weftBuilder.unsaved()`, &u), chromedp.Evaluate(`window.__weftBuilder.guard()`, &guarded))
		return u, guarded
	}

	run(t, ctx, "open greet", login("env", "/build?from=greet"), chromedp.WaitVisible(`.drawflow-node[data-step="hello"]`),
		chromedp.Click(`.drawflow-node[data-step="hello"]`), chromedp.WaitVisible(`#f-inputs-text`),
		chromedp.Evaluate(`(() => { const a = document.querySelector('#f-inputs-text'); a.focus(); a.setSelectionRange(2, 2); })()`, nil),
		chromedp.SendKeys(`#f-inputs-text`, " there"),
		chromedp.Poll(`window.__weftBuilder.exportText().includes('hi there')`, nil))
	u, guarded := unsaved()
	require.True(t, u && guarded, "an edit arms the guard")
	run(t, ctx, "save", chromedp.Click(`#b-save`))
	require.Contains(t, say("saved", "saved greet as version"), "saved greet as version 2", "version 1 is the file as it was found on disk")
	u, guarded = unsaved()
	require.False(t, u, "saved: nothing unsaved")
	require.False(t, guarded, "the guard is disarmed after a Save")
	onDisk, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, strings.Replace(greetFile, `"text": "hi"`, `"text": "hi there"`, 1), string(onDisk), "the one field changed, nothing else")

	var text string
	run(t, ctx, "reload", chromedp.Reload(), chromedp.Poll(`window.__weftBuilderReady === true`, nil),
		chromedp.WaitVisible(`.drawflow-node[data-step="hello"]`), chromedp.Evaluate(`window.__weftBuilder.exportText()`, &text))
	require.Equal(t, string(onDisk), text, "the reloaded builder opens the saved file")

	var versions []string
	var diff string
	run(t, ctx, "versions", chromedp.Click(`#b-versions`), chromedp.Poll(`document.querySelectorAll('#b-versions-panel .b-version').length === 2`, nil),
		chromedp.Evaluate(`[...document.querySelectorAll('#b-versions-panel .b-version')].map((v) => v.dataset.version + ' ' + v.querySelector('.b-v-who').textContent)`, &versions),
		chromedp.Click(`#b-versions-panel .b-version[data-version="1"] .b-v-diff`), chromedp.WaitVisible(`#b-versions-panel .b-diff`),
		chromedp.Text(`#b-versions-panel .b-diff`, &diff))
	require.Equal(t, []string{"2 " + auth.EnvKeyName, "1 (written outside weft)"}, versions, "newest first, each with who")
	require.Contains(t, diff, `-    { "id": "hello", "tool": "template", "inputs": { "text": "hi" } }`)
	require.Contains(t, diff, `+    { "id": "hello", "tool": "template", "inputs": { "text": "hi there" } }`)

	run(t, ctx, "restore the first", chromedp.Click(`#b-versions-panel .b-version[data-version="1"] .b-v-restore`))
	say("restored", "restored v1 of greet as version 3")
	run(t, ctx, "restored in the builder", chromedp.Poll(`document.querySelectorAll('#b-versions-panel .b-version').length === 3`, nil),
		chromedp.Evaluate(`window.__weftBuilder.exportText()`, &text))
	require.Equal(t, greetFile, text, "the builder holds the first version again")
	onDisk, err = os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, greetFile, string(onDisk), "and so does the file")

	// another saves meanwhile (version 4): this page's save from version 3 is refused, and says what to do
	c, token := loginAs(t, srv, keys["env"])
	other, err := json.Marshal(map[string]any{"content": strings.Replace(greetFile, `"hi"`, `"hello"`, 1), "base": 3})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPut, srv.URL+"/v1/workflows/greet", strings.NewReader(string(other)))
	require.NoError(t, err)
	req.Header.Set("X-CSRF-Token", token)
	resp, err := c.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, resp.StatusCode, body(t, resp))
	run(t, ctx, "a stale save", chromedp.Click(`.drawflow-node[data-step="hello"]`), chromedp.WaitVisible(`#f-inputs-text`),
		chromedp.SendKeys(`#f-inputs-text`, "!"), chromedp.Poll(`window.__weftBuilder.unsaved()`, nil), chromedp.Click(`#b-save`))
	refused := say("conflict", "not saved")
	require.Contains(t, refused, "changed since version 3: its current version is 4")
	require.Contains(t, refused, "What to do")
	u, _ = unsaved()
	require.True(t, u, "a refused save leaves the change unsaved (the guard stays)")
	onDisk, err = os.ReadFile(file)
	require.NoError(t, err)
	require.Contains(t, string(onDisk), `"hello"`, "the other's save stays")

	var disabled bool
	var note string
	run(t, ctx, "a runner", login("carl", "/build?from=greet"), chromedp.Evaluate(`document.getElementById('b-save').disabled`, &disabled),
		chromedp.Text(`#b-save-note`, &note))
	require.True(t, disabled, "a runner may not save")
	require.Contains(t, note, `saving needs the role "admin"; carl has the roles runner`)
}

func TestSaveAccessOfTheBuilderPage(t *testing.T) {
	srv := newConsole(t, console.Options{Client: lazyClient(t)})
	resp, err := srv.Client().Get(srv.URL + "/build")
	require.NoError(t, err)
	page := body(t, resp)
	require.Contains(t, page, `id="b-save"`)
	i := strings.Index(page, `data-builder="`)
	require.Positive(t, i)
	raw := page[i+len(`data-builder="`):]
	raw = raw[:strings.Index(raw, `"`)]
	var boot struct {
		Save console.SaveAccess `json:"save"`
	}
	require.NoError(t, json.Unmarshal([]byte(html.UnescapeString(raw)), &boot))
	require.False(t, boot.Save.May, "no workflows folder: nothing to save into")
	require.Contains(t, boot.Save.Why, "--workflows-dir")
}

// TestBuilderDownloadNamesTheFile: a new workflow renamed in its settings is downloaded under its
// name, not workflow.json; a file opened from the folder keeps the file's name.
func TestBuilderDownloadNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "greet.json"), []byte(greetFile), 0o644))
	srv := newConsole(t, console.Options{Client: lazyClient(t), WorkflowsDir: dir})
	ctx := chromium(t)
	var said string
	run(t, ctx, "a new workflow, renamed", chromedp.Navigate(srv.URL+"/build"), chromedp.Poll(`window.__weftBuilderReady === true`, nil),
		chromedp.Click(`#b-settings`), chromedp.WaitVisible(`#f-workflow-name`),
		chromedp.Evaluate(`(() => { const a = document.querySelector('#f-workflow-name'); a.focus(); a.select(); })()`, nil),
		chromedp.SendKeys(`#f-workflow-name`, "release-notes"),
		chromedp.Poll(`JSON.parse(window.__weftBuilder.exportText()).name === 'release-notes'`, nil),
		chromedp.Click(`#b-export`), chromedp.Poll(`document.getElementById('b-say').textContent.startsWith('downloaded')`, nil),
		chromedp.Text(`#b-say`, &said))
	require.Equal(t, "downloaded release-notes.json", said)
	run(t, ctx, "a file of the folder", chromedp.Navigate(srv.URL+"/build?from=greet"), chromedp.Poll(`window.__weftBuilderReady === true`, nil),
		chromedp.Click(`#b-export`), chromedp.Poll(`document.getElementById('b-say').textContent.startsWith('downloaded')`, nil),
		chromedp.Text(`#b-say`, &said))
	require.Equal(t, "downloaded greet.json", said)
}
