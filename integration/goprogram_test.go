package integration

import (
	"bytes"
	"context"
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

// TestExampleResearch builds examples/research (the README's "Go: build a workflow and run it")
// and runs it as a user would next to a running weft dev: no TEMPORAL_ADDRESS, only the dev state
// file weft dev writes, found by client.Dial as the CLI finds it; the runs go to the shared queue's
// worker, the output comes back as Go values, the second run's events stream. The README's code
// block is the program's, so neither can change without the other.
func TestExampleResearch(t *testing.T) {
	src, err := os.ReadFile("../examples/research/main.go")
	require.NoError(t, err)
	s := string(src)
	from, to := strings.Index(s, "\t// README: Go: build a workflow and run it\n"), strings.Index(s, "\t// README: end\n")
	require.True(t, from >= 0 && to > from, "examples/research/main.go marks the README's block")
	var block strings.Builder
	for _, l := range strings.SplitAfter(s[from:to], "\n")[1:] {
		block.WriteString(strings.TrimPrefix(l, "\t"))
	}
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	at := strings.Index(string(readme), "### Go: build a workflow and run it\n")
	require.GreaterOrEqual(t, at, 0, "the README's section")
	section := string(readme)[at:]
	require.Contains(t, section, "```go\n"+block.String()+"```\n", "the README's Go example is examples/research's code")

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
	cmd := exec.Command(bin)
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

var goProgramTool = weftapi.Tool("goprogram_echo", "Echoes its text", func(_ context.Context, in echoText) (echoText, error) { return in, nil })

// TestGoProgramRunsDoNotStrand: an Engine started with its defaults sends a run that uses none of
// the program's Go tools to the shared queue when a worker polls it (it goes on after the program
// exits), keeps a run that uses them on its own queue, recorded as needing the program, and
// keeps every run when nothing polls the shared queue. A run that waits for its program says so,
// naming the queue and the program.
func TestGoProgramRunsDoNotStrand(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := dial(t)
	plain := weftapi.New("plain").Step("echo", "template", dsl.In{"text": "hi"})
	tooled := weftapi.New("tooled").Step("echo", goProgramTool.ToolName(), dsl.In{"Text": "hi"})

	shared := "goprogram-shared"
	startWorker(t, c, shared, nil)
	waitForPoller(t, c, shared)
	e, err := weftapi.Start(ctx, weftapi.Options{Temporal: c, Client: weftclient.Options{TaskQueue: shared}})
	require.NoError(t, err)
	own := e.TaskQueue()
	require.Equal(t, "weft-go-integration", own, "the program's queue is named for it")
	wc := weftclient.New(c, shared)

	for _, tc := range []struct {
		name           string
		wf             *weftapi.Workflow
		queue, program string
	}{
		{"no Go tools: the shared queue", plain, shared, ""},
		{"the program's Go tool: its own queue", tooled, own, "integration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := e.Start(ctx, tc.wf, nil)
			require.NoError(t, err)
			_, err = weftapi.Get[any](ctx, r)
			require.NoError(t, err)
			d, err := wc.Describe(ctx, r.ID)
			require.NoError(t, err)
			require.Equal(t, tc.queue, d.TaskQueue)
			require.Equal(t, tc.program, d.Program)
		})
	}
	e.Close()

	// Nothing polls the shared queue: the program's own worker runs everything, as before.
	alone, err := weftapi.Start(ctx, weftapi.Options{Temporal: c, Client: weftclient.Options{TaskQueue: "goprogram-nobody"}})
	require.NoError(t, err)
	r, err := alone.Start(ctx, plain, nil)
	require.NoError(t, err)
	_, err = weftapi.Get[any](ctx, r)
	require.NoError(t, err)
	d, err := wc.Describe(ctx, r.ID)
	require.NoError(t, err)
	require.Equal(t, own, d.TaskQueue)
	alone.Close()

	// The program has exited: its run waits, and says for what.
	compiled, err := tooled.Compile()
	require.NoError(t, err)
	waiting, err := weftclient.New(c, "weft-go-gone").Start(ctx, compiled, weftclient.StartOptions{Program: "gone"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.TerminateWorkflow(context.Background(), waiting.ID, "", "test over") })
	_, err = wc.State(ctx, waiting.ID)
	require.Error(t, err)
	for _, want := range []string{"the Go tools of the program gone", "task queue weft-go-gone", "until gone runs again"} {
		require.Contains(t, err.Error(), want)
	}
}

// waitForPoller waits until a worker polls queue (a worker's first poll follows its Start).
func waitForPoller(t *testing.T, c client.Client, queue string) {
	t.Helper()
	require.Eventually(t, func() bool {
		d, err := c.DescribeTaskQueue(context.Background(), queue, 1)
		return err == nil && len(d.GetPollers()) > 0
	}, 20*time.Second, 100*time.Millisecond, "a worker polls %s", queue)
}
