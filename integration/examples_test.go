package integration

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/internal/fakellm"
)

// TestExampleBrief builds examples/brief (seed 004's program, 25 lines of the Go API) and runs it
// as a user would, against the embedded stack and the scripted model: the agent calls the Go
// function tool, the parallel steps see the agent's answer, the last step sees both, the events
// stream and the usage adds up.
func TestExampleBrief(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "brief")
	build := exec.Command("go", "build", "-o", bin, "../examples/brief")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	src, err := os.ReadFile("../examples/brief/main.go")
	require.NoError(t, err)
	require.LessOrEqual(t, bytes.Count(src, []byte("\n")), 25, "the example stays at most 25 lines")

	fake := fakellm.New()
	defer fake.Close()
	fake.Respond = func(r fakellm.Request) fakellm.Reply {
		all := fmt.Sprint(r.Messages)
		switch {
		case strings.Contains(all, "Weigh them"):
			return fakellm.Text("Worth it for long-running work.")
		case strings.Contains(all, "List the pros"):
			return fakellm.Text("Pros: retries and replay.")
		case strings.Contains(all, "List the cons"):
			return fakellm.Text("Cons: one more service to run.")
		case !strings.Contains(all, "TEMPORAL"):
			return fakellm.ToolCall("c1", "shout", `{"Word":"temporal"}`)
		}
		return fakellm.Text("TEMPORAL runs durable workflows.")
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+server.Address, "TEMPORAL_NAMESPACE="+server.Namespace,
		"OPENAI_BASE_URL="+fake.BaseURL, "OPENAI_API_KEY=k", "WEFT_CHAT_MODEL=gpt-4o-mini")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	require.NoError(t, cmd.Run(), stdout.String()+stderr.String())
	t.Logf("examples/brief ran in %v", time.Since(start))
	got := stdout.String()
	for _, want := range []string{"tool_call_finished facts", "step_completed pros", "step_completed cons", "step_completed verdict",
		"run_completed", "Worth it for long-running work.\n75 tokens, $"} {
		require.Contains(t, got, want)
	}
	require.Equal(t, 5, fake.Count(), "two agent iterations, pros, cons, verdict")
	seen := map[string]string{}
	for _, r := range fake.Requests() {
		all := fmt.Sprint(r.Messages)
		switch {
		case strings.Contains(all, "Weigh them"):
			seen["verdict"] = all
		case strings.Contains(all, "List the pros"):
			seen["pros"] = all
		case strings.Contains(all, "List the cons"):
		case strings.Contains(all, "TEMPORAL"):
			seen["tool result"] = all
		}
	}
	require.Contains(t, seen["tool result"], `"Word":"TEMPORAL"`, "the Go function's result went back to the model")
	require.Contains(t, seen["pros"], "TEMPORAL runs durable workflows.", "a parallel step sees the agent's answer")
	require.Contains(t, seen["verdict"], "Pros: retries and replay.", "the last step sees both parallel answers")
	require.Contains(t, seen["verdict"], "Cons: one more service to run.")
}
