package workflows

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/weftworks/weft/events"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/weftworks/weft/internal/english"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
)

// A gate is one pending human decision, keyed by its own request id: a review step ("step"),
// one forEach item of a review step ("step[2]"), or an agent's tool call ("step/CALL"). A
// step may wait on several gates at once; each is listed, shown and decided on its own.
type gate struct {
	req      *weftv1.ReviewRequest
	sr       *stepRun
	seq      int // opening order
	schema   *jsonschema.Schema
	decision *weftv1.ReviewDecision
	// rule: the gate was decided by a run-wide decision of another gate (tool_rules.go), as the
	// tool call's record says it: "approved by rule of ana at …".
	rule string
}

// openGate registers a pending decision and marks the step (and the run) awaiting review.
// schema, when not nil, is the JSON Schema edited data must satisfy.
func (r *run) openGate(ctx workflow.Context, sr *stepRun, req *weftv1.ReviewRequest, schema any) (*gate, error) {
	if _, dup := r.gates[req.Id]; dup {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("review %q is already pending", req.Id), runwire.ErrStepFailed, nil)
	}
	g := &gate{req: req, sr: sr, seq: r.gateSeq}
	r.gateSeq++
	if schema != nil {
		sch, err := compileSchema(req.Id, schema)
		if err != nil {
			return nil, temporal.NewNonRetryableApplicationError(err.Error(), "InvalidInput", nil)
		}
		g.schema = sch
		if v, err := structpb.NewValue(toJSONValue(schema)); err == nil {
			req.Schema = v
		}
	}
	req.RequestedAt = timestamppb.New(workflow.Now(ctx))
	req.Digest = DataDigest(req.Data)
	r.gates[req.Id] = g
	sr.openGates++
	sr.status = runwire.StatusAwaitingReview
	r.publish(sr)
	r.refreshStatus(ctx)
	r.record(ctx, events.Event{Type: events.ReviewRequested, Step: sr.cs.ID, Key: req.Id, Review: eventReview(req), StepState: r.eventState(sr)})
	return g, nil
}

// waitGate waits for the gate's decision (or its timeout, then onTimeout decides) and closes it.
func (r *run) waitGate(ctx workflow.Context, g *gate, timeout time.Duration, onTimeout string) (*weftv1.ReviewDecision, error) {
	defer func() {
		e := events.Event{Type: events.ReviewDecided, Step: g.sr.cs.ID, Key: g.req.Id, Review: eventReview(g.req)}
		if d := g.decision; d != nil {
			e.Decision, e.Reviewer = d.Decision, d.Reviewer
		}
		r.record(ctx, e)
		delete(r.gates, g.req.Id)
		g.sr.openGates--
		if g.sr.openGates == 0 && g.sr.status == runwire.StatusAwaitingReview {
			g.sr.status = runwire.StatusRunning
			r.publish(g.sr)
		}
		r.refreshStatus(ctx)
	}()
	decided := func() bool { return g.decision != nil }
	if timeout > 0 {
		ok, err := workflow.AwaitWithTimeout(ctx, timeout, decided)
		if err != nil {
			return nil, err
		}
		if !ok {
			switch onTimeout {
			case runwire.DecisionApprove, runwire.DecisionReject:
				g.decision = &weftv1.ReviewDecision{Id: g.req.Id, Step: g.req.Step, Decision: onTimeout, Reviewer: "timeout", Comment: "no decision within " + timeout.String()}
			default:
				return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("no review decision within %s", timeout), runwire.ErrReviewTimeout, nil)
			}
		}
	} else if err := workflow.Await(ctx, decided); err != nil {
		return nil, err
	}
	d := g.decision
	workflow.GetLogger(ctx).Info("review decided", "review", g.req.Id, "kind", g.req.Kind, "decision", d.Decision,
		"reviewer", d.Reviewer, "authenticated", d.Authenticated, "roles", d.ReviewerRoles, "digest", g.req.Digest)
	return d, nil
}

// pendingGates returns the open gates in the order they opened.
func (r *run) pendingGates() []*gate {
	out := make([]*gate, 0, len(r.gates))
	//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
	for _, g := range r.gates {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

// findGate resolves which gate a decision answers (PickReview: by id; else by step when the step
// has one pending gate; else the only pending gate). Errors say what to send.
func (r *run) findGate(d *weftv1.ReviewDecision) (*gate, error) {
	var open []*weftv1.ReviewRequest
	for _, g := range r.pendingGates() {
		if g.decision == nil {
			open = append(open, g.req)
		}
	}
	req, err := runwire.PickReview(open, d.Id, d.Step, runwire.ReviewWording{Name: `in "id"`, NameOrStep: `in "id"`, Step: r.notAwaiting})
	if err != nil {
		return nil, err
	}
	return r.gates[req.Id], nil
}

// notAwaiting says why step waits on no review: no such step, not a review step, or its status.
func (r *run) notAwaiting(step, pending string) error {
	sr, ok := r.steps[step]
	if !ok {
		return fmt.Errorf("no step %q in this workflow (pending reviews: %s)", step, pending)
	}
	if !sr.cs.MayWait() {
		return fmt.Errorf("step %q is %s step, not a review", step, english.A(sr.cs.Tool))
	}
	return fmt.Errorf("step %q is not awaiting review (status %s)", step, sr.status)
}

// ReviewRecorded is the answer of the review Update: the decision as the run recorded it,
// without the edited data (that is in the step's output). It is a plain struct, not a protobuf
// message, so that it travels as json/plain: the temporal CLI decodes an Update's result into an
// interface, which a json/protobuf payload refuses ("must be a concrete type"). Its JSON names
// are those of weftv1.ReviewDecision's Go fields, so a client can decode it into one.
type ReviewRecorded struct {
	ID            string   `json:"id,omitempty"`
	Step          string   `json:"step,omitempty"`
	Decision      string   `json:"decision,omitempty"`
	Reviewer      string   `json:"reviewer,omitempty"`
	Comment       string   `json:"comment,omitempty"`
	Digest        string   `json:"digest,omitempty"`
	ReviewerRoles []string `json:"reviewer_roles,omitempty"`
	Authenticated bool     `json:"authenticated,omitempty"`
	Scope         string   `json:"scope,omitempty"`
}

// recorded is the Update's answer for decision d.
func recorded(d *weftv1.ReviewDecision) *ReviewRecorded {
	return &ReviewRecorded{ID: d.Id, Step: d.Step, Decision: d.Decision, Reviewer: d.Reviewer, Comment: d.Comment,
		Digest: d.Digest, ReviewerRoles: d.ReviewerRoles, Authenticated: d.Authenticated, Scope: d.Scope}
}

// DataDigest is a gate's ReviewRequest.digest: the hex sha256 of the canonical JSON of data
// (encoding/json of its value, which sorts object keys; null when there is no data).
func DataDigest(data *structpb.Value) string {
	var v any
	if data != nil {
		v = data.AsInterface()
	}
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte("null")
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// check validates a decision for its gate: the decision itself, what the reviewer was shown (the
// digest), who decides (the gate's reviewers, for an authenticated caller) and the edit's size
// and shape. Errors say what to send instead.
func (g *gate) check(d *weftv1.ReviewDecision) error {
	if err := runwire.CheckDecisionKind(d.Decision, d.Data != nil); err != nil {
		return err
	}
	if err := runwire.CheckDecisionScope(d.Decision, d.Scope); err != nil {
		return err
	}
	if d.Scope == runwire.ScopeRun && g.req.Kind != runwire.GateToolCall {
		return fmt.Errorf(`scope "run" is for an agent's tool call (it decides the tool's later calls too); review %q is a review step's: send the decision without the scope`, g.req.Id)
	}
	if d.Digest != "" && d.Digest != g.req.Digest {
		return fmt.Errorf("the data of review %q changed since it was shown (digest %s, now %s): read the review again and decide on what it shows now",
			g.req.Id, d.Digest, g.req.Digest)
	}
	if err := g.mayDecide(d); err != nil {
		return err
	}
	if err := runwire.CheckDecisionSize(g.req.Id, d); err != nil {
		return err
	}
	if d.Decision == runwire.DecisionEdit {
		if g.schema != nil {
			if err := g.schema.Validate(toJSONValue(d.Data.AsInterface())); err != nil {
				want, _ := json.Marshal(g.req.Schema.AsInterface())
				return fmt.Errorf("edited data for %q does not fit what this review expects (%s): %s", g.req.Id, string(want), schemaMessage(err))
			}
		}
	}
	return nil
}

// mayDecide enforces the gate's reviewers on an authenticated decision: the reviewer's name is
// listed, or one of its roles is listed as "role:NAME", or it has the admin role. A decision
// nobody authenticated (the operator's loopback CLI, the temporal CLI) passes: its reviewer is
// a label.
func (g *gate) mayDecide(d *weftv1.ReviewDecision) error {
	if !d.Authenticated || slices.Contains(d.ReviewerRoles, runwire.RoleAdmin) || runwire.ReviewerListed(g.req.Reviewers, d.Reviewer, d.ReviewerRoles) {
		return nil
	}
	var names, wanted []string
	for _, rv := range g.req.Reviewers {
		if role, ok := strings.CutPrefix(rv, "role:"); ok {
			wanted = append(wanted, "anyone with the role "+role)
		} else {
			names = append(names, rv)
		}
	}
	if len(names) > 0 {
		wanted = append([]string{strings.Join(names, ", ")}, wanted...)
	}
	who := fmt.Sprintf("%q", d.Reviewer)
	if len(d.ReviewerRoles) > 0 {
		who += " (roles: " + strings.Join(d.ReviewerRoles, ", ") + ")"
	} else {
		who += " (no roles)"
	}
	return fmt.Errorf("review %q may be decided only by %s (or an admin); %s may not: ask one of them to decide, or have the key given a listed role",
		g.req.Id, strings.Join(wanted, " or "), who)
}

// byteSize writes n bytes for people: 2.3 MB, 512 KB, 80 bytes.
func schemaMessage(err error) string {
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		msg := ve.Error()
		msg = strings.ReplaceAll(msg, "jsonschema validation failed with 'weft://review.json#'\n", "")
		return strings.TrimSpace(msg)
	}
	return err.Error()
}

// compileSchema compiles the schema edited data must satisfy.
func compileSchema(id string, schema any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("weft://review.json", toJSONValue(schema)); err != nil {
		return nil, fmt.Errorf("review %q: schema: %w", id, err)
	}
	sch, err := c.Compile("weft://review.json")
	if err != nil {
		return nil, fmt.Errorf("review %q: schema is not a valid JSON Schema: %w", id, err)
	}
	return sch, nil
}

// toJSONValue makes numbers what the JSON Schema library expects (json.Number or float64 both
// work; ints from Go code are turned into float64).
func toJSONValue(v any) any { return dsl.JSONValue(v) }

// ShapeSchema is the schema edited data must have when a review declares none: the shape of the
// data shown. Text stays text, a number a number, an object keeps its keys (with their types),
// an array stays an array. Null data accepts anything.
func ShapeSchema(data any) any {
	switch x := data.(type) {
	case nil:
		return nil
	case string:
		return map[string]any{"type": "string"}
	case bool:
		return map[string]any{"type": "boolean"}
	case float64, int, int64, int32:
		return map[string]any{"type": "number"}
	case []any:
		return map[string]any{"type": "array"}
	case map[string]any:
		props := map[string]any{}
		keys := make([]string, 0, len(x))
		//workflowcheck:ignore the result does not depend on map order (copied, or sorted after)
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		req := make([]any, 0, len(keys))
		for _, k := range keys {
			if s := ShapeSchema(x[k]); s != nil {
				props[k] = s
				req = append(req, k)
			}
		}
		out := map[string]any{"type": "object", "properties": props}
		if len(req) > 0 {
			out["required"] = req
		}
		return out
	}
	return nil
}
