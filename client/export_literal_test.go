package client

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows/dsl"
)

// TestExportWorkflowKeepsTemplateTextLiteral: an argument a chat call was given that holds
// template text with a numeric path segment ({{ x.0 }}, vai's spelling) is data the call received,
// not a reference: the exported file, saved as weft chat saves it and loaded as weft run loads
// it (whatever its name), is weft's own, and the step is given exactly the text the call was
// given, segment and braces included.
func TestExportWorkflowKeepsTemplateTextLiteral(t *testing.T) {
	for _, literal := range []string{
		"{{ x.0 }}",
		"Summarise {{ results.0.content }} in one line",
		"{{x.0}} and {{ steps.1.output }} and results.0.score",
	} {
		for _, file := range []string{"export.weft.json", "export.json"} {
			t.Run(literal+" in "+file, func(t *testing.T) {
				s := &runwire.ChatSession{Turns: []runwire.ChatTurn{{N: 1, Question: "summarise the results", ToolCalls: []any{
					map[string]any{"tool": "generate", "status": "completed", "arguments": map[string]any{"prompt": literal}, "result": `{"text":"ok"}`},
				}}}}
				def, err := ExportWorkflow(s, false, "export")
				require.NoError(t, err)
				data, err := json.MarshalIndent(def, "", "  ")
				require.NoError(t, err)

				w, err := dsl.Load(file, data)
				require.NoError(t, err)
				require.Equal(t, dsl.DialectWeft, w.Dialect, "read as weft's own: %s", w.DialectReason)
				st, ok := w.Step("generate_1")
				require.True(t, ok)
				got, err := st.InputValue.Resolve(map[string]any{"inputs": map[string]any{"question": "summarise the results"}})
				require.NoError(t, err)
				require.Equal(t, literal, got.(map[string]any)["prompt"], "the call gets the text it was given")
			})
		}
	}
}
