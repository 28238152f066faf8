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

	"github.com/weftworks/weft/internal/testkit/fakellm"
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
	got := runBrief(t, bin, fake)
	for _, want := range []string{"tool_call_finished facts", "step_completed pros", "step_completed cons", "step_completed verdict",
		"run_completed", "Worth it for long-running work.\n75 tokens, $"} {
		require.Contains(t, got, want)
	}
	checkBriefRequests(t, fake)
}

// briefModel is the scripted model of both brief programs: the agent calls shout until the tool's
// result is in its messages, then answers; pros, cons and the verdict answer by their prompts.
func briefModel(r fakellm.Request) fakellm.Reply {
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

// checkBriefRequests asserts what the model received from a brief program: the tool's result,
// the agent's answer in a parallel step, both parallel answers in the verdict.
func checkBriefRequests(t *testing.T, fake *fakellm.Server) {
	t.Helper()
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
			seen["tool result"], seen["tools"] = all, fmt.Sprint(r.Tools)
		}
	}
	require.Contains(t, seen["tools"], "shout", "the agent is offered the tool")
	require.Contains(t, seen["tool result"], `"Word":"TEMPORAL"`, "the Go function's result went back to the model")
	require.Contains(t, seen["pros"], "TEMPORAL runs durable workflows.", "a parallel step sees the agent's answer")
	require.Contains(t, seen["verdict"], "Pros: retries and replay.", "the last step sees both parallel answers")
	require.Contains(t, seen["verdict"], "Cons: one more service to run.")
}

// TestExampleRawTemporal builds examples/rawtemporal (examples/brief written against the raw
// Temporal SDK and go-openai, for comparison) and runs it the same way with the same model: the
// tool's result goes back to the model, the parallel steps see the agent's answer, the verdict
// sees both, each activity is printed as it completes and the tokens add up. It logs the line
// counts of both programs.
func TestExampleRawTemporal(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "rawtemporal")
	build := exec.Command("go", "build", "-o", bin, "../examples/rawtemporal")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	brief, raw := lineCounts(t, "../examples/brief/main.go"), lineCounts(t, "../examples/rawtemporal/main.go")
	t.Logf("examples/brief: %d lines of code (%d total); examples/rawtemporal: %d lines of code (%d total)",
		brief.code, brief.total, raw.code, raw.total)

	fake := fakellm.New()
	defer fake.Close()
	got := runBrief(t, bin, fake)
	for _, want := range []string{"completed facts.turn1\n", "completed facts.shout.c1\n", "completed facts.turn2\n",
		"completed pros\n", "completed cons\n", "completed verdict\n", "Worth it for long-running work.\n75 tokens\n"} {
		require.Contains(t, got, want)
	}
	require.NotContains(t, got, "failed", "no activity failed")
	checkBriefRequests(t, fake)
}

type lines struct{ code, total int }

// lineCounts counts a Go file's lines: all of them, and those that are neither blank nor only a
// comment.
func lineCounts(t *testing.T, path string) lines {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	var n lines
	for _, l := range strings.Split(strings.TrimSuffix(string(src), "\n"), "\n") {
		n.total++
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "//") {
			n.code++
		}
	}
	return n
}

// runBrief runs an example binary against the embedded stack with fake answering as briefModel
// does, and returns what it printed.
func runBrief(t *testing.T, bin string, fake *fakellm.Server) string {
	fake.Respond = briefModel
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+server.Address, "TEMPORAL_NAMESPACE="+server.Namespace,
		"OPENAI_BASE_URL="+fake.BaseURL, "OPENAI_API_KEY=k", "WEFT_CHAT_MODEL=gpt-4o-mini")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	require.NoError(t, cmd.Run(), stdout.String()+stderr.String())
	t.Logf("%s ran in %v", filepath.Base(bin), time.Since(start))
	return stdout.String()
}
