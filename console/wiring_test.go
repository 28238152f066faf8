package console_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/console"
	"github.com/weftworks/weft/fixtures"
)

// wiringFile has steps of the tools the wiring tests link, none of them linked yet.
const wiringFile = `{"name":"wiring","output":{"printed":"{{ template.output.text }}"},"steps":[
 {"id":"llm","tool":"llm","inputs":{"prompt":"say it"}},
 {"id":"template","tool":"template","inputs":{}},
 {"id":"search","tool":"search","inputs":{"query":"what is rag?","collection":"docs"}},
 {"id":"rerank","tool":"rerank","inputs":{}},
 {"id":"similarity","tool":"similarity","inputs":{}},
 {"id":"chunk","tool":"chunk","inputs":{"text":"a long text"}},
 {"id":"embed","tool":"embed","inputs":{}}]}`

func stepInputs(t *testing.T, doc map[string]any, id string) map[string]any {
	t.Helper()
	for _, s := range doc["steps"].([]any) {
		if m := s.(map[string]any); m["id"] == id {
			in, _ := m["inputs"].(map[string]any)
			return in
		}
	}
	t.Fatalf("no step %s in %v", id, doc)
	return nil
}

// TestBuilderWiresTheContent: an edge drawn from llm to template writes llm's answer (text, not
// finishReason) into template's text, and a run of the exported file prints the answer; search ->
// rerank fills documents with the results and query with the search's query; chunk -> embed runs
// embed once per chunk; llm -> similarity asks which of text1 and text2, writes the one picked,
// and the next edge takes the other without asking.
func TestBuilderWiresTheContent(t *testing.T) {
	srv := newConsole(t, console.Options{Client: lazyClient(t)})
	ctx := chromium(t)
	var ok bool
	run(t, ctx, "open", chromedp.Navigate(srv.URL+"/build"), chromedp.Poll(`window.__weftBuilderReady === true`, nil),
		chromedp.Evaluate(fmt.Sprintf(`window.__weftBuilder.importText(%s, 'wiring.json')`, mustJS(wiringFile)), &ok),
		chromedp.WaitVisible(`.drawflow-node[data-step="template"]`))
	require.True(t, ok)

	// llm -> template, drawn between the handles
	ox, oy := center(t, ctx, `.drawflow-node[data-step="llm"] .output`)
	ix, iy := center(t, ctx, `.drawflow-node[data-step="template"] .input`)
	run(t, ctx, "draw llm -> template", dragMouse(ox, oy, ix, iy),
		chromedp.Poll(`JSON.parse(window.__weftBuilder.exportText()).steps[1].inputs.text !== undefined`, nil))
	doc := exported(t, ctx)
	require.Equal(t, "{{ llm.output.text }}", stepInputs(t, doc, "template")["text"], "the answer, not finishReason")

	var said string
	run(t, ctx, "search -> rerank", chromedp.Evaluate(`window.__weftBuilder.connect('search', 'rerank')`, &said))
	in := stepInputs(t, exported(t, ctx), "rerank")
	require.Equal(t, "{{ search.output.results }}", in["documents"], said)
	require.Equal(t, "{{ search.output.query }}", in["query"], said)

	run(t, ctx, "chunk -> embed", chromedp.Evaluate(`window.__weftBuilder.connect('chunk', 'embed')`, &said))
	doc = exported(t, ctx)
	require.Equal(t, "{{ item }}", stepInputs(t, doc, "embed")["text"], said)
	require.Equal(t, "{{ chunk.output.chunks }}", doc["steps"].([]any)[6].(map[string]any)["forEach"], said)

	// two inputs fit equally: the builder asks, and writes nothing until one is picked
	run(t, ctx, "llm -> similarity asks", chromedp.Evaluate(`window.__weftBuilder.connect('llm', 'similarity')`, &said),
		chromedp.WaitVisible(`#b-ask .b-ask-way[data-input="text2"]`))
	require.Contains(t, said, "which?")
	require.Empty(t, stepInputs(t, exported(t, ctx), "similarity"), "nothing written before the choice")
	var ways int
	run(t, ctx, "pick text2", chromedp.Evaluate(`document.querySelectorAll('#b-ask .b-ask-way').length`, &ways),
		chromedp.Click(`#b-ask .b-ask-way[data-input="text2"]`), chromedp.WaitNotVisible(`#b-ask`))
	require.Equal(t, 2, ways)
	require.Equal(t, map[string]any{"text2": "{{ llm.output.text }}"}, stepInputs(t, exported(t, ctx), "similarity"))
	run(t, ctx, "llm -> similarity again", chromedp.Evaluate(`window.__weftBuilder.connect('llm', 'similarity')`, &said))
	require.Equal(t, "{{ llm.output.text }}", stepInputs(t, exported(t, ctx), "similarity")["text1"], "one way left: no question")
	run(t, ctx, "valid", chromedp.WaitVisible(`#b-valid.ok`))

	// the exported file, run with llm answering "the answer" (finish reason "stop"), prints the answer
	var text string
	run(t, ctx, "export", chromedp.Evaluate(`window.__weftBuilder.exportText()`, &text))
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "wiring.json"), []byte(text), 0o644))
	fx, err := json.Marshal(map[string]any{"workflow": "wiring.json",
		"mocks": map[string]any{"llm": map[string]any{"text": "the answer", "finishReason": "stop"},
			"search": map[string]any{"query": "what is rag?", "results": []any{map[string]any{"source": "a.md", "content": "rag is"}}},
			"rerank": map[string]any{"results": []any{}}, "similarity": map[string]any{"similarity": 1}, "embed": map[string]any{"vector": []any{0.1}}},
		"expect": map[string]any{"noErrors": true, "output": map[string]any{"printed": "the answer"}}})
	require.NoError(t, err)
	res := fixtures.Run(filepath.Join(dir, "wiring.test.json"), fx)
	require.True(t, res.Passed(), "%v", res.Problems)
}

// TestBuilderAsksWhichInputOfADrawnEdge: an edge drawn by hand where two inputs fit equally asks
// which, with the first way focused; Cancel takes the drawn link away and writes nothing, and
// Enter on the focused way writes it.
func TestBuilderAsksWhichInputOfADrawnEdge(t *testing.T) {
	srv := newConsole(t, console.Options{Client: lazyClient(t)})
	ctx := chromium(t)
	file := `{"name":"ask","steps":[{"id":"llm","tool":"llm","inputs":{"prompt":"say it"}},{"id":"sim","tool":"similarity","inputs":{}}]}`
	run(t, ctx, "open", chromedp.Navigate(srv.URL+"/build"), chromedp.Poll(`window.__weftBuilderReady === true`, nil),
		chromedp.Evaluate(fmt.Sprintf(`window.__weftBuilder.importText(%s, 'ask.json')`, mustJS(file)), nil),
		chromedp.WaitVisible(`.drawflow-node[data-step="sim"]`))
	draw := func(name string) {
		ox, oy := center(t, ctx, `.drawflow-node[data-step="llm"] .output`)
		ix, iy := center(t, ctx, `.drawflow-node[data-step="sim"] .input`)
		run(t, ctx, name, dragMouse(ox, oy, ix, iy), chromedp.WaitVisible(`#b-ask .b-ask-way`),
			chromedp.Poll(`document.activeElement && document.activeElement.matches('#b-ask .b-ask-way')`, nil))
	}
	draw("draw, then cancel")
	run(t, ctx, "cancel", chromedp.Click(`#b-ask-cancel`), chromedp.WaitNotVisible(`#b-ask`), chromedp.WaitNotPresent(`.connection`))
	require.Empty(t, stepInputs(t, exported(t, ctx), "sim"))
	draw("draw, then pick")
	var first string
	run(t, ctx, "pick the focused way", chromedp.Evaluate(`document.activeElement.dataset.input`, &first), pressEnter(),
		chromedp.WaitNotVisible(`#b-ask`), chromedp.WaitVisible(`.connection`))
	require.Equal(t, "text1", first)
	require.Equal(t, map[string]any{"text1": "{{ llm.output.text }}"}, stepInputs(t, exported(t, ctx), "sim"))
}

// TestBuilderChooserAcrossUndo: the chooser of a drawn edge is open and the person presses Undo
// (the button, or Ctrl+Z): the edge waiting for an answer is the last thing done, so Undo takes
// it back (the chooser closes, nothing is linked) and leaves the change before it; the next Undo
// takes that back. A way picked after an Undo cannot link steps of a file that is gone.
func TestBuilderChooserAcrossUndo(t *testing.T) {
	srv := newConsole(t, console.Options{Client: lazyClient(t)})
	ctx := chromium(t)
	file := `{"name":"ask","steps":[{"id":"llm","tool":"llm","inputs":{"prompt":"say it"}},{"id":"sim","tool":"similarity","inputs":{}}]}`
	run(t, ctx, "open", chromedp.Navigate(srv.URL+"/build"), chromedp.Poll(`window.__weftBuilderReady === true`, nil),
		chromedp.Evaluate(fmt.Sprintf(`window.__weftBuilder.importText(%s, 'ask.json')`, mustJS(file)), nil),
		chromedp.WaitVisible(`.drawflow-node[data-step="sim"]`),
		chromedp.Click(`.drawflow-node[data-step="llm"]`), chromedp.WaitVisible(`#f-inputs-prompt`),
		chromedp.Evaluate(`(() => { const a = document.querySelector('#f-inputs-prompt'); a.focus(); a.setSelectionRange(a.value.length, a.value.length); })()`, nil),
		chromedp.SendKeys(`#f-inputs-prompt`, " now"),
		chromedp.Poll(`window.__weftBuilder.exportText().includes('say it now')`, nil))
	for _, undo := range []struct {
		name   string
		action chromedp.Action
	}{
		{"the Undo button", chromedp.Click(`#b-undo`)},
		{"Ctrl+Z", chromedp.KeyEvent("z", chromedp.KeyModifiers(input.ModifierCtrl))},
	} {
		ox, oy := center(t, ctx, `.drawflow-node[data-step="llm"] .output`)
		ix, iy := center(t, ctx, `.drawflow-node[data-step="sim"] .input`)
		var said string
		run(t, ctx, "draw, then "+undo.name, dragMouse(ox, oy, ix, iy), chromedp.WaitVisible(`#b-ask .b-ask-way`),
			undo.action, chromedp.WaitNotVisible(`#b-ask`), chromedp.WaitNotPresent(`.connection`),
			chromedp.Text(`#b-say`, &said))
		require.Contains(t, said, "not linked: llm → sim", undo.name)
		doc := exported(t, ctx)
		require.Empty(t, stepInputs(t, doc, "sim"), "%s: nothing linked", undo.name)
		require.Equal(t, "say it now", stepInputs(t, doc, "llm")["prompt"], "%s takes back the edge, not the edit before it", undo.name)
	}
	run(t, ctx, "the next Undo", chromedp.Click(`#b-undo`), chromedp.Poll(`!window.__weftBuilder.exportText().includes('say it now')`, nil))
	require.Equal(t, "say it", stepInputs(t, exported(t, ctx), "llm")["prompt"])

	// a file just opened has nothing to undo, but the drawn edge is: the Undo button takes it back
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ask.json"), []byte(file), 0o644))
	srv = newConsole(t, console.Options{Client: lazyClient(t), WorkflowsDir: dir})
	var before, during, after bool
	run(t, ctx, "open the file", chromedp.Navigate(srv.URL+"/build?from=ask"), chromedp.Poll(`window.__weftBuilderReady === true`, nil),
		chromedp.WaitVisible(`.drawflow-node[data-step="sim"]`), chromedp.Evaluate(`document.getElementById('b-undo').disabled`, &before))
	ox, oy := center(t, ctx, `.drawflow-node[data-step="llm"] .output`)
	ix, iy := center(t, ctx, `.drawflow-node[data-step="sim"] .input`)
	run(t, ctx, "draw, then Undo", dragMouse(ox, oy, ix, iy), chromedp.WaitVisible(`#b-ask .b-ask-way`),
		chromedp.Evaluate(`document.getElementById('b-undo').disabled`, &during),
		chromedp.Click(`#b-undo`), chromedp.WaitNotVisible(`#b-ask`), chromedp.WaitNotPresent(`.connection`),
		chromedp.Evaluate(`document.getElementById('b-undo').disabled`, &after))
	require.True(t, before, "nothing to undo in a file just opened")
	require.False(t, during, "the edge waiting in the chooser can be undone")
	require.True(t, after, "and then nothing again")
	require.Empty(t, stepInputs(t, exported(t, ctx), "sim"))
}
