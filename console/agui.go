package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/events"
)

// A run's events as AG-UI protocol events (https://docs.ag-ui.com), over server-sent events at
// /runs/{id}/agui, so that frontends built on AG-UI clients show weft runs and agents without
// code of their own. GET, or POST as AG-UI's HttpAgent sends its RunAgentInput (read and
// ignored: the stream follows a run that exists, it starts nothing, so it needs no CSRF token).
// Behind the console's login and its read rule (client.MayRead), like the run page.
//
// Mapping: run_started → RUN_STARTED and a STATE_SNAPSHOT (the run, its status and its steps'
// statuses); every change of that state after it (a step started or ended, the run's end) → a
// STATE_DELTA, a JSON Patch (RFC 6902) from the state sent before; step_started → STEP_STARTED; a
// step's end → STEP_FINISHED; a model call's text → TEXT_MESSAGE_START / CONTENT / END (one message
// per model call and text attempt: a retry or a repair starts a new message); an agent's tool call
// → TOOL_CALL_START / ARGS / END, then TOOL_CALL_RESULT; reviews → CUSTOM (name
// weft.review_requested / weft.review_decided); a text that starts over (a worker died mid-answer
// and the call was retried, or a repair) → CUSTOM weft.text_restarted naming the abandoned
// message (value.messageId) before the new one starts: a client drops that message's text;
// handoff, guardrail_tripped and mcp_session_lost → CUSTOM weft.handoff (from, to),
// weft.guardrail_tripped (guardrail, stage, reason) and weft.mcp_session_lost (server, reason),
// each value with its step (AG-UI has no standard event for them); run_completed → RUN_FINISHED with the run's output
// as result; run_failed → RUN_ERROR. Each event carries the
// run's sequence number as its SSE id; Last-Event-ID resumes after it.

// aguiEvent is one AG-UI event: its type and fields.
type aguiEvent map[string]any

// aguiTranslator turns one run's events into AG-UI events.
type aguiTranslator struct {
	run     string
	steps   map[string]string // status by step id
	started map[string]bool   // steps STEP_STARTED was sent for
	msgs    map[string]string // the open text message of a model call, by activity id
	attempt map[string]int32  // the text attempt of that message
	sent    map[string]any    // the state as last sent (nil: no STATE_SNAPSHOT yet)
	begun   bool              // an event was sent: RUN_STARTED (or a RUN_ERROR) opened the stream
	ended   bool              // the run's end was translated
}

func newAGUITranslator(run string) *aguiTranslator {
	return &aguiTranslator{run: run, steps: map[string]string{}, started: map[string]bool{}, msgs: map[string]string{}, attempt: map[string]int32{}}
}

// state returns the event that brings a client's state to the run's now: the first a
// STATE_SNAPSHOT, then a STATE_DELTA of what changed (none when nothing did).
func (t *aguiTranslator) state(status string) []aguiEvent {
	steps := map[string]string{}
	for id, s := range t.steps {
		steps[id] = s
	}
	now := map[string]any{"run": t.run, "status": status, "steps": steps}
	before := t.sent
	t.sent = now
	if before == nil {
		return []aguiEvent{{"type": "STATE_SNAPSHOT", "snapshot": now}}
	}
	if ops := statePatch(before, now); len(ops) > 0 {
		return []aguiEvent{{"type": "STATE_DELTA", "delta": ops}}
	}
	return nil
}

// statePatch is the JSON Patch (RFC 6902) from one state to the next: the status replaced, steps
// added, replaced or removed (in the order of their ids).
func statePatch(before, now map[string]any) []map[string]any {
	var ops []map[string]any
	if before["status"] != now["status"] {
		ops = append(ops, map[string]any{"op": "replace", "path": "/status", "value": now["status"]})
	}
	was, is := before["steps"].(map[string]string), now["steps"].(map[string]string)
	ids := make([]string, 0, len(was)+len(is))
	for id := range was {
		ids = append(ids, id)
	}
	for id := range is {
		if _, ok := was[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		path := "/steps/" + pointerToken(id)
		old, had := was[id]
		s, has := is[id]
		switch {
		case !had:
			ops = append(ops, map[string]any{"op": "add", "path": path, "value": s})
		case !has:
			ops = append(ops, map[string]any{"op": "remove", "path": path})
		case old != s:
			ops = append(ops, map[string]any{"op": "replace", "path": path, "value": s})
		}
	}
	return ops
}

// pointerToken escapes a key for a JSON Pointer (RFC 6901): ~ as ~0, / as ~1.
func pointerToken(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// endMessage closes the open message of a model call, if any.
func (t *aguiTranslator) endMessage(activity string) []aguiEvent {
	id, ok := t.msgs[activity]
	if !ok {
		return nil
	}
	delete(t.msgs, activity)
	return []aguiEvent{{"type": "TEXT_MESSAGE_END", "messageId": id}}
}

// endAll closes every open message (in a stable order).
func (t *aguiTranslator) endAll() []aguiEvent {
	acts := make([]string, 0, len(t.msgs))
	for a := range t.msgs {
		acts = append(acts, a)
	}
	sort.Strings(acts)
	var out []aguiEvent
	for _, a := range acts {
		out = append(out, t.endMessage(a)...)
	}
	return out
}

func protoValue(m proto.Message) any {
	if m == nil || !m.ProtoReflect().IsValid() {
		return nil
	}
	b, err := weftclient.ProtoJSON(m)
	if err != nil {
		return nil
	}
	var v any
	_ = json.Unmarshal(b, &v)
	return v
}

// translate returns the AG-UI events of one weft event. AG-UI clients reject a stream whose first
// event is not RUN_STARTED (or RUN_ERROR), so a stream that does not begin with the run's start (a
// Last-Event-ID resume, a run that does not exist) opens with one.
func (t *aguiTranslator) translate(e events.Event) []aguiEvent {
	out := t.event(e)
	if t.begun || len(out) == 0 {
		return out
	}
	t.begun = true
	if typ := out[0]["type"]; typ == "RUN_STARTED" || typ == "RUN_ERROR" {
		return out
	}
	return append([]aguiEvent{t.runStarted()}, out...)
}

func (t *aguiTranslator) runStarted() aguiEvent {
	return aguiEvent{"type": "RUN_STARTED", "threadId": t.run, "runId": t.run}
}

// event returns the AG-UI events of one weft event, as they follow RUN_STARTED.
func (t *aguiTranslator) event(e events.Event) []aguiEvent {
	switch e.Type {
	case events.RunStarted:
		if t.begun {
			return t.state("running") // AG-UI clients reject a second RUN_STARTED
		}
		return append([]aguiEvent{t.runStarted()}, t.state("running")...)
	case events.StepStarted:
		if t.started[e.Step] {
			return nil // AG-UI clients reject STEP_STARTED for a step that is still active
		}
		t.steps[e.Step], t.started[e.Step] = "running", true
		return append([]aguiEvent{{"type": "STEP_STARTED", "stepName": e.Step}}, t.state("running")...)
	case events.StepCompleted, events.StepFailed, events.StepSkipped, events.StepCancelled:
		status := e.Type[len("step_"):]
		if e.StepState != nil && e.StepState.Status != "" {
			status = e.StepState.Status
		}
		t.steps[e.Step] = status
		var out []aguiEvent
		if t.started[e.Step] {
			delete(t.started, e.Step)
			out = append(out, aguiEvent{"type": "STEP_FINISHED", "stepName": e.Step})
		}
		return append(out, t.state("running")...)
	case events.LLMDelta:
		if e.Text == "" {
			return nil
		}
		var out []aguiEvent
		abandoned := ""
		if old, open := t.msgs[e.Activity]; open && e.Attempt > t.attempt[e.Activity] {
			// a retry (a worker died mid-answer) or a repair: the text starts over in a new
			// message, and the one before is named as abandoned
			out = append(out, t.endMessage(e.Activity)...)
			abandoned = old
		}
		if _, open := t.msgs[e.Activity]; !open {
			id := e.Activity
			if e.Attempt > 1 {
				id += "/attempt-" + strconv.Itoa(int(e.Attempt))
			}
			t.msgs[e.Activity], t.attempt[e.Activity] = id, e.Attempt
			if abandoned != "" {
				out = append(out, custom(e, "text_restarted", map[string]any{"messageId": abandoned, "replacedBy": id, "attempt": e.Attempt}))
			}
			out = append(out, aguiEvent{"type": "TEXT_MESSAGE_START", "messageId": id, "role": "assistant"})
		}
		return append(out, aguiEvent{"type": "TEXT_MESSAGE_CONTENT", "messageId": t.msgs[e.Activity], "delta": e.Text})
	case events.LLMFinished:
		return t.endMessage(e.Activity)
	case events.ToolCallStarted:
		if e.Call == nil {
			return nil
		}
		args := "{}"
		if v := protoValue(e.Call.Arguments); v != nil {
			args = string(mustJSON(v))
		}
		return []aguiEvent{
			{"type": "TOOL_CALL_START", "toolCallId": e.Call.Id, "toolCallName": e.Call.Tool},
			{"type": "TOOL_CALL_ARGS", "toolCallId": e.Call.Id, "delta": args},
			{"type": "TOOL_CALL_END", "toolCallId": e.Call.Id},
		}
	case events.ToolCallFinished:
		if e.Call == nil {
			return nil
		}
		content := e.Call.Error
		if content == "" {
			content = string(mustJSON(protoValue(e.Call.Result)))
		}
		return []aguiEvent{{"type": "TOOL_CALL_RESULT", "messageId": "result-" + e.Call.Id, "toolCallId": e.Call.Id, "content": content, "role": "tool"}}
	case events.ReviewRequested, events.ReviewDecided:
		v := map[string]any{"step": e.Step, "review": protoValue(e.Review)}
		if e.Decision != "" {
			v["decision"], v["reviewer"] = e.Decision, e.Reviewer
		}
		return []aguiEvent{{"type": "CUSTOM", "name": "weft." + e.Type, "value": v}}
	case events.Handoff:
		return []aguiEvent{custom(e, e.Type, map[string]any{"from": e.From, "to": e.To})}
	case events.GuardrailTripped:
		return []aguiEvent{custom(e, e.Type, map[string]any{"guardrail": e.Guardrail, "stage": e.Stage, "reason": e.Reason})}
	case events.MCPSessionLost:
		return []aguiEvent{custom(e, e.Type, map[string]any{"server": e.Server, "reason": e.Reason})}
	case events.RunCompleted:
		t.ended = true
		out := append(t.endAll(), t.state("completed")...)
		fin := aguiEvent{"type": "RUN_FINISHED", "threadId": t.run, "runId": t.run}
		if e.Result != nil {
			if v := protoValue(e.Result.Output); v != nil {
				fin["result"] = v
			}
		}
		return append(out, fin)
	case events.RunFailed:
		t.ended = true
		if !t.begun {
			// Nothing was sent (a run that does not exist): RUN_ERROR alone, as AG-UI allows.
			return []aguiEvent{{"type": "RUN_ERROR", "message": e.Error, "code": "run_failed"}}
		}
		status := e.Status // how it ended, as every surface says it (a cancelled run is not failed)
		if status == "" {
			status = weftclient.RunFailed
		}
		out := append(t.endAll(), t.state(status)...)
		return append(out, aguiEvent{"type": "RUN_ERROR", "message": e.Error, "code": "run_" + status})
	}
	return nil
}

// custom is the AG-UI CUSTOM event weft.NAME of e, its value v with the step (its key and the
// agent's iteration when e has them) added.
func custom(e events.Event, name string, v map[string]any) aguiEvent {
	v["step"] = e.Step
	if e.Key != "" && e.Key != e.Step {
		v["key"] = e.Key
	}
	if e.Iteration > 0 {
		v["iteration"] = e.Iteration
	}
	return aguiEvent{"type": "CUSTOM", "name": "weft." + name, "value": v}
}

// agui streams run id's events as AG-UI events until the run ends or the client goes away.
func (s *Server) agui(w http.ResponseWriter, r *http.Request, sess *session) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "streaming is not supported by this connection")
		return
	}
	id := r.PathValue("id")
	if !s.mayRead(w, r, sess, id) {
		return
	}
	var since int64
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("Last-Event-ID %q: want the sequence number of the last event received", v))
			return
		}
		since = n
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	t := newAGUITranslator(id)
	_, err := s.o.Client.Stream(r.Context(), id, weftclient.StreamOptions{Since: since}, func(e events.Event) {
		for _, a := range t.translate(e) {
			if e.Seq > 0 {
				_, _ = fmt.Fprintf(w, "id: %d\n", e.Seq)
			}
			_, _ = fmt.Fprintf(w, "data: %s\n\n", mustJSON(a))
		}
		fl.Flush()
	})
	if err != nil && r.Context().Err() == nil && !t.ended {
		// The stream broke before the run ended (a run that does not exist, a lost connection).
		_, _ = fmt.Fprintf(w, "data: %s\n\n", mustJSON(aguiEvent{"type": "RUN_ERROR", "message": weftclient.Cause(err), "code": "stream"}))
		fl.Flush()
	}
}
