package weft

import (
	"encoding/json"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

// The support agent of docs/agents.md, built with the typed options, exports the file the page
// shows: every agent input the file form has, the Go API has.
func TestAgentOptionsExportTheDocumentedFile(t *testing.T) {
	doc, err := os.ReadFile("docs/agents.md")
	require.NoError(t, err)
	block := regexp.MustCompile("(?s)```json\n(\\{\n  \"name\": \"support\".*?)```").FindSubmatch(doc)
	require.NotNil(t, block, "docs/agents.md has the support file in a json block")

	wf := New("support").Input("question", String, Required()).
		MCPServer("browser", dsl.MCPServer{Command: "browser-mcp", Stateful: true}).
		MCPServer("crm", dsl.MCPServer{URL: "https://crm.example.com/mcp", KeyEnv: "CRM_MCP_KEY"}).
		Agent("triage", "{{ inputs.question }}",
			System("You answer support questions from the docs."),
			Instructions("Turn {{ agent.iteration }}. Last result: {{ agent.lastToolResult }}"),
			Tools(ToolName("search"), ToolName("ingest"), MCP("browser"), ToolName("mcp:crm/lookup"), ToolName("workflow:research-and-summarize")),
			Approve(ToolName("ingest")),
			ToolChoice(ToolName("search")),
			StopWhenText("^DONE"),
			MaxIterations(12), ReturnAtLimit(),
			InputGuardrails(Forbid("no-secrets", "(?i)password")),
			OutputGuardrails(Judge("on-topic", "Does the answer stay on the customer's question?")),
			ReturnOnTrip(),
			Handoffs(Handoff("billing", "Invoices and refunds",
				System("You handle billing."), Tools(ToolName("search")), HandsTo("triage"))),
			MaxHandoffs(4)).
		Output("{{ triage.output }}")
	got, err := wf.Export()
	require.NoError(t, err)
	require.JSONEq(t, string(block[1]), string(got))
}

func TestAgentOptions(t *testing.T) {
	tests := []struct {
		name    string
		wf      *Workflow
		want    string // the step's inputs, as JSON
		output  string
		wantErr string
	}{
		{name: "stop after a tool, keep the choice, checks with a judge model and a schema",
			wf: New("a").Agent("a", "p", Tools(lookup), ToolChoice(ChooseRequired), KeepToolChoice(), StopAfter(lookup),
				OutputGuardrails(Judge("polite", "Is it polite?").JudgeModel("fast"), MatchSchema("shape", SchemaOf[lookupOut]())),
				Instructions("Turn {{ agent.iteration }}")),
			want: `{"prompt":"p","tools":["weft_test_lookup"],"toolChoice":"required","resetToolChoice":false,
				"stopWhen":[{"tool":"weft_test_lookup"}],"instructions":"Turn {{ agent.iteration }}",
				"guardrails":{"output":[{"name":"polite","judge":"Is it polite?","model":"fast"},
					{"name":"shape","schema":{"type":"object","additionalProperties":false,"required":["city","limit"],
						"properties":{"city":{"type":"string"},"limit":{"type":"integer"}}}}]}}`},
		{name: "a handoff keeps the step's tool choice reset unless told",
			wf: New("b").Agent("b", "p", Handoffs(
				Handoff("x", "X", Model("fast"), ToolChoice(ChooseNone), ResponseJSON()),
				Handoff("y", "Y", KeepToolChoice(), Tools(lookup), ToolChoice(lookup), HandsTo("x", "b"), Temperature(0.5), MaxTokens(99)))),
			want: `{"prompt":"p","handoffs":[
				{"name":"x","description":"X","agent":{"model":"fast","toolChoice":"none","responseFormat":"json"}},
				{"name":"y","description":"Y","agent":{"tools":["weft_test_lookup"],"toolChoice":"weft_test_lookup","resetToolChoice":false,
					"handoffs":["x","b"],"temperature":0.5,"maxTokens":99}}]}`},
		{name: "a typed answer", wf: New("c").LLM("c", "p", ResponseSchema(SchemaOf[lookupIn]())),
			want: `{"prompt":"p","responseFormat":{"type":"object","additionalProperties":false,"required":["city"],
				"properties":{"city":{"type":"string","minLength":1},"limit":{"type":"integer","minimum":1,"maximum":10,"default":3}}}}`,
			output: "{{ c.output.json }}"},
		{name: "an llm's tool choice", wf: New("d").LLM("d", "p", Tools(lookup), ToolChoice(lookup)),
			want: `{"prompt":"p","tools":["weft_test_lookup"],"toolChoice":"weft_test_lookup"}`},

		{name: "the agent's limits", wf: New("o").Agent("a", "p", ParallelToolCalls(false), ToolResultLimit(2000), MaxRepairs(0), ResponseJSON()),
			want: `{"prompt":"p","parallelToolCalls":false,"toolResultLimit":2000,"maxRepairs":0,"responseFormat":"json"}`, output: "{{ a.output.json }}"},

		{name: "ReturnOnTrip alone", wf: New("p").Agent("a", "p", ReturnOnTrip()),
			wantErr: "ReturnOnTrip without InputGuardrails or OutputGuardrails does nothing"},
		{name: "MaxHandoffs alone", wf: New("q").Agent("a", "p", MaxHandoffs(3)),
			wantErr: "MaxHandoffs without Handoffs does nothing"},
		{name: "KeepToolChoice alone", wf: New("r").Agent("a", "p", Tools(lookup), KeepToolChoice()),
			wantErr: "KeepToolChoice keeps a ToolChoice of ChooseRequired or a tool"},
		{name: "a judge model on a pattern", wf: New("s").Agent("a", "p", OutputGuardrails(Forbid("f", "x").JudgeModel("fast"))),
			wantErr: "guardrail f: JudgeModel is for a Judge check only"},
		{name: "a handoff with both formats", wf: New("t").Agent("a", "p", Handoffs(Handoff("x", "X", ResponseJSON(), ResponseSchema(map[string]any{"type": "object"})))),
			wantErr: "handoff x: ResponseJSON and ResponseSchema both set the answer's format"},
		{name: "a handoff keeping no choice", wf: New("u").Agent("a", "p", Handoffs(Handoff("x", "X", KeepToolChoice()))),
			wantErr: "handoff x: KeepToolChoice keeps a ToolChoice"},
		{name: "agent options on a review", wf: New("e").Review("r", "t", ToolChoice(ChooseAuto), StopWhenText("x"), Handoffs()),
			wantErr: "ToolChoice, StopAfter/StopWhenText do not apply to a review step"},
		{name: "agent-only options on an llm", wf: New("f").LLM("l", "p", KeepToolChoice(), ReturnAtLimit(), InputGuardrails(Forbid("a", "b"))),
			wantErr: "KeepToolChoice, ReturnAtLimit, InputGuardrails/OutputGuardrails/ReturnOnTrip do not apply to an llm step"},
		{name: "HandsTo belongs to a handoff", wf: New("g").Agent("a", "p", HandsTo("x")),
			wantErr: "HandsTo do not apply to an agent step"},
		{name: "a handoff takes agent settings only", wf: New("h").Agent("a", "p",
			Handoffs(Handoff("x", "X", MaxIterations(3), Instructions("i"), When("true")))),
			wantErr: "handoff x: [MaxIterations Instructions When] do not apply to a handoff's agent"},
		{name: "both answer formats", wf: New("i").LLM("l", "p", ResponseJSON(), ResponseSchema(map[string]any{"type": "object"})),
			wantErr: "ResponseJSON and ResponseSchema both set the answer's format"},
		{name: "the compiler checks a stop pattern", wf: New("j").Agent("a", "p", StopWhenText("(")),
			wantErr: `textMatches "(" is not a regular expression`},
		{name: "the compiler checks a stop tool", wf: New("k").Agent("a", "p", Tools(ToolName("search")), StopAfter(lookup)),
			wantErr: `stopWhen names tool "weft_test_lookup", which is not in tools`},
		{name: "the compiler checks a tool choice", wf: New("l").Agent("a", "p", Tools(ToolName("search")), ToolChoice(lookup)),
			wantErr: `toolChoice "weft_test_lookup" is neither auto, none nor required, nor one of the tools`},
		{name: "the compiler checks a guardrail pattern", wf: New("m").Agent("a", "p", OutputGuardrails(Require("r", "[a"))),
			wantErr: `require "[a" is not a regular expression`},
		{name: "the compiler checks where a handoff hands to", wf: New("n").Agent("a", "p",
			Handoffs(Handoff("x", "X", HandsTo("nobody")))),
			wantErr: `handoff x hands to "nobody", which is neither one of the step's handoffs nor the step`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.wf.Compile()
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			data, err := tc.wf.Export()
			require.NoError(t, err)
			var def struct {
				Steps []struct {
					Inputs json.RawMessage `json:"inputs"`
				} `json:"steps"`
				Output any `json:"output"`
			}
			require.NoError(t, json.Unmarshal(data, &def))
			require.JSONEq(t, tc.want, string(def.Steps[0].Inputs))
			if tc.output != "" {
				require.Equal(t, tc.output, def.Output)
			}
		})
	}
}
