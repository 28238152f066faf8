package console_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestRunStreamRestartsAfterARetry: the run page shows a running model call's text as it streams;
// when the call starts over (its worker died mid-answer and another runs it again: the snapshot's
// streamingAttempt says attempt 2) the new attempt's text replaces what was shown, marked
// "restarted after a retry", and the answer is shown once, never after the abandoned text.
func TestRunStreamRestartsAfterARetry(t *testing.T) {
	def := `{"name":"answering","steps":[{"id":"answer","tool":"llm","inputs":{"prompt":"How do retries work?"}}]}`
	state := `{"workflow":"answering","status":"running","steps":[{"id":"answer","tool":"llm","status":"running","startedAt":"2025-01-01T10:00:00Z"}]}`
	ctx := liveRun(t, def, state)
	// snapshot sends the run page a snapshot of the running run with the step's streaming text
	snapshot := func(text string, attempt int) string {
		return fmt.Sprintf(`(() => { const v = JSON.parse(document.getElementById('run').dataset.run).snapshot;
		  v.streaming = { answer: %q }; if (%d > 1) v.streamingAttempt = { answer: %d };
		  for (const h of window.__es.on.snapshot || []) h({ data: JSON.stringify(v) }); })()`, text, attempt, attempt)
	}
	type shown struct {
		Text, Mark string
		Streams    int
	}
	read := `(() => { const p = [...document.querySelectorAll('#detail pre.stream')]; const m = document.querySelector('#detail .stream-restarted');
	  return { Text: p.map((x) => x.textContent).join(''), Streams: p.length, Mark: m ? m.textContent : '' }; })()`
	waitText := func(want string) chromedp.Action {
		return chromedp.Poll(fmt.Sprintf(`(() => { const p = document.querySelector('#detail pre.stream'); return !!p && p.textContent === %q; })()`, want), nil)
	}
	var first, restarted, later shown
	run(t, ctx, "two attempts", chromedp.Click(`svg#graph g.node[data-step="answer"]`), chromedp.WaitVisible(`#detail h2`),
		chromedp.Evaluate(snapshot("Retries back", 1), nil), waitText("Retries back"), chromedp.Evaluate(read, &first),
		chromedp.Evaluate(snapshot("Retries", 2), nil), waitText("Retries"), chromedp.Evaluate(read, &restarted),
		chromedp.Evaluate(snapshot("Retries back off.", 2), nil), waitText("Retries back off."), chromedp.Evaluate(read, &later))
	require.Equal(t, shown{Text: "Retries back", Streams: 1}, first, "the first attempt streams, unmarked")
	require.Equal(t, "Retries", restarted.Text, "the new attempt replaces the text shown, never appended to it")
	require.Equal(t, 1, restarted.Streams)
	require.Contains(t, restarted.Mark, "restarted after a retry (attempt 2)")
	require.Equal(t, "Retries back off.", later.Text, "the answer, once")
	require.Equal(t, 1, later.Streams)
	require.Contains(t, later.Mark, "restarted after a retry")
	shot(t, ctx, "run-stream-restarted")
}
