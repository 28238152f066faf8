package workflows_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/toolspec"
)

// withDefault stands for a release that changed the declared default of tool's input field to
// value (the weft tag of its input type), until the test ends: a field that had none gets one,
// and a field given a default is no longer required.
func withDefault(t *testing.T, tool, field string, value any) {
	t.Helper()
	spec, ok := toolspec.Lookup(tool)
	require.True(t, ok, tool)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(spec.InputJSON()), &doc))
	props, _ := doc["properties"].(map[string]any)
	p, _ := props[field].(map[string]any)
	require.NotNil(t, p, "%s declares %s", tool, field)
	p["default"] = value
	if req, ok := doc["required"].([]any); ok {
		doc["required"] = slices.DeleteFunc(req, func(f any) bool { return f == field })
	}
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	t.Cleanup(toolspec.TightenForTest(tool, string(b)))
	require.Equal(t, value, spec.Defaults()[field])
}

// TestKindsReadDefaultsFromDeclarations: the step kinds the interpreter runs itself read the
// settings a step leaves out from their tool's declaration, not from constants of their own:
// a declaration whose default changes changes what runs (a constant that disagreed, or was
// used in its place, fails this test).
func TestKindsReadDefaultsFromDeclarations(t *testing.T) {
	tests := []struct {
		name, tool, field string
		value             any
		def               string
		model             bool // the model calls search for ever (or answers as answers say)
		answers           []func(map[string]any) map[string]any
		want, wantErr     string
		contains          string // in the output, when want is ""
	}{
		{name: "loop maxIterations", tool: "loop", field: "maxIterations", value: 2.0,
			def:     `{"name":"l","steps":[{"id":"l","tool":"loop","inputs":{"items":["a","b","c"],"as":"doc","step":{"tool":"embed","inputs":{"text":"{{ doc }}"}}}}]}`,
			wantErr: `inputs.items has 3 items, more than maxIterations (2)`},
		{name: "review onTimeout", tool: "review", field: "onTimeout", value: "approve",
			def:  `{"name":"r","steps":[{"id":"rv","tool":"review","inputs":{"title":"ok?","data":"proposal","timeout":"2h"}}],"output":"{{ rv.output.decision }}"}`,
			want: `"approve"`},
		{name: "merge dedup", tool: "merge", field: "dedup", value: true,
			def:  `{"name":"m","steps":[{"id":"m","tool":"merge","inputs":{"arrays":[["a","b"],["a"]]}}],"output":"{{ m.output.resultCount }}"}`,
			want: `2`},
		{name: "agent maxIterations", tool: "agent", field: "maxIterations", value: 2.0, model: true,
			def:     `{"name":"a","steps":[{"id":"ag","tool":"agent","inputs":{"prompt":"go","tools":["search"]}}]}`,
			wantErr: `did not answer within maxIterations (2)`},
		{name: "agent onLimit", tool: "agent", field: "onLimit", value: "return", model: true,
			def:  `{"name":"a","steps":[{"id":"ag","tool":"agent","inputs":{"prompt":"go","tools":["search"],"maxIterations":2}}],"output":"{{ ag.output.stopReason }}"}`,
			want: `"max_iterations"`},
		{name: "agent maxHandoffs", tool: "agent", field: "maxHandoffs", value: 1.0, model: true,
			def: `{"name":"a","steps":[{"id":"ag","tool":"agent","inputs":{"prompt":"go","maxIterations":5,
			  "handoffs":[{"name":"b","agent":{"handoffs":["ag"]}}]}}]}`,
			wantErr: `more than maxHandoffs (1) times`},
		{name: "agent toolResultLimit", tool: "agent", field: "toolResultLimit", value: 100.0, model: true,
			def:      `{"name":"a","steps":[{"id":"ag","tool":"agent","inputs":{"prompt":"go","tools":["search"],"maxIterations":1,"onLimit":"return"}}],"output":"{{ ag.output.toolCalls }}"}`,
			contains: `[truncated: `},
		{name: "agent parallelToolCalls", tool: "agent", field: "parallelToolCalls", value: false, model: true,
			answers: []func(map[string]any) map[string]any{echo("parallelToolCalls")},
			def:     `{"name":"a","steps":[{"id":"ag","tool":"agent","inputs":{"prompt":"go","tools":["search"]}}],"output":"{{ ag.output.text }}"}`,
			want:    `"false"`},
		{name: "agent resetToolChoice", tool: "agent", field: "resetToolChoice", value: false, model: true,
			answers: []func(map[string]any) map[string]any{forever, echo("toolChoice")},
			def:     `{"name":"a","steps":[{"id":"ag","tool":"agent","inputs":{"prompt":"go","tools":["search"],"toolChoice":"required"}}],"output":"{{ ag.output.text }}"}`,
			want:    `"required"`},
		// The data tools declare no default today: a release that gave one changes what runs.
		{name: "filter condition", tool: "filter", field: "condition", value: "item != 'b'",
			def:  `{"name":"f","steps":[{"id":"f","tool":"filter","inputs":{"array":["a","b","c"]}}],"output":"{{ f.output.results }}"}`,
			want: `["a", "c"]`},
		{name: "transform fields", tool: "transform", field: "fields", value: []any{"a"},
			def:  `{"name":"t","steps":[{"id":"t","tool":"transform","inputs":{"array":[{"a":1,"b":2}]}}],"output":"{{ t.output.results }}"}`,
			want: `[{"a":1}]`},
		{name: "transform fields templated", tool: "transform", field: "fields", value: []any{"a"},
			def: `{"name":"t","inputs":{"f":{"type":"array"}},"steps":[{"id":"t","tool":"transform","inputs":{"array":[{"a":1,"b":2}],"fields":"{{ inputs.f }}"}}],
			  "output":"{{ t.output.results }}"}`,
			want: `[{"a":1}]`},
		{name: "template text", tool: "template", field: "text", value: "hello",
			def:  `{"name":"t","steps":[{"id":"t","tool":"template","inputs":{}}],"output":"{{ t.output.text }}"}`,
			want: `"hello"`},
		{name: "conditional else", tool: "conditional", field: "else", value: []any{"b"},
			def: `{"name":"c","steps":[{"id":"c","tool":"conditional","inputs":{"condition":"false"}},{"id":"b","tool":"template","inputs":{"text":"x"}}],
			  "output":"{{ c.output.enabledSteps }}"}`,
			want: `["b"]`},
		{name: "conditional condition", tool: "conditional", field: "condition", value: true,
			def:  `{"name":"c","steps":[{"id":"c","tool":"conditional","inputs":{}}],"output":"{{ c.output.branchTaken }}"}`,
			want: `"then"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withDefault(t, tt.tool, tt.field, tt.value)
			h := newHarness(t)
			if tt.model {
				answers := tt.answers
				if answers == nil {
					answers = []func(map[string]any) map[string]any{forever, forever, forever, forever, forever}
				}
				withModel(h, &scriptedModel{answers: answers})
			}
			res, err := h.run(t, tt.def, nil)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			if tt.want == "" {
				require.Contains(t, outputJSON(t, res.Output), tt.contains)
				return
			}
			require.JSONEq(t, tt.want, outputJSON(t, res.Output)) // (protojson spaces its output at random)
		})
	}
}

// echo is a model answer whose text is the model call's setting (as fmt prints it), and that
// calls no tool.
func echo(setting string) func(map[string]any) map[string]any {
	return func(in map[string]any) map[string]any {
		return map[string]any{"text": fmt.Sprint(in[setting]), "toolCalls": []any{}}
	}
}

// forever is a model answer that calls a tool again: search, or the transfer the agent has.
func forever(in map[string]any) map[string]any {
	name := "search"
	tools, _ := in["tools"].([]any)
	for _, tl := range tools {
		if fn, _ := tl.(map[string]any)["name"].(string); strings.HasPrefix(fn, "transfer_to_") {
			name = fn
		}
	}
	return map[string]any{"text": "", "toolCalls": []any{map[string]any{"id": "c", "name": name, "arguments": `{"query":"again"}`}}}
}

// TestTemplatedAgentSettingsRun: an agent whose settings and guardrails are templated reads them
// when the run has resolved them, with the same defaults and the same messages as the compiler.
func TestTemplatedAgentSettingsRun(t *testing.T) {
	def := `{"name":"a","inputs":{"n":{"type":"number"},"p":{"type":"string"}},"steps":[{"id":"ag","tool":"agent","inputs":{"prompt":"go","tools":["search"],
	  "maxIterations":"{{ inputs.n }}","guardrails":{"output":[{"name":"g","forbid":"{{ inputs.p }}"}]}}}]}`
	h := newHarness(t)
	withModel(h, &scriptedModel{answers: []func(map[string]any) map[string]any{forever, forever, forever}})
	_, err := h.run(t, def, map[string]any{"n": 2, "p": "x"})
	require.ErrorContains(t, err, "did not answer within maxIterations (2)")

	h = newHarness(t)
	withModel(h, &scriptedModel{answers: []func(map[string]any) map[string]any{forever}})
	_, err = h.run(t, def, map[string]any{"n": 2, "p": "("})
	require.ErrorContains(t, err, `inputs.guardrails.output.0.forbid: forbid "(" is not a regular expression`)
	require.Equal(t, 0, h.tools.count("search"), "nothing ran")
}
