package console_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/console"
)

const formsFile = `{"name":"forms","steps":[
 {"id":"search","tool":"search","inputs":{"query":"what is rag?","collection":"docs"}},
 {"id":"llm","tool":"llm","inputs":{"prompt":"say it"}},
 {"id":"template","tool":"template","inputs":{}},
 {"id":"ingest","tool":"ingest","inputs":{"text":"{{ template.output.text }}","collection":"docs"}},
 {"id":"rerank","tool":"rerank","inputs":{"query":"q","documents":"{{ search.output.results }}"}},
 {"id":"each","tool":"template","forEach":"{{ search.output.results }}","inputs":{"text":"x"}}]}`

// selectStep selects a step as a person does (a click on its node) and waits for its form.
func selectStep(t *testing.T, ctx context.Context, id string) {
	t.Helper()
	run(t, ctx, "select "+id, chromedp.Click(fmt.Sprintf(`.drawflow-node[data-step=%q] .b-node-sub`, id)),
		chromedp.Poll(fmt.Sprintf(`document.querySelector('#b-inspector h2').textContent === %q`, id), nil))
}

// pressEnter presses Enter as a keyboard does: one keydown that carries its text (a page that
// prevents the keydown's default gets no new line), then the keyup.
func pressEnter() chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		if err := input.DispatchKeyEvent(input.KeyDown).WithKey("Enter").WithCode("Enter").WithWindowsVirtualKeyCode(13).WithText("\r").Do(ctx); err != nil {
			return err
		}
		return input.DispatchKeyEvent(input.KeyUp).WithKey("Enter").WithCode("Enter").WithWindowsVirtualKeyCode(13).Do(ctx)
	})
}

// options are the references the open completion list offers.
func options(t *testing.T, ctx context.Context) []string {
	t.Helper()
	var out []string
	run(t, ctx, "options", chromedp.WaitVisible(`#b-refs [role=option]`),
		chromedp.Evaluate(`[...document.querySelectorAll('#b-refs [role=option]')].map((o) => o.textContent)`, &out))
	return out
}

// TestBuilderFormsKeepUpWithTheFile: a "missing required field" on a form goes once an edge fills
// the field; JSON typed into a field that held a reference is saved as the value it is; typing {{
// in a text box offers the references it may use (not itself or a step that reads it, {{ item }}
// in a forEach step) and puts the one picked at the caret, the rest of the text kept.
func TestBuilderFormsKeepUpWithTheFile(t *testing.T) {
	srv := newConsole(t, console.Options{Client: lazyClient(t)})
	ctx := chromium(t)
	run(t, ctx, "open", chromedp.Navigate(srv.URL+"/build"), chromedp.Poll(`window.__weftBuilderReady === true`, nil),
		chromedp.Evaluate(fmt.Sprintf(`window.__weftBuilder.importText(%s, 'forms.json')`, mustJS(formsFile)), nil),
		chromedp.WaitVisible(`.drawflow-node[data-step="template"]`))

	// the missing text is shown on the field, and goes when an edge fills it
	selectStep(t, ctx, "template")
	var msg string
	run(t, ctx, "missing", chromedp.WaitVisible(`.field.b-problem[data-field="inputs.text"]`),
		chromedp.Text(`.field[data-field="inputs.text"] .b-field-error`, &msg))
	require.Contains(t, msg, `"text"`)
	run(t, ctx, "link llm -> template", chromedp.Evaluate(`window.__weftBuilder.connect('llm', 'template')`, nil),
		chromedp.WaitVisible(`#b-valid.ok`),
		chromedp.Poll(`(() => { const f = document.querySelector('.field[data-field="inputs.text"]');
		  return f && !f.classList.contains('b-problem') && f.querySelector('.b-field-error').textContent === '' && f.querySelector('textarea').value === '{{ llm.output.text }}'; })()`, nil))

	// completion in the text box: what may be read, not template itself or ingest (it reads
	// template: a cycle); the one picked goes at the caret
	run(t, ctx, "caret", chromedp.Evaluate(`(() => { const a = document.querySelector('#f-inputs-text'); a.focus(); a.value = 'Answer:  Thanks'; a.setSelectionRange(8, 8); })()`, nil),
		chromedp.SendKeys(`#f-inputs-text`, "{{ "))
	offered := options(t, ctx)
	require.Contains(t, offered, "{{ llm.output.text }}")
	require.Contains(t, offered, "{{ search.output.results }}")
	for _, o := range offered {
		require.NotContains(t, o, "template.", "not itself")
		require.NotContains(t, o, "ingest.", "not a step that reads it")
		require.NotContains(t, o, "item", "not a forEach step")
	}
	run(t, ctx, "pick", chromedp.SendKeys(`#f-inputs-text`, "llm.output.te"),
		chromedp.Poll(`document.querySelectorAll('#b-refs [role=option]').length === 1`, nil),
		pressEnter(), chromedp.WaitNotVisible(`#b-refs`))
	require.Equal(t, "Answer: {{ llm.output.text }} Thanks", stepInputs(t, exported(t, ctx), "template")["text"])

	// a forEach step is offered the item and its fields
	selectStep(t, ctx, "each")
	run(t, ctx, "item", chromedp.Evaluate(`(() => { const a = document.querySelector('#f-inputs-text'); a.focus(); a.value = ''; })()`, nil),
		chromedp.SendKeys(`#f-inputs-text`, "{{ item"))
	offered = options(t, ctx)
	require.Contains(t, offered, "{{ item }}")
	require.Contains(t, offered, "{{ item.content }}", "the fields of search's results")

	// an array typed where a reference was is saved as an array, not as text
	selectStep(t, ctx, "rerank")
	run(t, ctx, "type an array", chromedp.Evaluate(`(() => { const a = document.querySelector('#f-inputs-documents'); a.focus(); a.value = ''; a.dispatchEvent(new Event('input')); })()`, nil),
		chromedp.SendKeys(`#f-inputs-documents`, `["a", "b"]`),
		chromedp.Poll(`Array.isArray(JSON.parse(window.__weftBuilder.exportText()).steps[4].inputs.documents)`, nil))
	require.Equal(t, []any{"a", "b"}, stepInputs(t, exported(t, ctx), "rerank")["documents"])
}
