package dsl_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

func TestDependenciesAndOrder(t *testing.T) {
	w, err := dsl.New("deps").
		Input("q", "string", dsl.Required()).
		Step("c", "merge", dsl.In{"arrays": []any{"{{ a.output.results }}", "{{ b.output.results }}"}}).
		Step("a", "search", dsl.In{"query": "{{ inputs.q }}"}).
		Step("b", "search", dsl.In{"query": "{{ inputs.q }}"}).
		Step("gate", "conditional", dsl.In{"condition": "c.output.resultCount > 0", "then": []any{"d"}}).
		Step("d", "template", dsl.In{"text": "done"}).
		Step("e", "models", nil, dsl.After("d")).
		Compile()
	require.NoError(t, err)
	deps := map[string][]string{}
	for _, s := range w.Steps {
		deps[s.ID] = s.Deps
	}
	require.Equal(t, map[string][]string{"c": {"a", "b"}, "a": {}, "b": {}, "gate": {"c"}, "d": {"gate"}, "e": {"d"}}, deps)
	require.Equal(t, []string{"a", "b", "c", "gate", "d", "e"}, w.Order)
}

func TestBuilderRoundTrip(t *testing.T) {
	b := dsl.New("Research").Describe("search then summarize").Version("1.2.3").
		Input("question", "string", dsl.Required(), dsl.Described("what to ask")).
		Input("limit", "number", dsl.WithDefault(5.0)).
		Default("db", "myapp").
		Step("research", "query", dsl.In{"query": "{{ inputs.question }}", "limit": "{{ inputs.limit }}"}, dsl.Named("Research"), dsl.Timeout("30s"),
			dsl.WithRetry(dsl.Retry{MaxAttempts: 3, InitialInterval: "1s", Backoff: 2})).
		Step("each", "similarity", dsl.In{"text1": "{{ item.content }}", "text2": "{{ inputs.question }}"}, dsl.ForEach("{{ research.output.results }}", 2), dsl.ContinueOnError()).
		Step("summarize", "generate", dsl.In{"prompt": "Summarize", "context": "{{ research.output.results }}"}, dsl.When("{{ research.output.results.length > 0 }}")).
		Output(dsl.In{"summary": "{{ summarize.output.text }}"}).
		ExposeMCP()
	data, err := b.ToJSON()
	require.NoError(t, err)
	b2, err := dsl.FromJSON(data)
	require.NoError(t, err)
	data2, err := b2.ToJSON()
	require.NoError(t, err)
	require.Equal(t, string(data), string(data2), "ToJSON(FromJSON(x)) == x")
	d1, err := b.Definition()
	require.NoError(t, err)
	d2, err := b2.Definition()
	require.NoError(t, err)
	require.Equal(t, d1, d2)
	_, err = b.Compile()
	require.NoError(t, err)

	// A file written by hand survives FromJSON/ToJSON unchanged in meaning.
	orig := `{"name":"x","inputs":{"q":{"type":"string","required":true}},"steps":[{"id":"a","tool":"search","inputs":{"query":"{{ inputs.q }}"},"continueOnError":true}],"output":{"r":"{{ a.output }}"}}`
	b3, err := dsl.FromJSON([]byte(orig))
	require.NoError(t, err)
	out, err := b3.ToJSON()
	require.NoError(t, err)
	require.JSONEq(t, orig, string(out))
}

func TestBuilderInvalid(t *testing.T) {
	_, err := dsl.New("bad").Step("a", "serch", dsl.In{"query": "x"}).Compile()
	require.Error(t, err)
	require.Contains(t, err.Error(), `unknown tool "serch" (did you mean "search"?)`)
}

func TestResolveInputs(t *testing.T) {
	def := &dsl.Definition{Inputs: map[string]dsl.Input{
		"q":     {Type: "string", Required: true},
		"n":     {Type: "number", Default: 10.0},
		"flag":  {Type: "boolean"},
		"tags":  {Type: "array"},
		"meta":  {Type: "object"},
		"limit": {Type: "number", Required: true},
	}}
	got, err := dsl.ResolveInputs(def, map[string]string{"q": "hi", "flag": "yes", "tags": `["a"]`, "meta": `{"k":1}`, "limit": "2.5"}, nil)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"q": "hi", "n": 10.0, "flag": true, "tags": []any{"a"}, "meta": map[string]any{"k": 1.0}, "limit": 2.5}, got)

	_, err = dsl.ResolveInputs(def, map[string]string{"n": "ten", "flag": "maybe", "tags": "a,b", "qq": "x"}, nil)
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{`input "n": "ten" is not a number`, `input "flag": "maybe" is not a boolean`, `input "tags": "a,b" is not JSON`,
		`unknown input "qq" (did you mean "q"?)`, `missing required input "q"`, `missing required input "limit"`} {
		require.Contains(t, msg, want)
	}
	_, err = dsl.ResolveInputs(def, nil, map[string]any{"q": 3.0, "limit": 1.0})
	require.ErrorContains(t, err, `input "q": expected string, got number`)
}

func TestParseAssignments(t *testing.T) {
	got, err := dsl.ParseAssignments([]string{"query=a=b", "x="})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"query": "a=b", "x": ""}, got)
	_, err = dsl.ParseAssignments([]string{"novalue"})
	require.ErrorContains(t, err, "write name=value")
}

func TestConvertFlow(t *testing.T) {
	flow := `{"id":"d","name":"Decide","version":1,"nodes":[
	 {"id":"decision","type":"prompt-template","position":{"x":0,"y":0},"data":{"label":"Decide","instruction":"Check it","outputName":"verdict"}},
	 {"id":"notify-success","type":"prompt-template","position":{"x":0,"y":0},"data":{"label":"Notify","instruction":"Report {{verdict}} and {{verdict.result}}","contextRefs":["verdict"]}}],
	 "edges":[{"id":"e","source":"decision","target":"notify-success","data":{"condition":"decision.result === 'pass'"}}]}`
	def, err := dsl.ConvertFlow("f.json", []byte(flow))
	require.NoError(t, err)
	require.Len(t, def.Steps, 2)
	s := def.Steps[1]
	require.Equal(t, "notify_success", s.ID)
	require.Equal(t, "generate", s.Tool)
	require.Equal(t, "Report {{ decision.output.text }} and {{ decision.output.result }}", s.Inputs["prompt"])
	require.Equal(t, "{{ decision.output.text }}", s.Inputs["context"])
	require.Equal(t, []string{"decision"}, s.DependsOn)
	require.Equal(t, "(decision.output.result === 'pass')", s.Condition)
	// the Flow file itself loads, with a warning that decision.output.result is null in weft
	// (generate gives model, text, usage); the converted steps, as weft's, are refused for it
	w, err := dsl.Load("f.json", []byte(flow))
	require.NoError(t, err)
	require.Contains(t, w.Warnings.Error(), `warning: steps[1].condition: {{ decision.output.result }}: decision's output (generate) has no field "result": it resolves to null (its fields: model, text, usage, warnings)`)
	_, err = dsl.FromDefinition(def)
	require.ErrorContains(t, err, `steps[1].condition: {{ decision.output.result }}: decision's output (generate) has no field "result" (its fields: model, text, usage, warnings)`)
}

func TestWarnings(t *testing.T) {
	w, err := dsl.Load("w.json", []byte(`{"name":"x","extra":1,"name":"y","steps":[{"id":"a","tool":"models","inputs":{},"concurrency":2,"note":"x"}],
	  "output":"{{ defaults.region }}","$schema":"https://vai.example/workflow.json"}`))
	require.NoError(t, err, "warnings do not make a file invalid")
	var msgs []string
	for _, d := range w.Warnings {
		msgs = append(msgs, d.String())
	}
	require.Equal(t, []string{
		`w.json:1:13: warning: extra: unknown field "extra" (known fields: $schema, branding, budget, defaults, description, formatters, inputs, mcp, mcpServers, name, notify, output, schedule, steps, version)`,
		`w.json:1:23: warning: name: duplicate field; the last value wins (remove one of them)`,
		`w.json:1:95: warning: steps[0].concurrency: concurrency has no effect without forEach (remove it, or add forEach)`,
		`w.json:1:97: warning: steps[0].note: unknown field "note" (known fields: batch, budget, concurrency, condition, continueOnError, dependsOn, forEach, id, inputs, name, retry, timeout, tool)`,
		`w.json:2:13: warning: output: defaults.region is not set in this file and resolves to null (add it under "defaults")`,
	}, msgs)
}

func TestLargeAndDeepInputs(t *testing.T) {
	big := `{"name":"x","description":"` + strings.Repeat("a", dsl.MaxFileSize) + `","steps":[]}`
	_, err := dsl.Load("big.json", []byte(big))
	require.ErrorContains(t, err, "larger than the 1048576 byte limit")
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	_, err = dsl.Load("deep.json", []byte(deep))
	require.ErrorContains(t, err, "nested more than 64 levels")
}

func TestSchemaJSONListsTools(t *testing.T) {
	var s map[string]any
	require.NoError(t, json.Unmarshal(dsl.SchemaJSON(), &s))
	step := s["$defs"].(map[string]any)["step"].(map[string]any)["properties"].(map[string]any)["tool"].(map[string]any)
	require.Contains(t, fmt.Sprint(step["enum"]), "rerank")
}

func TestByteOrderMarkIsIgnored(t *testing.T) {
	w, err := dsl.Load("bom.json", []byte("\xEF\xBB\xBF{\"name\":\"bom\",\"steps\":[{\"id\":\"a\",\"tool\":\"template\",\"inputs\":{\"text\":\"x\"}}]}"))
	require.NoError(t, err)
	require.Equal(t, "bom", w.Def.Name)
	_, err = dsl.Load("bom.json", []byte("\xEF\xBB\xBF{\"name\":\"bom\",\"steps\":[{\"id\":\"a\",\"tool\":\"nope\"}]}"))
	require.ErrorContains(t, err, "bom.json:1:41:", "columns count from the first visible character")
}

func TestReviewInBranchWarns(t *testing.T) {
	src := `{"name":"br","inputs":{"big":{"type":"boolean","default":true}},"steps":[
 {"id":"gate","tool":"conditional","inputs":{"condition":"inputs.big","then":["approval"]}},
 {"id":"approval","tool":"review","inputs":{"title":"ok?","data":"x"}},
 {"id":"publish","tool":"template","inputs":{"text":"{{ approval.output.data }}"}},
 {"id":"guarded","tool":"template","condition":"{{ approval.output.decision == 'approve' }}","inputs":{"text":"{{ approval.output.data }}"}}]}`
	w, err := dsl.Load("br.json", []byte(src))
	require.NoError(t, err)
	require.Len(t, w.Warnings, 1, "only the unguarded step")
	require.Contains(t, w.Warnings[0].String(), `step "publish" depends on review "approval", which runs only in the then branch of "gate"`)
}

// TestBadAgentFiles: what an agent file can get wrong is refused at validate time with a message
// that says what to change.
func TestBadAgentFiles(t *testing.T) {
	agent := func(inputs string) string {
		return `{"name":"a","steps":[{"id":"ag","tool":"agent","inputs":` + inputs + `}]}`
	}
	tests := []struct{ name, file, msg string }{
		{"unknown tool", agent(`{"prompt":"x","tools":["search","teleport"]}`), `unknown tool "teleport"`},
		{"a step kind as a tool", agent(`{"prompt":"x","tools":["review"]}`), "review is a review step, not a tool an agent can call"},
		{"an inline tool", agent(`{"prompt":"x","tools":["filter"]}`), "filter is an inline step, not a tool an agent can call"},
		{"tools not an array", agent(`{"prompt":"x","tools":"search"}`), "tools"},
		{"maxIterations 0", agent(`{"prompt":"x","tools":["search"],"maxIterations":0}`), "must be at least 1"},
		{"maxIterations 10,000", agent(`{"prompt":"x","tools":["search"],"maxIterations":10000}`), "must be at most 100"},
		{"approve names a tool not offered", agent(`{"prompt":"x","tools":["search"],"approve":["ingest"]}`), `approve names "ingest", which is not in tools`},
		{"undeclared MCP server", agent(`{"prompt":"x","tools":["mcp:notes"]}`), `MCP server "notes" is not declared`},
		{"workflow tool without a name", agent(`{"prompt":"x","tools":["workflow:"]}`), "workflow tool without a name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := dsl.Load("agent.json", []byte(tt.file))
			require.ErrorContains(t, err, tt.msg)
		})
	}
}

// TestUnknownFileFields: a field the file format does not have is an error with its line:col and
// did-you-mean in weft's dialect (unmarked, a weft $schema, a .weft.json name), where the step
// would otherwise run without the condition, dependency or timeout meant; a warning in vai's
// (vai ignores it); and a warning on an accepted run, which was accepted with it.
func TestUnknownFileFields(t *testing.T) {
	file := func(schema string) []byte {
		return []byte(`{` + schema + `"name":"x","default":{"collection":"c"},
  "inputs":{"q":{"type":"string","requried":true}},
  "steps":[
    {"id":"ingest","tool":"template","inputs":{"text":"a"}},
    {"id":"find","tool":"template","inputs":{"text":"{{ inputs.q }}"},"conditon":"inputs.q != ''","dependson":["ingest"],"timout":"5s"}]}`)
	}
	want := []string{
		`w.json:1:13: default: unknown field "default" (did you mean "defaults"?)`,
		`w.json:2:34: inputs.q.requried: unknown field "requried" (did you mean "required"?)`,
		`w.json:5:71: steps[1].conditon: unknown field "conditon" (did you mean "condition"?)`,
		`w.json:5:99: steps[1].dependson: unknown field "dependson" (did you mean "dependsOn"?)`,
		`w.json:5:122: steps[1].timout: unknown field "timout" (did you mean "timeout"?)`,
	}
	for _, tt := range []struct{ name, file, schema string }{
		{"unmarked", "w.json", ""},
		{"a weft $schema", "w.json", `"$schema":"https://weft.dev/schemas/workflow-v1.json",`},
		{"a .weft.json name", "w.weft.json", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := dsl.Load(tt.file, file(tt.schema))
			var ds dsl.Diagnostics
			require.ErrorAs(t, err, &ds)
			var got []string
			for _, d := range ds.Errors() {
				d.File, d.Col = "w.json", d.Col-len(tt.schema)*boolInt(d.Line == 1)
				got = append(got, d.String())
			}
			require.Equal(t, want, got)
			if tt.name == "unmarked" { // it may be a vai file: say how one says so
				require.Contains(t, err.Error(), `warning: nothing marks this file as weft's or vai's, so it is read as weft's, where a field the file format or a tool does not have is an error (if it is a vai file, say so with a "$schema"`)
			} else {
				require.NotContains(t, err.Error(), "nothing marks this file")
			}
		})
	}
	t.Run("vai's dialect", func(t *testing.T) {
		w, err := dsl.Load("w.json", file(`"$schema":"https://vai.example/workflow.json",`))
		require.NoError(t, err)
		require.Len(t, w.Warnings, len(want))
		require.Contains(t, w.Warnings.Error(), `warning: steps[1].conditon: unknown field "conditon" (did you mean "condition"?)`)
	})
	t.Run("an accepted run", func(t *testing.T) {
		w, err := dsl.LoadAccepted("w.json", file(""))
		require.NoError(t, err)
		require.Contains(t, w.Warnings.Error(), `warning: default: unknown field "default"`)
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
