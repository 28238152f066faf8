package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/internal/testkit/fakellm"
	"github.com/weftworks/weft/worker"
)

// TestForkAFailedAgentOnTheEmbeddedStack: an agent whose second model call fails (HTTP 400) fails
// its step; `weft fork` from its iteration 1 reads the recorded conversation from the run's
// history and asks the model only for iteration 2, with the chunk call's result reused.
func TestForkAFailedAgentOnTheEmbeddedStack(t *testing.T) {
	c := dial(t)
	queue := "agent-fork-failed"
	fake := fakellm.New(fakellm.ToolCall("c1", "chunk", `{"text":"hello world"}`), fakellm.Error(400, ""))
	defer fake.Close()
	cfg := activities.Config{MongoDBURI: store.URI, OpenAIBaseURL: fake.BaseURL, OpenAIAPIKey: "k", ChatModel: "gpt-4o-mini"}
	w, err := worker.New(c, worker.Options{TaskQueue: queue, Config: cfg})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	file := filepath.Join(t.TempDir(), "split.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"name":"split","steps":[
  {"id":"ag","tool":"agent","inputs":{"instructions":"Split text (turn {{ agent.iteration }}).","prompt":"Split hello world","tools":["chunk"],"maxIterations":5}}
],"output":"{{ ag.output }}"}`), 0o644))

	code, out, errOut := weft(t, queue, "run", file, "--detach", "--id", "fork-failed")
	require.Equal(t, 0, code, out+errOut)
	wc := weftclient.New(c, queue)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err = wc.Result(ctx, "fork-failed")
	require.Error(t, err, "the second model call failed the step")
	require.Equal(t, 2, fake.Count())

	fork := fakellm.New(fakellm.Text("Two words."))
	defer fork.Close()
	w.Stop()
	cfg.OpenAIBaseURL = fork.BaseURL
	w2, err := worker.New(c, worker.Options{TaskQueue: queue, Config: cfg})
	require.NoError(t, err)
	require.NoError(t, w2.Start())
	t.Cleanup(w2.Stop)
	code, out, errOut = weft(t, queue, "fork", "fork-failed", "--step", "ag", "--iteration", "2")
	require.NotEqual(t, 0, code, "iteration 2 never completed")
	require.Contains(t, out+errOut, "recorded 1 iteration")
	code, out, errOut = weft(t, queue, "fork", "fork-failed", "--step", "ag", "--iteration", "1", "--message", "Count the words.", "--id", "fork-failed-2", "--detach")
	require.Equal(t, 0, code, out+errOut)
	res, err := wc.Result(ctx, "fork-failed-2")
	require.NoError(t, err)
	got := res.Output.GetStructValue().AsMap()
	require.Equal(t, "Two words.", got["text"])
	require.EqualValues(t, 2, got["iterations"])
	require.Len(t, got["toolCalls"], 1, "the recorded chunk call is kept")
	require.Equal(t, 1, fork.Count(), "iteration 1 was reused, not asked again")
	msgs := fork.Requests()[0].Messages
	require.Equal(t, "Split text (turn 2).", msgs[0]["content"], "the instructions, rendered for this turn")
	require.Equal(t, "Split hello world", msgs[1]["content"], "the recorded instructions are not in the conversation")
	require.Equal(t, "tool", msgs[3]["role"])
	require.Equal(t, "Count the words.", msgs[len(msgs)-1]["content"])
	require.Len(t, msgs, 5)
}
