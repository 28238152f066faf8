package workflows

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/weftworks/weft/activities/toolspec"
)

// StopGuardrail is the stopReason of an agent a guardrail stopped (guardrails.onTrip: return).
const StopGuardrail = "guardrail"

// Guardrail stages.
const (
	GuardrailInput  = "input"
	GuardrailOutput = "output"
)

// guardrail is one check of an agent's guardrails, as the file declares it, its patterns and
// schema compiled once (parseGuardrails).
type guardrail struct {
	name    string
	schema  any
	forbid  string
	require string
	judge   string
	model   string

	forbidRe, requireRe *regexp.Regexp
	sch                 *jsonschema.Schema
}

// guardrails are an agent's checks of its input and of its answer.
type guardrails struct {
	input, output []guardrail
	onTrip        string
}

// guardTrip is a check that tripped.
type guardTrip struct {
	name, stage, reason string
}

func (t *guardTrip) value() map[string]any {
	return map[string]any{"name": t.name, "stage": t.stage, "reason": t.reason}
}

func (t *guardTrip) err() error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s guardrail %q tripped: %s. Change the %s, or the guardrail; with guardrails.onTrip: \"return\" the step returns with stopReason guardrail instead of failing",
		t.stage, t.name, t.reason, map[string]string{GuardrailInput: "input", GuardrailOutput: "instructions or tools"}[t.stage]), ErrStepFailed, nil)
}

// parseGuardrails reads the agent's guardrails input; each check is exactly one of schema,
// forbid, require and judge.
func parseGuardrails(v any) (*guardrails, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil
	}
	g := &guardrails{onTrip: "fail"}
	if s, _ := m["onTrip"].(string); s != "" {
		g.onTrip = s
	}
	for _, stage := range []string{GuardrailInput, GuardrailOutput} {
		list, _ := m[stage].([]any)
		for i, e := range list {
			c, _ := e.(map[string]any)
			gr := guardrail{schema: c["schema"]}
			gr.name, _ = c["name"].(string)
			gr.forbid, _ = c["forbid"].(string)
			gr.require, _ = c["require"].(string)
			gr.judge, _ = c["judge"].(string)
			gr.model, _ = c["model"].(string)
			if gr.name == "" {
				gr.name = fmt.Sprintf("%s[%d]", stage, i)
			}
			kinds := 0
			for _, set := range []bool{gr.schema != nil, gr.forbid != "", gr.require != "", gr.judge != ""} {
				if set {
					kinds++
				}
			}
			if kinds != 1 {
				return nil, fmt.Errorf("guardrails.%s[%d] (%s): a guardrail is exactly one of schema, forbid, require and judge", stage, i, gr.name)
			}
			for _, p := range []struct {
				src string
				re  **regexp.Regexp
			}{{gr.forbid, &gr.forbidRe}, {gr.require, &gr.requireRe}} {
				if p.src == "" {
					continue
				}
				re, err := regexp.Compile(p.src)
				if err != nil {
					return nil, fmt.Errorf("guardrails.%s[%d] (%s): %q is not a regular expression (RE2): %w", stage, i, gr.name, p.src, err)
				}
				*p.re = re
			}
			if gr.schema != nil {
				sch, err := compileSchema(gr.name, gr.schema)
				if err != nil {
					return nil, fmt.Errorf("guardrails.%s[%d] (%s): %w", stage, i, gr.name, err)
				}
				gr.sch = sch
			}
			if stage == GuardrailInput {
				g.input = append(g.input, gr)
			} else {
				g.output = append(g.output, gr)
			}
		}
	}
	return g, nil
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
		r.record(ctx, RunEvent{Type: EventGuardrailTripped, Step: sr.cs.ID, Key: key, Iteration: sr.iterations,
			Guardrail: trip.name, Stage: trip.stage, Reason: trip.reason})
	}
	return trip, err
}

func (r *run) checkStage(ctx workflow.Context, sr *stepRun, key, stage string, list []guardrail, text string, value any, model any) (*guardTrip, error) {
	for _, g := range list {
		trip := func(reason string) *guardTrip { return &guardTrip{name: g.name, stage: stage, reason: reason} }
		switch {
		case g.forbidRe != nil:
			if g.forbidRe.MatchString(text) {
				return trip(fmt.Sprintf("the text matches %q, which it must not (forbid)", g.forbid)), nil
			}
		case g.requireRe != nil:
			if !g.requireRe.MatchString(text) {
				return trip(fmt.Sprintf("the text does not match %q (require)", g.require)), nil
			}
		case g.sch != nil:
			v := value
			if v == nil {
				if err := json.Unmarshal([]byte(strings.TrimSpace(text)), &v); err != nil {
					return trip("the text is not JSON (schema)"), nil
				}
			}
			if err := g.sch.Validate(toJSONValue(v)); err != nil {
				return trip("the JSON does not fit the schema: " + schemaMessage(err)), nil
			}
		case g.judge != "":
			in := map[string]any{
				"system": "You check a text against a rubric. Answer with JSON: pass is true when the text satisfies the rubric, false when it does not; reason says why in one sentence.",
				"prompt": "Rubric:\n" + g.judge + "\n\nText:\n" + text, "responseFormat": judgeSchema, "temperature": 0.0,
			}
			if g.model != "" {
				in["model"] = g.model
			} else if model != nil {
				in["model"] = model
			}
			spec, _ := toolspec.Lookup(toolspec.LLM)
			opts := llmOptions(activityOptions(sr.cs.Policy, spec, fmt.Sprintf("%s · %s guardrail %s", sr.cs.Title(), stage, g.name)))
			opts.ActivityID = r.activityID(sr, key+"/guardrail-"+functionName(g.name))
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
