package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	weftapi "github.com/weftworks/weft"
	"github.com/weftworks/weft/activities"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/internal/testkit/fakellm"
	"github.com/weftworks/weft/worker"
	"github.com/weftworks/weft/workflows/dsl"
)

// TestExampleResearch builds examples/research (docs/go.md's "The workflow builder and the client package")
// and runs it as a user would next to a running weft dev: no TEMPORAL_ADDRESS, only the dev state
// file weft dev writes, found by client.Dial as the CLI finds it; the runs go to the shared queue's
// worker, the output comes back as Go values, the second run's events stream. docs/go.md's code
// block is the program's, so neither can change without the other.
func TestExampleResearch(t *testing.T) {
	src, err := os.ReadFile("../examples/research/main.go")
	require.NoError(t, err)
	s := string(src)
	from, to := strings.Index(s, "\t// docs/go.md: The workflow builder and the client package\n"), strings.Index(s, "\t// docs/go.md: end\n")
	require.True(t, from >= 0 && to > from, "examples/research/main.go marks docs/go.md's block")
	var block strings.Builder
	for _, l := range strings.SplitAfter(s[from:to], "\n")[1:] {
		block.WriteString(strings.TrimPrefix(l, "\t"))
	}
	doc, err := os.ReadFile("../docs/go.md")
	require.NoError(t, err)
	at := strings.Index(string(doc), "## The workflow builder and the client package\n")
	require.GreaterOrEqual(t, at, 0, "docs/go.md's section")
	section := string(doc)[at:]
	require.Contains(t, section, "```go\n"+block.String()+"```\n", "docs/go.md's Go example is examples/research's code")

	bin := filepath.Join(t.TempDir(), "research")
	out, err := exec.Command("go", "build", "-o", bin, "../examples/research").CombinedOutput()
	require.NoError(t, err, string(out))

	queue := "readme-go"
	fake := fakellm.New()
	defer fake.Close()
	fake.Respond = func(fakellm.Request) fakellm.Reply { return fakellm.Text("Back off and retry.") }
	c := dial(t)
	w, err := worker.New(c, worker.Options{TaskQueue: queue, Config: activities.Config{MongoDBURI: store.URI, Database: "readme_go",
		OpenAIBaseURL: fake.BaseURL, OpenAIAPIKey: "k", ChatModel: "gpt-4o-mini"}})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	devState := filepath.Join(t.TempDir(), "dev.json")
	t.Setenv(weftclient.EnvDevState, devState)
	require.NoError(t, weftclient.WriteDevState(weftclient.DevState{PID: os.Getpid(), Temporal: server.Address, Namespace: server.Namespace, MongoDB: store.URI}))
	runCtx, stop := context.WithTimeout(context.Background(), 2*time.Minute)
	defer stop()
	cmd := exec.CommandContext(runCtx, bin)
	cmd.Env = append(withoutEnv(os.Environ(), "TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "WEFT_TASK_QUEUE", "WEFT_DEV_STATE"),
		"WEFT_DEV_STATE="+devState, "WEFT_TASK_QUEUE="+queue)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stdout.String()+stderr.String())
	got := stdout.String()
	require.True(t, strings.HasPrefix(got, "Back off and retry.\n"), "the summary, decoded into a Go struct: %s", got)
	for _, want := range []string{"step_completed research", "step_completed summary", "run_completed"} {
		require.Contains(t, got, want)
	}
}

func withoutEnv(env []string, keys ...string) []string {
	var out []string
next:
	for _, kv := range env {
		for _, k := range keys {
			if strings.HasPrefix(kv, k+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

type echoText struct{ Text string }

// goProgramMain is a Go program that uses the Go API, run by TestGoProgramRunsDoNotStrand as a
// process of its own (this test binary with WEFT_AS_GO_PROGRAM set, WEFT_TASK_QUEUE the shared queue): it
// declares a Go tool that waits until the program exits, starts a run without Go tools and one
// with the tool, prints their ids and exits without waiting for either.
func goProgramMain() int {
	weftapi.Tool("goprogram_wait", "Waits until the program exits", func(ctx context.Context, in echoText) (echoText, error) {
		<-ctx.Done()
		return in, ctx.Err()
	})
	ctx := context.Background()
	e, err := weftapi.Start(ctx, weftapi.Options{}) // the shared queue is WEFT_TASK_QUEUE
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer e.Close()
	for _, wf := range []*weftapi.Workflow{
		weftapi.New("plain").Step("hello", "template", dsl.In{"text": "hi"}),
		weftapi.New("tooled").Step("wait", "goprogram_wait", dsl.In{"Text": "hi"}),
	} {
		r, err := e.Start(ctx, wf, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println(r.ID)
	}
	fmt.Println(e.TaskQueue())
	return 0
}

// TestGoProgramRunsDoNotStrand runs a Go program (goProgramMain) that starts two runs and exits.
// With a worker on the shared queue, the run that uses none of its Go tools went there and
// completes without the program; the one that uses its tool stayed on the program's own queue,
// recorded as needing the program, and its state says it waits for that program on that queue.
// With nothing polling the shared queue, the program's own worker was the only one to send a
// run to, as before.
func TestGoProgramRunsDoNotStrand(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := dial(t)
	wc := weftclient.New(c, "goprogram-shared")
	program := func(shared string) (plain, tooled, own string) {
		cmd := exec.Command(os.Args[0], "-test.run", "^$")
		cmd.Env = append(os.Environ(), "WEFT_AS_GO_PROGRAM=1", "WEFT_TASK_QUEUE="+shared, "TEMPORAL_ADDRESS="+server.Address, "TEMPORAL_NAMESPACE="+server.Namespace)
		out, err := cmd.Output()
		require.NoError(t, err, string(out))
		ids := strings.Fields(string(out))
		require.Len(t, ids, 3, string(out))
		for _, id := range ids[:2] {
			t.Cleanup(func() { _ = c.TerminateWorkflow(context.Background(), id, "", "test over") })
		}
		return ids[0], ids[1], ids[2]
	}

	startWorker(t, c, "goprogram-shared", nil)
	waitForPoller(t, c, "goprogram-shared")
	plain, tooled, own := program("goprogram-shared")
	require.Equal(t, "weft-go-integration", own, "the program's queue is named for it")
	res, err := wc.Result(ctx, plain)
	require.NoError(t, err, "the run without Go tools completes after the program exited")
	require.Equal(t, "hi", weftclient.Output(res).(map[string]any)["text"])
	for _, tc := range []struct{ id, queue, program string }{{plain, "goprogram-shared", ""}, {tooled, own, "integration"}} {
		d, err := wc.Describe(ctx, tc.id)
		require.NoError(t, err)
		require.Equal(t, tc.queue, d.TaskQueue, tc.id)
		require.Equal(t, tc.program, d.Program, tc.id)
	}
	_, err = wc.State(ctx, tooled)
	require.Error(t, err)
	for _, want := range []string{"uses the Go tools of the program integration", "task queue weft-go-integration", "until integration runs again"} {
		require.Contains(t, err.Error(), want)
	}

	// Nothing polls the shared queue: the run went to the program's own queue.
	plain, _, _ = program("goprogram-nobody")
	d, err := wc.Describe(ctx, plain)
	require.NoError(t, err)
	require.Equal(t, own, d.TaskQueue)
	require.Empty(t, d.Program)
}

// waitForPoller waits until a worker polls queue (a worker's first poll follows its Start).
func waitForPoller(t *testing.T, c client.Client, queue string) {
	t.Helper()
	require.Eventually(t, func() bool {
		d, err := c.DescribeTaskQueue(context.Background(), queue, 1)
		return err == nil && len(d.GetPollers()) > 0
	}, 20*time.Second, 100*time.Millisecond, "a worker polls %s", queue)
}
