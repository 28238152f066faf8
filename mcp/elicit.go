package mcp

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/events"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// Reviews inside the client (MCP elicitation).
//
// When a tool call that waits for its run (a wf_ tool, weft_run_workflow with wait, a knowledge
// tool that runs as an execution) sees the run pause for a review, and the client declared the
// elicitation capability, and the caller's key may review (the reviewer role, and the gate's
// reviewers list it), the gateway asks the person: the review's title, instructions and data in
// the message, and a flat form (requestedSchema) with
//
//   - decision: approve | edit | reject (required),
//   - comment,
//   - for edit, one field "data.NAME" per top-level field of the data (from the review's schema,
//     else from the data's own shape), filled with the current value. Fields the schema types
//     as string, number, integer or boolean are form fields of that type (enum, bounds, title and
//     description kept); a string whose choices have titles (oneOf or anyOf of {const, title}) is
//     a titled single-select (oneOf); an array of string choices (items with an enum, or oneOf or
//     anyOf of {const, title}) is a multi-select (items enum or anyOf, minItems and maxItems
//     kept). Other objects, arrays and anything else are string fields holding the value as
//     JSON, parsed on return (MCP elicitation forms have primitive fields and multi-selects
//     only). Data that is not an object is one JSON field "data". An answer outside a field's
//     choices is asked again with the choices.
//
// The answer is recorded through client.Review under the key's identity (never a name from the
// form), bound to the digest of the data shown. An answer that cannot be recorded (invalid JSON,
// data the review's schema refuses) is asked again with the reason. Declined or cancelled, the
// review stays pending and the call returns at once with the execution id and the pending
// review. Clients without the capability, and keys that may not review, get the answer they got
// before (the call waits, then says the run is still running).
//
// Two protocol eras:
//   - before 2026-07-28 (sessions, stdio): the gateway sends elicitation/create during the call
//     (server.RequestElicitation) and goes on following the run once it is decided. Over HTTP a
//     session's tool call is served on a call session of its own (hygiene.go): the client's
//     answer, posted with the session's id, is routed to the call asking (keySessions.asking),
//     and a session's calls ask one at a time.
//   - 2026-07-28 and later (no server-initiated requests): the call returns an input_required
//     result (SEP-2322) with the form and a signed requestState naming the run and the gate; the
//     client retries the call with the answer, and the gateway records it and follows the same
//     run (it does not start another).

// elicitationKey names the gateway's one input request in an input_required result.
const elicitationKey = "review"

// askStateTTL is how long an input_required result's requestState is honoured.
const askStateTTL = 24 * time.Hour

// maxAsks bounds how often one pause is asked about again after an answer that could not be
// recorded (before 2026-07-28; newer clients bound their own retries).
const maxAsks = 3

// asking is what a tool call that may ask its client about reviews carries in its context.
type asking struct {
	modern bool      // answer with input_required instead of sending elicitation/create
	resume *askState // the run this (retried) call follows instead of starting one
	since  int64     // the last event of the run seen
	ended  int       // steps ended so far (progress)
	// set by the wait: the gate to ask about (modern), or the gate left pending (declined)
	paused  *weftv1.ReviewRequest
	pending *weftv1.ReviewRequest
	run     string
}

type askingKey struct{}

func askFrom(ctx context.Context) *asking {
	a, _ := ctx.Value(askingKey{}).(*asking)
	return a
}

// askState is the requestState of an input_required result: which run and gate the answer is
// for, who was asked, and where the following stopped. It is signed with the gateway's secret:
// the client echoes it back, it cannot forge one.
type askState struct {
	Run    string `json:"run"`
	Gate   string `json:"gate"`
	Key    string `json:"key"`
	Tool   string `json:"tool"`
	Since  int64  `json:"since"`
	Ended  int    `json:"ended"`
	Expiry int64  `json:"exp"`
}

func newSecret() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return b
}

func (g *Gateway) sealState(s askState) string {
	b, _ := json.Marshal(s)
	mac := hmac.New(sha256.New, g.secret)
	mac.Write(b)
	return base64.RawURLEncoding.EncodeToString(b) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func (g *Gateway) openState(ctx context.Context, sealed, tool string) (*askState, error) {
	body, sig, ok := strings.Cut(sealed, ".")
	b, err1 := base64.RawURLEncoding.DecodeString(body)
	want, err2 := base64.RawURLEncoding.DecodeString(sig)
	mac := hmac.New(sha256.New, g.secret)
	mac.Write(b)
	var s askState
	if !ok || err1 != nil || err2 != nil || !hmac.Equal(mac.Sum(nil), want) || json.Unmarshal(b, &s) != nil {
		return nil, errors.New("the requestState of this call was not issued by this gateway (or it restarted since): find the run with weft_executions and decide its review with weft_review")
	}
	_, by := startedBy(ctx)
	switch {
	case s.Key != by:
		return nil, errors.New("the requestState of this call was issued to another key: decide the review with weft_review")
	case s.Tool != tool:
		return nil, fmt.Errorf("the requestState of this call belongs to %s, not %s: retry that tool", s.Tool, tool)
	case time.Now().Unix() > s.Expiry:
		return nil, fmt.Errorf("the requestState of this call expired: decide the review of execution %s with weft_review", s.Run)
	}
	return &s, nil
}

// clientCaps remembers which sessions' clients declared elicitation at initialize (a session's
// tool calls are served on call sessions of their own, which do not know it).
type clientCaps struct{ elicit sync.Map } // session id -> true

func (c *clientCaps) afterInitialize(ctx context.Context, _ any, req *mcplib.InitializeRequest, _ *mcplib.InitializeResult) {
	if s := server.ClientSessionFromContext(ctx); s != nil && s.SessionID() != "" && formElicitation(req.Params.Capabilities.Elicitation) {
		c.elicit.Store(s.SessionID(), true)
	}
}

func (c *clientCaps) forget(_ context.Context, s server.ClientSession) {
	c.elicit.Delete(s.SessionID())
}

// formElicitation: a client's elicitation capability includes forms ({} means forms).
func formElicitation(e *mcplib.ElicitationCapability) bool {
	return e != nil && (e.Form != nil || e.URL == nil)
}

// mayAsk says whether ctx's call may ask its client about reviews: the key may review, and the
// client declared form elicitation (in the request from 2026-07-28 on, at initialize before).
func (g *Gateway) mayAsk(ctx context.Context) *asking {
	if _, ok := permitted(ctx, auth.RoleReviewer); !ok {
		return nil
	}
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		if info.ClientCapabilities == nil || !formElicitation(info.ClientCapabilities.Elicitation) {
			return nil
		}
		return &asking{modern: true}
	}
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok && formElicitation(s.GetClientCapabilities().Elicitation) {
		return &asking{} // stdio: the session itself knows
	}
	if sid := callSession(ctx); sid != "" {
		if _, ok := g.caps.elicit.Load(sid); ok {
			return &asking{}
		}
	}
	return nil // a stateless request: nothing could carry the question to it
}

// reviewsInClient is the tool middleware that asks about reviews (see the top of this file).
func (g *Gateway) reviewsInClient(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcplib.CallToolRequest) (*mcplib.CallToolResult, error) {
		ask := g.mayAsk(ctx)
		if ask == nil {
			return next(ctx, req)
		}
		if sealed := req.Params.RequestState; sealed != "" {
			s, err := g.openState(ctx, sealed, req.Params.Name)
			if err != nil {
				return mcplib.NewToolResultError(err.Error()), nil
			}
			c, err := g.temporal(ctx)
			if err != nil {
				return mcplib.NewToolResultError(err.Error()), nil
			}
			gate, err := g.pendingGate(ctx, c, s.Run, s.Gate)
			if err != nil {
				return mcplib.NewToolResultError(err.Error()), nil
			}
			if gate != nil { // nil: decided meanwhile (weft_review, the console): follow the run
				answer := server.ElicitationResponse(req.Params.InputResponses, elicitationKey)
				if answer == nil || answer.Action != mcplib.ElicitationResponseActionAccept {
					return pendingAnswer(s.Run, gate), nil
				}
				if note, fresh, err := g.answer(ctx, c, s.Run, gate, answer.Content); note != "" {
					if err != nil || fresh == nil {
						return mcplib.NewToolResultError(fmt.Sprintf("review %s of execution %s: %s", s.Gate, s.Run, note)), nil
					}
					return g.inputRequired(ctx, req.Params.Name, s.Run, fresh, note, s.Since, s.Ended), nil
				}
			}
			ask.resume, ask.since, ask.ended = s, s.Since, s.Ended
		}
		res, err := next(context.WithValue(ctx, askingKey{}, ask), req)
		if err != nil || res == nil || res.IsError {
			return res, err
		}
		switch {
		case ask.paused != nil:
			return g.inputRequired(ctx, req.Params.Name, ask.run, ask.paused, "", ask.since, ask.ended), nil
		case ask.pending != nil:
			return pendingAnswer(ask.run, ask.pending), nil
		}
		return res, nil
	}
}

// await follows run id for at most wait, like start does, and asks about the reviews it pauses
// for.
func (g *Gateway) await(ctx context.Context, c *weftclient.Client, id string, steps int, wait time.Duration, ask *asking) (*weftv1.RunResult, string, error) {
	ask.run = id
	rep := g.reporterFor(ctx, steps)
	if rep != nil {
		rep.ended = ask.ended
	}
	for {
		wctx, cancel := context.WithTimeout(ctx, wait)
		res, gate, err := g.follow(wctx, ctx, c, id, rep, ask)
		cancel()
		if rep != nil {
			ask.ended = rep.ended
		}
		if err != nil {
			if waitRanOut(ctx, err) {
				return nil, id, nil // still running
			}
			return nil, id, fmt.Errorf("execution %s failed: %s", id, weftclient.Cause(err))
		}
		if gate == nil {
			return res, id, nil
		}
		if ask.modern {
			ask.paused = gate // the middleware answers input_required
			return nil, id, nil
		}
		if !g.askNow(ctx, c, id, gate) {
			ask.pending = gate
			return nil, id, nil
		}
	}
}

// follow streams run id's events from ask.since until it ends (its result) or pauses for a
// review this caller may decide (that gate). Pauses for reviews others decide are waited out.
func (g *Gateway) follow(wctx, ctx context.Context, c *weftclient.Client, id string, rep *reporter, ask *asking) (*weftv1.RunResult, *weftv1.ReviewRequest, error) {
	for {
		sctx, stop := context.WithCancel(wctx)
		paused := false
		res, err := c.Stream(sctx, id, weftclient.StreamOptions{NoDeltas: true, Since: ask.since}, func(e events.Event) {
			if e.Seq > 0 {
				ask.since = e.Seq
			}
			if rep != nil {
				rep.event(e)
			}
			if e.Type == events.ReviewRequested {
				paused = true
				stop()
			}
		})
		stop()
		if !paused || (err == nil && res != nil) {
			return res, nil, err
		}
		if wctx.Err() != nil {
			return nil, nil, wctx.Err() // the wait ran out as the run paused
		}
		gate, perr := g.askable(ctx, c, id)
		if perr != nil {
			return nil, nil, perr
		}
		if gate != nil {
			return nil, gate, nil
		}
	}
}

// askable is the first pending gate of run id (its children's included) the caller may decide.
func (g *Gateway) askable(ctx context.Context, c *weftclient.Client, id string) (*weftv1.ReviewRequest, error) {
	pending, err := c.Pending(ctx, id)
	if err != nil {
		return nil, err
	}
	for _, r := range pending {
		if weftclient.MayDecide(caller(ctx), r) {
			return r, nil
		}
	}
	return nil, nil
}

// pendingGate is gate id of run if it is still pending, nil if not.
func (g *Gateway) pendingGate(ctx context.Context, c *weftclient.Client, run, id string) (*weftv1.ReviewRequest, error) {
	pending, err := c.Pending(ctx, run)
	if err != nil {
		return nil, err
	}
	for _, r := range pending {
		if r.Id == id {
			return r, nil
		}
	}
	return nil, nil
}

// askNow asks with elicitation/create (clients before 2026-07-28) and records the answer;
// false when the person declined or cancelled, or the question could not be asked.
func (g *Gateway) askNow(ctx context.Context, c *weftclient.Client, run string, gate *weftv1.ReviewRequest) bool {
	note := ""
	for range maxAsks {
		params, err := elicitation(ctx, run, gate, note)
		if err != nil {
			g.o.Log.Warn("review not asked in the client", "execution", run, "review", gate.Id, "error", err)
			return false
		}
		release, err := g.sessions.asking(ctx, callSession(ctx), server.ClientSessionFromContext(ctx))
		if err != nil {
			return false
		}
		answer, err := g.srv.RequestElicitation(ctx, mcplib.ElicitationRequest{Request: mcplib.Request{Method: string(mcplib.MethodElicitationCreate)}, Params: params})
		release()
		if err != nil {
			g.o.Log.Warn("review not asked in the client", "execution", run, "review", gate.Id, "error", err)
			return false
		}
		if answer.Action != mcplib.ElicitationResponseActionAccept {
			return false
		}
		var fresh *weftv1.ReviewRequest
		if note, fresh, err = g.answer(ctx, c, run, gate, answer.Content); note == "" {
			return true
		}
		if err != nil || fresh == nil {
			return err == nil // decided meanwhile: follow the run
		}
		gate = fresh
	}
	return false
}

// answer records the form's answer to gate of run (decide). When it could not be, note says why
// and the gate is read again: fresh is it if still pending (nil: decided meanwhile), err a
// failed read.
func (g *Gateway) answer(ctx context.Context, c *weftclient.Client, run string, gate *weftv1.ReviewRequest, content any) (note string, fresh *weftv1.ReviewRequest, err error) {
	if note = g.decide(ctx, c, run, gate, content); note == "" {
		return "", nil, nil
	}
	fresh, err = g.pendingGate(ctx, c, run, gate.Id)
	return note, fresh, err
}

// inputRequired is the 2026-07-28 answer: the form, and the state the retry brings back.
func (g *Gateway) inputRequired(ctx context.Context, tool, run string, gate *weftv1.ReviewRequest, note string, since int64, ended int) *mcplib.CallToolResult {
	params, err := elicitation(ctx, run, gate, note)
	if err != nil {
		return pendingAnswer(run, gate)
	}
	_, by := startedBy(ctx)
	state := g.sealState(askState{Run: run, Gate: gate.Id, Key: by, Tool: tool, Since: since, Ended: ended, Expiry: time.Now().Add(askStateTTL).Unix()})
	return server.NewInputRequestBuilder(state).Elicit(elicitationKey, params).ToolResult()
}

// pendingAnswer is the call's answer when the person did not decide: the run waits.
func pendingAnswer(run string, gate *weftv1.ReviewRequest) *mcplib.CallToolResult {
	b, _ := weftclient.ProtoJSON(gate)
	return result(runAnswer{ExecutionID: run, Status: weftclient.RunAwaitingReview, PendingReviews: []any{asJSON(b)},
		Hint: "the run waits for this review: decide it with weft_review (the review was not decided in the client)"})
}

// decide records the form's answer through client.Review under the caller's identity; it
// returns why it could not ("" when recorded).
func (g *Gateway) decide(ctx context.Context, c *weftclient.Client, run string, gate *weftv1.ReviewRequest, content any) string {
	form, _ := content.(map[string]any)
	decision, _ := form["decision"].(string)
	comment, _ := form["comment"].(string)
	d := weftclient.Decision{ID: gate.Id, Decision: decision, Comment: comment, Digest: gate.Digest}
	if always, _ := form["always"].(bool); always && gate.Kind == runwire.GateToolCall {
		if decision == "edit" {
			return "\"for the rest of the run\" is for approve or reject; an edit is for this call only: untick it or choose approve or reject"
		}
		d.Scope = runwire.ScopeRun
	}
	if who, ok := auth.IdentityFrom(ctx); ok {
		d.By = &who
	} else {
		d.Reviewer = "operator (MCP client)" // stdio: nobody authenticated
	}
	switch decision {
	case "approve", "reject":
	case "edit":
		data, err := editedData(gate, form)
		if err != nil {
			return err.Error()
		}
		d.Data = data
	default:
		return fmt.Sprintf("choose a decision: approve, edit or reject (got %q)", decision)
	}
	if _, err := c.Review(ctx, run, d); err != nil {
		return err.Error()
	}
	return ""
}

// A formField is one data field of the edit form.
type formField struct {
	name   string // the form's property: "data.NAME", or "data" for the whole value
	key    string // the data's field ("" : the whole value)
	asJSON bool
	schema map[string]any
	// a select's choices (nil: not a select), their titles (titled choices), and for a
	// multi-select (a list of choices) how many may be chosen (-1: no bound)
	choices            []string
	titles             map[string]string
	multi              bool
	minItems, maxItems int
}

// dataPrefix starts the names of the form's data fields.
const dataPrefix = "data."

// formFields maps a gate's data (and schema) onto flat form fields.
func formFields(gate *weftv1.ReviewRequest) []formField {
	data := gate.GetData().AsInterface()
	schema, _ := gate.GetSchema().AsInterface().(map[string]any)
	obj, isObj := data.(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	if !isObj && (data != nil || len(props) == 0) {
		return []formField{jsonField("data", "", data, schema)}
	}
	names := map[string]bool{}
	for k := range obj {
		names[k] = true
	}
	for k := range props {
		names[k] = true
	}
	keys := make([]string, 0, len(names))
	for k := range names {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []formField
	for _, k := range keys {
		ps, _ := props[k].(map[string]any)
		if f, ok := primitiveField(k, obj[k], ps); ok {
			out = append(out, f)
			continue
		}
		out = append(out, jsonField(dataPrefix+k, k, obj[k], ps))
	}
	return out
}

// primitiveField is a typed form field for a string, number, integer or boolean field, or a
// multi-select for an array of string choices.
func primitiveField(key string, v any, ps map[string]any) (formField, bool) {
	typ, _ := ps["type"].(string)
	if ps == nil {
		switch v.(type) {
		case string:
			typ = "string"
		case float64:
			typ = "number"
		case bool:
			typ = "boolean"
		}
	}
	if _, has, ok := choicesOf(ps); typ == "" && has && ok {
		typ = "string" // choices of strings say the type
	}
	f := formField{name: dataPrefix + key, key: key}
	s := map[string]any{"type": typ, "title": key}
	switch typ {
	case "string":
		c, has, ok := choicesOf(ps)
		if has && !ok {
			return formField{}, false // a form's choices are strings
		}
		if has {
			f.choices, f.titles = c.consts, c.titles
			if c.titled != nil {
				s["oneOf"] = c.titled
			} else {
				s["enum"] = c.enum
			}
		}
		for _, k := range []string{"minLength", "maxLength"} {
			if n, ok := ps[k].(float64); ok {
				s[k] = n
			}
		}
		if f, ok := ps["format"].(string); ok && (f == "email" || f == "uri" || f == "date" || f == "date-time") {
			s["format"] = f
		}
		if str, ok := v.(string); ok {
			s["default"] = str
		}
	case "number", "integer":
		for _, k := range []string{"minimum", "maximum"} {
			if n, ok := ps[k].(float64); ok {
				s[k] = n
			}
		}
		if n, ok := v.(float64); ok && (typ == "number" || n == math.Trunc(n)) {
			s["default"] = n
		}
	case "boolean":
		if b, ok := v.(bool); ok {
			s["default"] = b
		}
	case "array":
		items, _ := ps["items"].(map[string]any)
		c, has, ok := choicesOf(items)
		if it, _ := items["type"].(string); !has || !ok || (it != "" && it != "string") {
			return formField{}, false // not a list of choices: a JSON field
		}
		f.choices, f.titles, f.multi, f.minItems, f.maxItems = c.consts, c.titles, true, -1, -1
		if c.titled != nil {
			s["items"] = map[string]any{"anyOf": c.titled}
		} else {
			s["items"] = map[string]any{"type": "string", "enum": c.enum}
		}
		for k, n := range map[string]*int{"minItems": &f.minItems, "maxItems": &f.maxItems} {
			if m, ok := ps[k].(float64); ok && m >= 0 && m == math.Trunc(m) {
				s[k], *n = m, int(m)
			}
		}
		if list, ok := v.([]any); ok && f.check(list) == nil {
			s["default"] = list // the current choices (a value outside them is not offered)
		}
	default:
		return formField{}, false
	}
	if t, ok := ps["title"].(string); ok && t != "" {
		s["title"] = t
	}
	if d, ok := ps["description"].(string); ok && d != "" {
		s["description"] = d
	}
	f.schema = s
	return f, true
}

// choiceSet is a schema's string choices: an enum (untitled), or oneOf or anyOf of
// {const, title} or an enum with enumNames (titled; a choice without a title is titled with
// itself).
type choiceSet struct {
	consts []string
	enum   []any             // the enum as given (untitled)
	titled []any             // {const, title} entries (titled)
	titles map[string]string // const -> title (titled)
}

// choicesOf reads the choices of a field's schema: has says the schema gives choices, ok that
// they are all non-empty strings (the only choices a form has). An enum with enumNames (the
// older way to title choices) is titled choices.
func choicesOf(ps map[string]any) (c choiceSet, has, ok bool) {
	if enum, isList := ps["enum"].([]any); isList {
		titled := true
		for _, e := range enum {
			str, isStr := e.(string)
			if !isStr {
				return choiceSet{}, true, false
			}
			c.consts = append(c.consts, str)
			titled = titled && str != ""
		}
		names, isList := ps["enumNames"].([]any)
		if !titled || !isList || len(names) != len(enum) {
			c.enum = enum
			return c, true, true
		}
		// titled the older way (enumNames, deprecated since 2025-11-25): read as oneOf
		opts := make([]any, len(enum))
		for i, e := range enum {
			opts[i] = map[string]any{"const": e, "title": names[i]}
		}
		ps, c = map[string]any{"oneOf": opts}, choiceSet{}
	}
	opts, isList := ps["oneOf"].([]any)
	if !isList {
		opts, isList = ps["anyOf"].([]any)
	}
	if !isList || len(opts) == 0 {
		return choiceSet{}, false, false
	}
	for _, o := range opts {
		if m, _ := o.(map[string]any); m == nil || m["const"] == nil {
			return choiceSet{}, false, false // alternatives, not choices
		}
	}
	c.titles = map[string]string{}
	for _, o := range opts {
		m := o.(map[string]any)
		str, isStr := m["const"].(string)
		if !isStr || str == "" {
			return choiceSet{}, true, false
		}
		title, _ := m["title"].(string)
		if title == "" {
			title = str
		}
		c.consts = append(c.consts, str)
		c.titled = append(c.titled, map[string]any{"const": str, "title": title})
		c.titles[str] = title
	}
	return c, true, true
}

// check says why an answer is not among a select's choices (nil: it is).
func (f formField) check(answer any) error {
	if !f.multi {
		if s, ok := answer.(string); ok && slices.Contains(f.choices, s) {
			return nil
		}
		return fmt.Errorf("%s must be one of %s, not %s", f.name, f.choiceList(), shown(answer))
	}
	list, ok := answer.([]any)
	if !ok {
		return fmt.Errorf("%s must be a list of choices among %s, not %s", f.name, f.choiceList(), shown(answer))
	}
	for _, a := range list {
		if s, ok := a.(string); !ok || !slices.Contains(f.choices, s) {
			return fmt.Errorf("%s: %s is not a choice: choose among %s", f.name, shown(a), f.choiceList())
		}
	}
	switch {
	case f.minItems >= 0 && len(list) < f.minItems:
		return fmt.Errorf("%s: choose at least %d (got %d)", f.name, f.minItems, len(list))
	case f.maxItems >= 0 && len(list) > f.maxItems:
		return fmt.Errorf("%s: choose at most %d (got %d)", f.name, f.maxItems, len(list))
	}
	return nil
}

// choiceList names a select's choices: "low", "high" or, titled, "lo" (Low), "hi" (High).
func (f formField) choiceList() string {
	out := make([]string, len(f.choices))
	for i, c := range f.choices {
		out[i] = strconv.Quote(c)
		if t := f.titles[c]; t != "" && t != c {
			out[i] += " (" + t + ")"
		}
	}
	return strings.Join(out, ", ")
}

// shown is an answer as JSON, for messages.
func shown(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// jsonField is a string form field holding a value as JSON.
func jsonField(name, key string, v any, ps map[string]any) formField {
	kind := "value"
	if t, ok := ps["type"].(string); ok {
		kind = t
	} else {
		switch v.(type) {
		case []any:
			kind = "array"
		case map[string]any:
			kind = "object"
		}
	}
	desc := fmt.Sprintf("the whole %s as JSON; edit it and keep it valid JSON", kind)
	if d, ok := ps["description"].(string); ok && d != "" {
		desc = d + " (" + desc + ")"
	}
	title := name
	if key != "" {
		title = key
	}
	s := map[string]any{"type": "string", "title": title + " (JSON)", "description": desc}
	if v != nil {
		b, _ := json.Marshal(v)
		s["default"] = string(b)
	}
	return formField{name: name, key: key, asJSON: true, schema: s}
}

// elicitation is the question about gate: the message and the form.
func elicitation(ctx context.Context, run string, gate *weftv1.ReviewRequest, note string) (mcplib.ElicitationParams, error) {
	props := map[string]any{
		"decision": map[string]any{"type": "string", "title": "Decision", "enum": []any{"approve", "edit", "reject"},
			"description": "approve the data as shown; edit: change the data fields below; reject: say why in the comment"},
		"comment": map[string]any{"type": "string", "title": "Comment", "description": "why (recorded with the decision; say it when you reject)"},
	}
	if gate.Kind == runwire.GateToolCall {
		props["always"] = map[string]any{"type": "boolean", "title": "For the rest of the run", "default": false,
			"description": "approve or reject the later calls of " + gate.Tool + " in this run the same way, without asking (not with edit)"}
	}
	fields := formFields(gate)
	for _, f := range fields {
		props[f.name] = f.schema
	}
	var msg strings.Builder
	title := gate.Title
	if title == "" {
		title = "Review of step " + gate.Step
	}
	msg.WriteString(title + "\n\n")
	if gate.Instructions != "" {
		msg.WriteString(gate.Instructions + "\n\n")
	}
	data, _ := json.MarshalIndent(gate.GetData().AsInterface(), "", "  ")
	if len(data) > 16000 {
		data = append(data[:16000], []byte("\n… (cut: read it whole with weft_execution)")...)
	}
	fmt.Fprintf(&msg, "Data:\n%s\n\n", data)
	who := "the operator"
	if id, ok := auth.IdentityFrom(ctx); ok {
		who = "key " + id.Name
	}
	fmt.Fprintf(&msg, "Execution %s waits at review %s (step %s). Choose approve, edit (change the data.* fields; objects and lists other than choices are JSON) or reject (with a comment). Recorded as decided by %s.", run, gate.Id, gate.Step, who)
	if note != "" {
		fmt.Fprintf(&msg, "\n\nYour last answer was not recorded: %s", note)
	}
	p := mcplib.ElicitationParams{Message: msg.String(), RequestedSchema: map[string]any{"type": "object", "properties": props, "required": []any{"decision"}}}
	return p, p.Validate()
}

// editedData is the gate's data with the form's data fields put in; an error says which field
// is wrong and how.
func editedData(gate *weftv1.ReviewRequest, form map[string]any) (any, error) {
	current := gate.GetData().AsInterface()
	out := map[string]any{}
	if obj, ok := current.(map[string]any); ok {
		for k, v := range obj {
			out[k] = v
		}
	}
	for _, f := range formFields(gate) {
		raw, ok := form[f.name]
		if !ok || raw == nil {
			if f.key == "" {
				return current, nil // the whole value, left out: unchanged
			}
			continue
		}
		v := raw
		if f.asJSON {
			s, _ := raw.(string)
			if strings.TrimSpace(s) == "" {
				if f.key == "" {
					return current, nil
				}
				continue // left empty: unchanged
			}
			if err := json.Unmarshal([]byte(s), &v); err != nil {
				return nil, fmt.Errorf("%s is not valid JSON (%v): give the whole value as JSON, as it was shown", f.name, err)
			}
		} else if f.schema["type"] == "integer" {
			if n, ok := raw.(float64); !ok || n != math.Trunc(n) {
				return nil, fmt.Errorf("%s must be a whole number, not %v", f.name, raw)
			}
		} else if f.choices != nil {
			if err := f.check(raw); err != nil {
				return nil, err
			}
		}
		if f.key == "" {
			return v, nil
		}
		out[f.key] = v
	}
	return out, nil
}
