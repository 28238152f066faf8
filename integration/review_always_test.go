package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/internal/testkit/fakellm"
)

// TestReviewAlwaysFromTheCLI: `weft review ID approve --always` on an agent's tool call decides
// the later calls of that tool in the run without waiting; `weft status` shows each of them
// "approved by rule of ana at …", and an edit with --always is refused before anything is sent
// (issue 44, item 5).
func TestReviewAlwaysFromTheCLI(t *testing.T) {
	queue := "review-always"
	fake := fakellm.New(
		fakellm.ToolCall("c1", "ingest", `{"text":"one","source":"notes/1.md"}`),
		fakellm.ToolCall("c2", "ingest", `{"text":"two","source":"notes/2.md"}`),
		fakellm.ToolCall("c3", "ingest", `{"text":"three","source":"notes/3.md"}`),
		fakellm.Text("filed three notes"),
	)
	defer fake.Close()
	se := &sideEffects{path: filepath.Join(t.TempDir(), "effects.log")}
	startWorkerWithConfig(t, queue, activities.Config{OpenAIBaseURL: fake.BaseURL, ChatModel: "local-model"},
		map[string]activities.Handler{"ingest": fakeIngest(se)})
	file := filepath.Join(t.TempDir(), "always.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"name":"always","steps":[
	  {"id":"helper","tool":"agent","inputs":{"prompt":"file the notes","tools":["ingest"],"approve":["ingest"],"maxIterations":6}}],
	  "output":"{{ helper.output.text }}"}`), 0o644))
	code, _, errOut := weft(t, queue, "run", file, "--detach", "--id", "review-always-1")
	require.Equal(t, 0, code, errOut)
	c := weftclient.New(dial(t), queue)
	waitForGate(t, c, "review-always-1", "helper/c1")

	code, _, errOut = weft(t, queue, "review", "review-always-1", "edit", "--id", "helper/c1", "--data", `{"text":"x","source":"y"}`, "--always")
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, "--always is for approve or reject")
	code, out, errOut := weft(t, queue, "review", "review-always-1", "approve", "--id", "helper/c1", "--always", "--reviewer", "ana")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "approve recorded for helper/c1 and the later calls of its tool in this run")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.Result(ctx, "review-always-1")
	require.NoError(t, err, "c2 and c3 did not wait for a person")
	require.Equal(t, "filed three notes", res.Output.GetStringValue())
	require.Equal(t, 3, se.count("ingest notes/1.md")+se.count("ingest notes/2.md")+se.count("ingest notes/3.md"))
	st, err := c.State(ctx, "review-always-1")
	require.NoError(t, err)
	calls := st.Steps[0].ToolCalls
	require.Len(t, calls, 3)
	require.Empty(t, calls[0].Rule, "ana decided c1 herself")
	for _, tc := range calls[1:] {
		require.Equal(t, "ana", tc.Reviewer)
		require.True(t, strings.HasPrefix(tc.Rule, "approved by rule of ana at "), tc.Rule)
	}
	code, out, errOut = weft(t, queue, "status", "review-always-1")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, 2, strings.Count(out, "· approved by rule of ana at "), out)
}
