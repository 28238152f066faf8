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
	"github.com/weftworks/weft/internal/fakellm"
	"github.com/weftworks/weft/worker"
)

// TestAgentSDKOnTheEmbeddedStack: an agent with a handoff, a stop condition and guardrails runs
// on the embedded stack against the scripted model over HTTP; `weft fork` then starts a new run
// from its iteration 1 with an edited message, asking the model only for what comes after.
func TestAgentSDKOnTheEmbeddedStack(t *testing.T) {
	c := dial(t)
	queue := "agent-sdk-e2e"
	fake := fakellm.New(
		fakellm.ToolCall("t1", "transfer_to_billing", `{}`),
		fakellm.Text("DONE: refunded"),
	)
	defer fake.Close()
	cfg := activities.Config{MongoDBURI: store.URI, OpenAIBaseURL: fake.BaseURL, OpenAIAPIKey: "k", ChatModel: "gpt-4o-mini"}
	w, err := worker.New(c, worker.Options{TaskQueue: queue, Config: cfg})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	file := filepath.Join(t.TempDir(), "support.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"name":"support","steps":[
  {"id":"triage","tool":"agent","inputs":{"instructions":"Route questions (turn {{ agent.iteration }}).","prompt":"I want a refund","maxIterations":5,
    "stopWhen":{"textMatches":"^DONE:"},
    "guardrails":{"input":[{"name":"no-secrets","forbid":"(?i)password"}],"output":[{"name":"no-card","forbid":"\\d{16}"}]},
    "handoffs":[{"name":"billing","description":"Money questions.","agent":{"system":"You handle billing."}}]}}
],"output":"{{ triage.output }}"}`), 0o644))

	code, out, errOut := weft(t, queue, "run", file, "--detach", "--id", "sdk-e2e")
	require.Equal(t, 0, code, out+errOut)
	wc := weftclient.New(c, queue)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := wc.Result(ctx, "sdk-e2e")
	require.NoError(t, err)
	got := res.Output.GetStructValue().AsMap()
	require.Equal(t, "DONE: refunded", got["text"])
	require.Equal(t, "text_matched", got["stopReason"])
	require.Equal(t, "billing", got["agent"])
	reqs := fake.Requests()
	require.Len(t, reqs, 2)
	require.Equal(t, "Route questions (turn 1).", reqs[0].Messages[0]["content"])
	require.Equal(t, "You handle billing.", reqs[1].Messages[0]["content"], "billing continues the conversation")

	// Fork from iteration 1 (the handoff) with a new message: one more model call, by billing.
	fork := fakellm.New(fakellm.Text("DONE: refund declined"))
	defer fork.Close()
	w.Stop()
	cfg.OpenAIBaseURL = fork.BaseURL
	w2, err := worker.New(c, worker.Options{TaskQueue: queue, Config: cfg})
	require.NoError(t, err)
	require.NoError(t, w2.Start())
	t.Cleanup(w2.Stop)
	code, out, errOut = weft(t, queue, "fork", "sdk-e2e", "--step", "triage", "--iteration", "1", "--message", "Actually, it was a gift.", "--id", "sdk-e2e-fork")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "forking sdk-e2e at triage iteration 1")
	res, err = wc.Result(ctx, "sdk-e2e-fork")
	require.NoError(t, err)
	got = res.Output.GetStructValue().AsMap()
	require.Equal(t, "DONE: refund declined", got["text"])
	require.Equal(t, "billing", got["agent"])
	require.EqualValues(t, 2, got["iterations"])
	require.Equal(t, 1, fork.Count(), "iteration 1 was reused, not asked again")
	msgs := fork.Requests()[0].Messages
	require.Equal(t, "You handle billing.", msgs[0]["content"])
	require.Equal(t, "Actually, it was a gift.", msgs[len(msgs)-1]["content"])
	require.True(t, strings.HasPrefix(got["text"].(string), "DONE:"))
}
