package starter

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/events"
	"github.com/weftworks/weft/workflows/dsl"
)

// TestChatStreamsTheAnswer: weft chat prints the llm_delta events Stream makes of each read of the
// model's text, starts a new line for the agent's next model call and for a retry, and finishes with the rest of the
// answer (or the whole answer when what streamed did not begin it); text that started over says
// the text above is discarded.
func TestChatStreamsTheAnswer(t *testing.T) {
	llm := func(id, text string) []weftclient.PendingActivity {
		return []weftclient.PendingActivity{{ActivityID: id, Type: "llm", Details: text}, {ActivityID: "chat/c1#2", Type: "search"}}
	}
	for _, tc := range []struct {
		name   string
		reads  [][]weftclient.PendingActivity
		answer string
		want   string
	}{
		{"one call", [][]weftclient.PendingActivity{llm("chat#1", "They are"), llm("chat#1", "They are retried")},
			"They are retried with backoff.", "They are retried with backoff.\n"},
		{"nothing streamed", nil, "Noted.", "Noted.\n"},
		{"the next iteration's call", [][]weftclient.PendingActivity{llm("chat#1", "Let me search."), llm("chat#3", "Retries")},
			"Retries back off.", "Let me search.\nRetries back off.\n"},
		{"a retry starts over", [][]weftclient.PendingActivity{llm("chat#1", "Firs"), llm("chat#1", "Second")},
			"Second try.", "Firs\n↻ (attempt 2, restarted: the text above is discarded) Second try.\n"},
		{"an answer that is not what streamed", [][]weftclient.PendingActivity{llm("chat#1", "Draft")},
			"Final.", "Draft\nFinal.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			var p streamPrinter
			var follow weftclient.TextFollower
			for _, r := range tc.reads {
				for _, d := range follow.Next(weftclient.LLMText(r)) {
					p.add(&out, events.Event{Type: events.LLMDelta, Activity: d.ActivityID, Attempt: d.Attempt, Offset: d.Offset, Restarted: d.Restarted, Text: d.New})
				}
			}
			p.finish(&out, tc.answer)
			require.Equal(t, tc.want, out.String())
		})
	}
}

func TestChatServers(t *testing.T) {
	tests := []struct {
		name          string
		mcp, stateful []string
		want          map[string]dsl.MCPServer
		tools         []string
		wantErr       string
	}{
		{name: "none", want: nil},
		{name: "a command and a URL, one stateful", mcp: []string{"mem=npx -y server-memory", "docs=https://docs.example/mcp"}, stateful: []string{"mem"},
			want: map[string]dsl.MCPServer{
				"mem":  {Command: "npx", Args: []string{"-y", "server-memory"}, Stateful: true},
				"docs": {URL: "https://docs.example/mcp", KeyEnv: "DOCS_MCP_KEY"},
			}, tools: []string{"mcp:mem", "mcp:docs"}},
		{name: "stateful names no server", mcp: []string{"mem=server-memory"}, stateful: []string{"browser"},
			wantErr: `--mcp-stateful "browser" names no --mcp server`},
		{name: "no target", mcp: []string{"mem="}, wantErr: `--mcp "mem=": write NAME=COMMAND`},
		{name: "twice", mcp: []string{"mem=a", "mem=b"}, wantErr: "a server named mem is given twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, tools, err := chatServers(tc.mcp, tc.stateful)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.tools, tools)
		})
	}
}
