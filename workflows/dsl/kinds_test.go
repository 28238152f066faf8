package dsl_test

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/toolspec"
	"github.com/weftworks/weft/workflows/dsl"
)

// TestMayWait: review steps and agents may wait for a person themselves; no other tool's
// steps do (a child workflow's reviews are its own steps').
func TestMayWait(t *testing.T) {
	for _, s := range toolspec.All() {
		want := s.Kind == toolspec.KindReview || s.Kind == toolspec.KindAgent
		require.Equal(t, want, dsl.MayWait(s), s.Name)
	}
	require.False(t, dsl.MayWait(nil))
}

// TestPlanCountsALoopPerItem: a loop's plan counts its nested step's calls once per item, its
// items known when written out or read from the run's inputs, unknown (per item) otherwise.
func TestPlanCountsALoopPerItem(t *testing.T) {
	def := func(items string) []byte {
		return []byte(`{"name":"l","inputs":{"xs":{"type":"array"},"q":{"type":"string"}},"steps":[{"id":"l","tool":"loop","inputs":{"items":` + items + `,"as":"doc","step":{"tool":"embed","inputs":{"text":"{{ doc }}"}}}}]}`)
	}
	tests := []struct {
		name, items string
		inputs      map[string]any
		n           int // items known; 0: not
		embed       int
	}{
		{"written out", `["a","b","c"]`, nil, 3, 3},
		{"from the inputs", `"{{ inputs.xs }}"`, map[string]any{"xs": []any{"a", "b"}}, 2, 2},
		{"known when it runs", `"{{ inputs.xs }}"`, nil, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := dsl.Load("l.json", def(tt.items))
			require.NoError(t, err)
			p := dsl.NewPlan(w, tt.inputs, nil)
			require.Len(t, p.Steps, 1)
			if tt.n == 0 {
				require.Nil(t, p.Steps[0].Items)
				require.True(t, p.PerItem)
			} else {
				require.NotNil(t, p.Steps[0].Items)
				require.Equal(t, tt.n, *p.Steps[0].Items)
			}
			require.Equal(t, tt.embed, p.Steps[0].Calls.Embed)
		})
	}
}

// TestKindsDecodeWrittenSettings: the compiler decodes the settings a file writes out into the
// kind's typed input with the declaration's defaults, once (the run reads CompiledStep.Input);
// a templated setting leaves it to the run, which decodes the resolved inputs with the same
// function. Values the steps took before typing still decode: a number as a template's text or
// a transform's field is its text. An agent's settings are its typed input too; the defaults it
// should hold are read from its declaration (withDeclared).
func TestKindsDecodeWrittenSettings(t *testing.T) {
	tests := []struct {
		name, tool, inputs string
		want               any // nil: decoded at run time
	}{
		{"loop", "loop", `{"items":[1],"as":"x","step":{"tool":"embed","inputs":{"text":"{{ x }}"}},"concurrency":3}`,
			&toolspec.LoopIn{MaxIterations: 100, Concurrency: 3}},
		{"loop templated", "loop", `{"items":[1],"as":"x","step":{"tool":"embed","inputs":{"text":"{{ x }}"}},"maxIterations":"{{ inputs.n }}"}`, nil},
		{"review", "review", `{"title":"ok?","data":"d"}`, &toolspec.ReviewIn{Title: "ok?", OnTimeout: "fail"}},
		{"review templated", "review", `{"title":"{{ inputs.s }}","data":"d"}`, nil},
		{"filter", "filter", `{"array":"{{ inputs.xs }}","condition":"{{ item > 1 }}"}`, &toolspec.FilterIn{Condition: "{{ item > 1 }}"}},
		{"transform", "transform", `{"array":"{{ inputs.xs }}","fields":["a"],"mapping":{"b":"c"}}`,
			&toolspec.TransformIn{Fields: []string{"a"}, Mapping: map[string]string{"b": "c"}}},
		{"transform templated", "transform", `{"array":[],"fields":"{{ inputs.xs }}"}`, nil},
		{"template", "template", `{"text":"hi"}`, &toolspec.TemplateIn{Text: "hi"}},
		{"template templated", "template", `{"text":"{{ inputs.s }}"}`, nil},
		{"conditional", "conditional", `{"condition":"{{ inputs.s == 'x' }}","then":["s"]}`, &toolspec.ConditionalIn{Condition: "{{ inputs.s == 'x' }}", Then: []string{"s"}}},
		{"agent", "agent", `{"prompt":"go","tools":["search"],"toolChoice":"search","maxIterations":3,"approve":["search"]}`,
			withDeclared(t, toolspec.Agent, `{"toolChoice":"search","maxIterations":3,"approve":["search"]}`)},
		{"agent defaults", "agent", `{"prompt":"go"}`, withDeclared(t, toolspec.Agent, `{}`)},
		{"agent guardrails templated", "agent", `{"prompt":"go","onLimit":"return","guardrails":{"output":[{"name":"g","forbid":"{{ inputs.s }}"}]}}`,
			withDeclared(t, toolspec.Agent, `{"onLimit":"return"}`)},
		{"agent templated", "agent", `{"prompt":"go","tools":["search"],"maxIterations":"{{ inputs.n }}"}`, nil},
		{"agent toolChoice templated", "agent", `{"prompt":"go","tools":["search"],"toolChoice":"{{ inputs.s }}"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := `{"name":"k","inputs":{"n":{"type":"number"},"s":{"type":"string"},"xs":{"type":"array"}},"steps":[{"id":"k","tool":"` + tt.tool + `","inputs":` + tt.inputs + `},{"id":"s","tool":"template","inputs":{"text":"x"}}]}`
			w, err := dsl.Load("k.json", []byte(file))
			require.NoError(t, err)
			cs, _ := w.Step("k")
			if tt.want == nil {
				require.Nil(t, cs.Input)
				return
			}
			require.Equal(t, tt.want, cs.Input)
		})
	}

	t.Run("agent decoded at run time", func(t *testing.T) {
		in, err := dsl.AgentInput(map[string]any{"maxIterations": 2.0, "prompt": "go", "stopWhen": map[string]any{"tool": "search"}})
		require.NoError(t, err)
		require.Equal(t, withDeclared(t, toolspec.Agent, `{"maxIterations":2}`), &in, "only the settings, with the same defaults")
		_, err = dsl.AgentInput(map[string]any{"maxIterations": "three"})
		require.Error(t, err)
	})

	t.Run("converted at decode", func(t *testing.T) {
		text, err := dsl.TemplateInput(map[string]any{"text": 3.0})
		require.NoError(t, err)
		require.Equal(t, "3", text.Text)
		text, err = dsl.TemplateInput(map[string]any{"text": nil})
		require.NoError(t, err)
		require.Equal(t, "null", text.Text, "as {{ }} renders null")
		tr, err := dsl.TransformInput(map[string]any{"fields": []any{1.0, "b"}})
		require.NoError(t, err)
		require.Equal(t, []string{"1", "b"}, tr.Fields)
	})
}

// withDeclared is the typed input tool's declaration gives a step that writes the settings of
// set (JSON) and leaves the others out: set over the declared defaults, read with encoding/json
// (not with the decode under test).
func withDeclared[In, Out any](t *testing.T, tool toolspec.Tool[In, Out], set string) *In {
	t.Helper()
	m := maps.Clone(tool.Spec.Defaults())
	var written map[string]any
	require.NoError(t, json.Unmarshal([]byte(set), &written))
	maps.Copy(m, written)
	b, err := json.Marshal(m)
	require.NoError(t, err)
	var in In
	require.NoError(t, json.Unmarshal(b, &in))
	return &in
}

// TestKindCompiledValue: each kind that compiles more than its inputs holds one compiled value
// (CompiledStep.Compiled), read through its own accessor and through no other's; the
// references its expressions make are the step's dependencies (CompiledRefs).
func TestKindCompiledValue(t *testing.T) {
	type got struct{ filter, conditional, transform, nested, agent bool }
	tests := []struct {
		name, tool, inputs string
		want               got
		refs               []string // roots of CompiledRefs
	}{
		{"filter", "filter", `{"array":"{{ inputs.xs }}","condition":"{{ item > s.output }}"}`, got{filter: true}, []string{"item", "s"}},
		{"conditional", "conditional", `{"condition":"{{ s.output == 'x' }}","then":["t"]}`, got{conditional: true}, []string{"s"}},
		{"conditional bool", "conditional", `{"condition":true,"then":["t"]}`, got{conditional: true}, nil},
		{"transform", "transform", `{"array":"{{ inputs.xs }}","template":{"a":"{{ item.a }} {{ s.output }}"}}`, got{transform: true}, []string{"item", "s"}},
		{"transform without a template", "transform", `{"array":"{{ inputs.xs }}","fields":["a"]}`, got{}, nil},
		{"loop", "loop", `{"items":[1],"as":"x","step":{"tool":"embed","inputs":{"text":"{{ x }} {{ s.output }}"}}}`, got{nested: true}, []string{"s", "x"}},
		{"agent", "agent", `{"prompt":"go","instructions":"turn {{ agent.iteration }} of {{ s.output }}"}`, got{agent: true}, []string{"agent", "s"}},
		{"agent without instructions", "agent", `{"prompt":"go"}`, got{agent: true}, nil},
		{"llm", "llm", `{"prompt":"go"}`, got{}, nil},
		{"template", "template", `{"text":"hi"}`, got{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := `{"name":"k","inputs":{"xs":{"type":"array"}},"steps":[{"id":"s","tool":"template","inputs":{"text":"x"}},{"id":"k","tool":"` + tt.tool + `","inputs":` + tt.inputs + `},{"id":"t","tool":"template","inputs":{"text":"y"}}]}`
			w, err := dsl.Load("k.json", []byte(file))
			require.NoError(t, err)
			cs, _ := w.Step("k")
			_, filter := cs.Filter()
			_, conditional := cs.Conditional()
			_, transform := cs.Transform()
			require.Equal(t, tt.want, got{filter, conditional, transform, cs.Nested() != nil, cs.Agent() != nil})
			require.Equal(t, tt.want == got{}, cs.Compiled == nil)
			var roots []string
			for _, r := range cs.CompiledRefs() {
				roots = append(roots, r.Root)
			}
			require.ElementsMatch(t, tt.refs, roots)
			if len(tt.refs) > 0 {
				require.Contains(t, cs.Deps, "s", "a reference in what the kind compiled is a dependency")
			}
		})
	}
	cs, _ := mustLoad(t, `{"name":"k","steps":[{"id":"k","tool":"agent","inputs":{"prompt":"go","stopWhen":{"textMatches":"^DONE"}}}]}`).Step("k")
	require.True(t, cs.Agent().Config.Parsed, "an agent's written-out stopWhen is parsed into its compiled value")
	require.Nil(t, cs.Agent().Instructions)
}

func mustLoad(t *testing.T, file string) *dsl.Workflow {
	t.Helper()
	w, err := dsl.Load("k.json", []byte(file))
	require.NoError(t, err)
	return w
}
