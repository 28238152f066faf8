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
func (r *run) replayCall(sr *stepRun, t agentTool, args map[string]any) (content string, failed, ok bool) {
	tool := t.Name()
	rec, ok := r.recorded[sr.cs.ID]
	if !ok || strings.HasPrefix(tool, runwire.HandoffToolPrefix) {
		return "", false, false
	}
	// a record holds the arguments as they ran: with the tool's canonical names and the
	// workflow's defaults (registryTool.Call)
	key, ran := callKey(tool, args), callKey(tool, r.ranWith(t, args))
	var same []int
	for i, c := range rec.GetCalls() {
		if k := callKey(tool, c.GetArguments().AsInterface()); c.GetTool() == tool && (k == key || k == ran) {
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

// ranWith is args as tool t runs them (registryTool.Call: the session's scope, the canonical
// names, the workflow's defaults), on a copy; args themselves for other tools.
func (r *run) ranWith(t agentTool, args map[string]any) any {
	rt, ok := t.(registryTool)
	if !ok {
		return args
	}
	cp := make(map[string]any, len(args))
	//workflowcheck:ignore the result does not depend on map order (copied)
	for k, v := range args {
		cp[k] = v
	}
	scoped, err := rt.withScope(cp)
	if err != nil {
		return args
	}
	canon, _ := rt.spec.Canonical(scoped)
	r.fillDefaults(rt.spec, canon)
	return canon
}
