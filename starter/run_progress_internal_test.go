package starter

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/events"
)

// TestRunPrintsARestartedAnswerOnALineOfItsOwn: weft run prints a model call's text as it
// streams; when it starts over (a worker died mid-answer, the call runs again) the new attempt's
// text goes on a line of its own that says the line above is discarded, and the answer is printed
// once there, never after the abandoned text.
func TestRunPrintsARestartedAnswerOnALineOfItsOwn(t *testing.T) {
	for _, tc := range []struct {
		name string
		evs  []events.Event
		want string
	}{
		{"one attempt", []events.Event{
			{Type: events.LLMDelta, Step: "answer", Activity: "answer#1", Attempt: 1, Text: "Retries "},
			{Type: events.LLMDelta, Step: "answer", Activity: "answer#1", Attempt: 1, Offset: 8, Text: "back off."},
		}, "  … answer: Retries back off.\n"},
		{"a worker died mid-answer", []events.Event{
			{Type: events.LLMDelta, Step: "answer", Activity: "answer#1", Attempt: 1, Text: "Retries back"},
			{Type: events.LLMDelta, Step: "answer", Activity: "answer#1", Attempt: 2, Restarted: true, Text: "Retries"},
			{Type: events.LLMDelta, Step: "answer", Activity: "answer#1", Attempt: 2, Offset: 7, Text: " back off."},
		}, "  … answer: Retries back\n  … answer (attempt 2, restarted: the text above is discarded): Retries back off.\n"},
		{"followed from the second attempt", []events.Event{
			{Type: events.LLMDelta, Step: "answer", Activity: "answer#1", Attempt: 2, Offset: 7, Text: " back off."},
		}, "  … answer (attempt 2):  back off.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			p := &progress{o: &runOptions{}, out: &out, id: "r"}
			for _, e := range tc.evs {
				p.event(e)
			}
			p.endStream()
			require.Equal(t, tc.want, out.String())
		})
	}
}
