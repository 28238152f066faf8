package dsl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

// TestAgentSDKFiles: the agent inputs that match the agent SDKs (toolChoice, stopWhen,
// instructions, guardrails, handoffs) are checked when the file is validated.
func TestAgentSDKFiles(t *testing.T) {
	agent := func(inputs string) string {
		return `{"name":"a","steps":[{"id":"ag","tool":"agent","inputs":` + inputs + `}]}`
	}
	bad := []struct{ name, file, msg string }{
		{"stopWhen names a tool not offered", agent(`{"prompt":"x","tools":["search"],"stopWhen":{"tool":"ingest"}}`), `stopWhen names tool "ingest", which is not in tools`},
		{"stopWhen pattern does not compile", agent(`{"prompt":"x","tools":["search"],"stopWhen":[{"tool":"search"},{"textMatches":"("}]}`), `textMatches "(" is not a regular expression`},
		{"stopWhen empty condition", agent(`{"prompt":"x","tools":["search"],"stopWhen":{}}`), `stopWhen`},
		{"instructions name an unknown step", agent(`{"prompt":"x","instructions":"{{ nosuch.output }} at {{ agent.iteration }}"}`), `nosuch`},
		{"guardrail with two checks", agent(`{"prompt":"x","guardrails":{"input":[{"name":"g","forbid":"a","judge":"b"}]}}`), `guardrail g is 2 checks`},
		{"guardrail with no check", agent(`{"prompt":"x","guardrails":{"output":[{"name":"g"}]}}`), `guardrail g is 0 checks`},
		{"guardrail pattern", agent(`{"prompt":"x","guardrails":{"output":[{"name":"g","require":"[a-"}]}}`), `require "[a-" is not a regular expression`},
		{"guardrail onTrip", agent(`{"prompt":"x","guardrails":{"onTrip":"ignore"}}`), `onTrip`},
		{"handoff named twice", agent(`{"prompt":"x","handoffs":[{"name":"b","agent":{}},{"name":"b","agent":{}}]}`), `handoff "b" is named twice`},
		{"handoff with a bad name", agent(`{"prompt":"x","handoffs":[{"name":"bill ing","agent":{}}]}`), `handoffs`},
		{"handoff agent with an unknown tool", agent(`{"prompt":"x","handoffs":[{"name":"b","agent":{"tools":["teleport"]}}]}`), `handoff b: "teleport" is not a tool an agent can call`},
		{"handoff hands to an agent the step lacks", agent(`{"prompt":"x","handoffs":[{"name":"b","agent":{"handoffs":["ag","c"]}}]}`), `handoff b hands to "c", which is neither one of the step's handoffs nor the step`},
		{"toolChoice names a tool not offered", agent(`{"prompt":"x","tools":["search"],"toolChoice":"ingest"}`), `toolChoice "ingest" is neither auto, none nor required, nor one of the tools`},
		{"toolChoice names a tool of an agent with none", agent(`{"prompt":"x","toolChoice":"search"}`), `toolChoice "search", but the agent offers no tools`},
		{"toolChoice required of an agent with no tools", agent(`{"prompt":"x","toolChoice":"required"}`), `toolChoice "required", but the agent offers no tools`},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := dsl.Load("agent.json", []byte(tt.file))
			require.ErrorContains(t, err, tt.msg)
		})
	}
	// A run that accepted a toolChoice on an agent without tools (before the check) replays.
	_, err := dsl.LoadAccepted("agent.json", []byte(agent(`{"prompt":"x","toolChoice":"required"}`)))
	require.NoError(t, err)
	good := []struct{ name, file string }{
		{"instructions with the agent's state", agent(`{"prompt":"x","instructions":"turn {{ agent.iteration }}: {{ agent.lastToolResult }}"}`)},
		{"guardrails", agent(`{"prompt":"x","guardrails":{"input":[{"name":"a","forbid":"secret"},{"name":"b","judge":"on topic","model":"fast"}],"output":[{"name":"c","schema":{"type":"object"}}],"onTrip":"return"}}`)},
		{"handoffs", agent(`{"prompt":"x","tools":["search"],"handoffs":[{"name":"billing","description":"money","agent":{"system":"s","model":"smart","tools":["ingest"],"approve":["ingest"]}}]}`)},
		{"handoff chains", agent(`{"prompt":"x","maxHandoffs":4,"resetToolChoice":false,"handoffs":[{"name":"b","agent":{"handoffs":["c"],"toolChoice":"required","resetToolChoice":false}},{"name":"c","agent":{"handoffs":["ag","b"]}}]}`)},
		{"stopWhen list", agent(`{"prompt":"x","tools":["search"],"stopWhen":[{"tool":"search"},{"textMatches":"^DONE"}]}`)},
		{"toolChoice required", agent(`{"prompt":"x","tools":["search"],"toolChoice":"required"}`)},
		{"toolChoice none without tools", agent(`{"prompt":"x","toolChoice":"none"}`)},
		{"toolChoice required of an agent with handoffs only", agent(`{"prompt":"x","toolChoice":"required","handoffs":[{"name":"b","agent":{}}]}`)},
		{"toolChoice from a template", `{"name":"a","inputs":{"choice":{"type":"string"}},"steps":[{"id":"ag","tool":"agent","inputs":{"prompt":"x","toolChoice":"{{ inputs.choice }}"}}]}`},
		{"toolChoice a tool", agent(`{"prompt":"x","tools":["search","workflow:other"],"toolChoice":"workflow:other"}`)},
	}
	for _, tt := range good {
		t.Run(tt.name, func(t *testing.T) {
			_, err := dsl.Load("agent.json", []byte(tt.file))
			require.NoError(t, err)
		})
	}
}
