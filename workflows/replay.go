package workflows

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weftworks/weft/runwire"
)

// callKey is how a replay matches an agent's tool call with a recorded one: the tool's name and
// its arguments as canonical JSON (keys sorted, as encoding/json writes a map).
func callKey(tool string, args any) string {
	b, err := json.Marshal(args)
	if err != nil {
		b = []byte("?")
	}
	return tool + " " + string(b)
}

// replayCall answers a tool call of agent step sr from the record a replay carries
// (RunRequest.recorded_calls): ok is false when the run does not replay sr (its call runs as
// always). A call the record holds (the same tool, the same arguments) gets the recorded
// answer: content, the text the model read then, or failed with content the recorded error;
// calls with the same tool and arguments take the recorded ones in order, and one past them the
// last. A call the record does not hold is not run: it fails as tool drift.
func (r *run) replayCall(sr *stepRun, tool string, args map[string]any) (content string, failed, ok bool) {
	rec, ok := r.recorded[sr.cs.ID]
	if !ok || strings.HasPrefix(tool, runwire.HandoffToolPrefix) {
		return "", false, false
	}
	key := callKey(tool, args)
	var same []int
	for i, c := range rec.GetCalls() {
		if c.GetTool() == tool && callKey(tool, c.GetArguments().AsInterface()) == key {
			same = append(same, i)
		}
	}
	if len(same) == 0 {
		return fmt.Sprintf("%s: run %s made no call of %s with these arguments, so the replay did not run it (a replay answers tool calls from the record only)",
			runwire.ToolDrift, r.resumedFrom, tool), true, true
	}
	n := min(r.replayed[sr.cs.ID+"\x00"+key], len(same)-1)
	r.replayed[sr.cs.ID+"\x00"+key]++
	c := rec.GetCalls()[same[n]]
	if c.GetError() != "" {
		return c.GetError(), true, true
	}
	if s, isText := c.GetResult().AsInterface().(string); isText {
		return s, false, true
	}
	b, _ := json.Marshal(c.GetResult().AsInterface())
	return string(b), false, true
}
