package dsl

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/toolspec"
)

// tagDefault is the default=… of the weft tag of t's field with the given JSON name.
func tagDefault(t *testing.T, typ reflect.Type, field string) string {
	t.Helper()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name == field {
			for _, kv := range strings.Split(f.Tag.Get("weft"), ",") {
				if v, ok := strings.CutPrefix(kv, "default="); ok {
					return v
				}
			}
		}
	}
	t.Fatalf("%s.%s declares no default", typ, field)
	return ""
}

// TestNestedAgentDefaultsAreDeclared: the defaults of a handoff's resetToolChoice and of
// guardrails.onTrip are their declarations' (toolspec.HandoffAgent, toolspec.Guardrails).
func TestNestedAgentDefaultsAreDeclared(t *testing.T) {
	require.Equal(t, tagDefault(t, reflect.TypeFor[toolspec.HandoffAgent](), "resetToolChoice") == "true", (&Handoff{}).ResetToolChoice())
	cfg, ps := ParseAgentConfig("ag", map[string]any{"guardrails": map[string]any{"output": []any{map[string]any{"name": "g", "forbid": "x"}}}})
	require.Empty(t, ps)
	require.Equal(t, tagDefault(t, reflect.TypeFor[toolspec.Guardrails](), "onTrip"), cfg.Guardrails.OnTrip)
}

// TestParseAgentConfig: one parser says what is wrong with stopWhen, guardrails and handoffs,
// where, for the compiler and for the interpreter (templated ones).
func TestParseAgentConfig(t *testing.T) {
	tests := []struct {
		name   string
		inputs map[string]any
		ptr    string
		msg    string
	}{
		{"stopWhen pattern", map[string]any{"stopWhen": map[string]any{"textMatches": "("}}, "/stopWhen/textMatches", `textMatches "(" is not a regular expression`},
		{"stopWhen empty", map[string]any{"stopWhen": []any{map[string]any{}}}, "/stopWhen/0", "names neither a tool nor a pattern"},
		{"two checks", map[string]any{"guardrails": map[string]any{"input": []any{map[string]any{"name": "g", "forbid": "a", "require": "b"}}}}, "/guardrails/input/0", "guardrail g is 2 checks"},
		{"bad schema", map[string]any{"guardrails": map[string]any{"output": []any{map[string]any{"schema": map[string]any{"type": 3.0}}}}}, "/guardrails/output/0/schema", "not a valid JSON Schema"},
		{"handoff twice", map[string]any{"handoffs": []any{map[string]any{"name": "b"}, map[string]any{"name": "b"}}}, "/handoffs/1/name", `handoff "b" is named twice`},
		{"hands to nobody", map[string]any{"handoffs": []any{map[string]any{"name": "b", "agent": map[string]any{"handoffs": []any{"c"}}}}}, "/handoffs/0/agent/handoffs/0", `hands to "c", which is neither`},
		{"names the step", map[string]any{"handoffs": []any{map[string]any{"name": "ag", "agent": map[string]any{"handoffs": []any{"ag"}}}}}, "/handoffs/0/agent/handoffs/0", "names both the step and one of its handoffs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ps := ParseAgentConfig("ag", tt.inputs)
			require.Len(t, ps, 1, "%v", ps)
			require.Equal(t, tt.ptr, ps[0].Ptr)
			require.Contains(t, ps[0].Msg, tt.msg)
		})
	}
	cfg, ps := ParseAgentConfig("ag", map[string]any{"stopWhen": []any{map[string]any{"tool": "search", "textMatches": "^DONE"}},
		"handoffs": []any{map[string]any{"name": "b", "agent": map[string]any{"handoffs": []any{"ag"}}}}})
	require.Empty(t, ps)
	require.Len(t, cfg.StopWhen, 2)
	require.Equal(t, "search", cfg.StopWhen[0].Tool)
	require.Equal(t, "^DONE", cfg.StopWhen[1].Pattern.String())
	require.Equal(t, []string{"ag"}, cfg.Handoffs[0].Next)
}

// TestAgentConfigCompiledOnce: an agent whose settings and stopWhen are written out is decoded
// and parsed when compiled (the declaration's defaults filled in); a templated one is left to
// the run, which resolves it first.
func TestAgentConfigCompiledOnce(t *testing.T) {
	load := func(inputs string) *CompiledStep {
		t.Helper()
		w, err := Load("a.json", []byte(`{"name":"a","inputs":{"n":{"type":"number"},"p":{"type":"string"}},"steps":[{"id":"ag","tool":"agent","inputs":{"prompt":"go",`+inputs+`}}]}`))
		require.NoError(t, err)
		cs, _ := w.Step("ag")
		require.NotNil(t, cs.Agent())
		require.NotNil(t, cs.Agent().Config)
		return cs
	}
	cs := load(`"maxIterations":3,"stopWhen":{"textMatches":"^DONE"}`)
	in, ok := cs.Input.(*toolspec.AgentIn)
	require.True(t, ok, "the settings are the step's typed input")
	require.Equal(t, 3, in.MaxIterations)
	require.Equal(t, tagDefault(t, reflect.TypeFor[toolspec.AgentIn](), "toolResultLimit"), strconv.Itoa(in.ToolResultLimit))
	require.True(t, cs.Agent().Config.Parsed)
	require.Equal(t, "^DONE", cs.Agent().Config.StopWhen[0].Pattern.String())

	cs = load(`"maxIterations":"{{ inputs.n }}","guardrails":{"output":[{"name":"g","forbid":"{{ inputs.p }}"}]}`)
	require.Nil(t, cs.Input)
	require.False(t, cs.Agent().Config.Parsed)
}
