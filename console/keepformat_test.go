package console_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/console"
	"github.com/weftworks/weft/templates"
)

// diffLines counts the lines diff(1) says were taken out or put in between a and b.
func diffLines(t *testing.T, a, b string) int {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a"), []byte(a), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b"), []byte(b), 0o644))
	out, _ := exec.Command("diff", filepath.Join(dir, "a"), filepath.Join(dir, "b")).Output() // exit 1 when they differ
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "< ") || strings.HasPrefix(l, "> ") {
			n++
		}
	}
	return n
}

// TestBuilderExportKeepsTheFormat: a compact built-in file imported and exported unchanged is the
// same bytes; a one-field change made in the form is that one line of the file; a step added is
// appended and the rest stays as it was.
func TestBuilderExportKeepsTheFormat(t *testing.T) {
	tpl, err := templates.Get("approval-demo")
	require.NoError(t, err)
	src := string(tpl.Data)
	srv := newConsole(t, console.Options{Client: lazyClient(t)})
	ctx := chromium(t)
	var text string
	run(t, ctx, "import approval-demo", chromedp.Navigate(srv.URL+"/build"), chromedp.Poll(`window.__weftBuilderReady === true`, nil),
		chromedp.Evaluate(`window.__weftBuilder.importText(`+mustJS(src)+`, 'approval-demo.json')`, nil),
		chromedp.WaitVisible(`.drawflow-node[data-step="draft"]`),
		chromedp.Evaluate(`window.__weftBuilder.exportText()`, &text))
	require.Equal(t, src, text, "an unchanged export is byte-identical")

	run(t, ctx, "change one field", chromedp.Click(`.drawflow-node[data-step="draft"]`), chromedp.WaitVisible(`#f-inputs-text`),
		chromedp.SendKeys(`#f-inputs-text`, "Draft: "), // typed where the caret is: at the start
		chromedp.Poll(`window.__weftBuilder.exportText().includes('Draft: Release')`, nil),
		chromedp.Evaluate(`window.__weftBuilder.exportText()`, &text))
	n := diffLines(t, src, text)
	t.Logf("a one-field change of approval-demo (%d lines): %d diff lines, the export %d lines", strings.Count(src, "\n"), n, strings.Count(text, "\n"))
	require.Equal(t, 2, n, "the changed line out, the changed line in:\n%s", text)
	require.Equal(t, strings.Replace(src, `"text": "Release {{`, `"text": "Draft: Release {{`, 1), text, "nothing else moved")

	edited := text
	run(t, ctx, "add a step", chromedp.Focus(`.b-tool[data-tool="template"]`), chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(`.drawflow-node[data-step="template"]`),
		chromedp.Evaluate(`window.__weftBuilder.exportText()`, &text))
	require.True(t, strings.HasPrefix(text, edited[:strings.Index(edited, `    { "id": "published"`)]), "what comes before the new step is as it was:\n%s", text)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(text), &got))
	steps := got["steps"].([]any)
	require.Equal(t, "template", steps[len(steps)-1].(map[string]any)["id"], "the new step is appended")
	t.Logf("with a step added too: %d diff lines against the original, %d against the edited file", diffLines(t, src, text), diffLines(t, edited, text))
}

// TestBuilderVendoredJsoncParserMatchesItsChecksums: the vendored jsonc-parser is the pinned one
// (3.3.1, bundled as one IIFE), with its licence.
func TestBuilderVendoredJsoncParserMatchesItsChecksums(t *testing.T) {
	dir := filepath.Join("static", "vendor", "jsonc-parser")
	require.Equal(t, 2, vendoredMatchesItsSums(t, dir), "the script and its licence")
	b, err := os.ReadFile(filepath.Join(dir, "jsonc-parser.js"))
	require.NoError(t, err)
	require.Contains(t, string(b)[:300], "jsonc-parser 3.3.1", "the pinned version is in its header")
	require.Contains(t, string(b)[:300], "MIT License")
}
