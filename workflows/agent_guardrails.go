package workflows

import (
	"encoding/json"
	"fmt"
	"github.com/weftworks/weft/events"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
)

// StopGuardrail is the stopReason of an agent a guardrail stopped (guardrails.onTrip: return).
const StopGuardrail = "guardrail"

// Guardrail stages.
const (
	GuardrailInput  = "input"
	GuardrailOutput = "output"
)

// guardrail is one check of an agent's guardrails, its patterns and schema compiled once
// (dsl.ParseAgentConfig).
type guardrail = dsl.Guardrail

// guardTrip is a check that tripped.
type guardTrip struct {
	name, stage, reason string
}

func (t *guardTrip) value() map[string]any {
	return map[string]any{"name": t.name, "stage": t.stage, "reason": t.reason}
}

func (t *guardTrip) err() error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s guardrail %q tripped: %s. Change the %s, or the guardrail; with guardrails.onTrip: \"return\" the step returns with stopReason guardrail instead of failing",
		t.stage, t.name, t.reason, map[string]string{GuardrailInput: "input", GuardrailOutput: "instructions or tools"}[t.stage]), runwire.ErrStepFailed, nil)
}

// judgeSchema is the answer a judge gives.
var judgeSchema = map[string]any{"type": "object", "required": []any{"pass", "reason"}, "additionalProperties": false,
	"properties": map[string]any{"pass": map[string]any{"type": "boolean"}, "reason": map[string]any{"type": "string"}}}

// check runs the guardrails of one stage in order and returns the first that trips (nil: none),
// recorded as a guardrail_tripped event. text is what is checked; value its JSON when the answer
// is JSON (nil: the text read as JSON). A judge is one llm activity whose usage counts as the
// step's.
func (r *run) check(ctx workflow.Context, sr *stepRun, key, stage string, list []guardrail, text string, value any, model any) (*guardTrip, error) {
	trip, err := r.checkStage(ctx, sr, key, stage, list, text, value, model)
	if trip != nil && err == nil {
		r.record(ctx, events.Event{Type: events.GuardrailTripped, Step: sr.cs.ID, Key: key, Iteration: sr.iterations,
			Guardrail: trip.name, Stage: trip.stage, Reason: trip.reason})
	}
	return trip, err
}

func (r *run) checkStage(ctx workflow.Context, sr *stepRun, key, stage string, list []guardrail, text string, value any, model any) (*guardTrip, error) {
	for _, g := range list {
		trip := func(reason string) *guardTrip { return &guardTrip{name: g.Name, stage: stage, reason: reason} }
		switch {
		case g.ForbidRe != nil:
			if g.ForbidRe.MatchString(text) {
				return trip(fmt.Sprintf("the text matches %q, which it must not (forbid)", g.Forbid)), nil
			}
		case g.RequireRe != nil:
			if !g.RequireRe.MatchString(text) {
				return trip(fmt.Sprintf("the text does not match %q (require)", g.Require)), nil
			}
		case g.CompiledSchema != nil:
			v := value
			if v == nil {
				if err := json.Unmarshal([]byte(strings.TrimSpace(text)), &v); err != nil {
					return trip("the text is not JSON (schema)"), nil
				}
			}
			if err := g.CompiledSchema.Validate(toJSONValue(v)); err != nil {
				return trip("the JSON does not fit the schema: " + schemaMessage(err)), nil
			}
		case g.Judge != "":
			in := map[string]any{
				"system": "You check a text against a rubric. Answer with JSON: pass is true when the text satisfies the rubric, false when it does not; reason says why in one sentence.",
				"prompt": "Rubric:\n" + g.Judge + "\n\nText:\n" + text, "responseFormat": judgeSchema, "temperature": 0.0,
			}
			if g.Model != "" {
				in["model"] = g.Model
			} else if model != nil {
				in["model"] = model
			}
			spec, _ := toolspec.Lookup(toolspec.LLM)
			opts := llmOptions(activityOptions(sr.cs.Policy, spec, fmt.Sprintf("%s · %s guardrail %s", sr.cs.Title(), stage, g.Name)))
			opts.ActivityID = r.activityID(sr, key+"/guardrail-"+functionName(g.Name))
			out, err := r.runActivity(ctx, sr, toolspec.LLM, opts, in)
			if err != nil {
				return nil, err
			}
			answer, _ := out.(map[string]any)
			verdict, _ := answer["json"].(map[string]any)
			pass, ok := verdict["pass"].(bool)
			reason, _ := verdict["reason"].(string)
			if !ok {
				return trip("the judge did not answer pass or fail"), nil
			}
			if !pass {
				return trip("the judge says it fails the rubric: " + reason), nil
			}
		}
	}
	return nil, nil
}

// inputText is what input guardrails check: the prompt, or the last user message.
func inputText(llm map[string]any) string {
	if p, _ := llm["prompt"].(string); p != "" {
		return p
	}
	msgs, _ := llm["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		if m, _ := msgs[i].(map[string]any); m["role"] == "user" {
			s, _ := m["content"].(string)
			return s
		}
	}
	return ""
}
