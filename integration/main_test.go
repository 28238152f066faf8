package integration

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/toolspec"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/devdb"
	"github.com/weftworks/weft/devserver"
	"github.com/weftworks/weft/starter"
	"github.com/weftworks/weft/worker"
)

var (
	server *devserver.Server
	store  *devdb.DB
	// updateHistories rewrites workflows/testdata/histories from fresh runs.
	updateHistories = flag.Bool("update-histories", false, "record the replay histories again")
)

func TestMain(m *testing.M) {
	if os.Getenv("WEFT_CRASH_WORKER") != "" {
		os.Exit(crashWorkerMain())
	}
	if os.Getenv("WEFT_AS_FOLLOWER") != "" {
		os.Exit(followerMain()) // a follower process (followers_bench_test.go)
	}
	if os.Getenv("WEFT_AS_GO_PROGRAM") != "" {
		os.Exit(goProgramMain()) // a Go program of the Go API (goprogram_test.go)
	}
	if os.Getenv("WEFT_AS_GO_TOOL_PROGRAM") != "" {
		os.Exit(goToolProgramMain()) // a Go program with a Go tool that fails (gotool_error_test.go)
	}
	if os.Getenv("WEFT_AS_MCP_SERVER") != "" {
		// weft's own gateway over stdio, as an MCP server for an agent under test.
		os.Exit(starter.Execute([]string{"mcp", "--no-builtins"}, os.Stdin, os.Stdout, os.Stderr))
	}
	flag.Parse()
	// A weft dev running on this machine must not steer the tests' commands.
	_ = os.Setenv("WEFT_DEV_STATE", filepath.Join(os.TempDir(), fmt.Sprintf("weft-test-dev-%d.json", os.Getpid())))
	var err error
	server, err = devserver.Start(context.Background(), devserver.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the embedded Temporal server:", err)
		os.Exit(1)
	}
	store, err = devdb.StartTemp(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the embedded database:", err)
		os.Exit(1)
	}
	code := m.Run()
	removeBuilt()
	store.Close()
	server.Stop()
	os.Exit(code)
}

func dial(t testing.TB) client.Client {
	t.Helper()
	endLeftovers(t)
	// compressed as weft's own connections are (weftclient.GRPCCompression): not on loopback
	comp, err := weftclient.GRPCCompression(server.Address)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(client.Options{HostPort: server.Address, Namespace: server.Namespace, Logger: quiet(),
		ConnectionOptions: client.ConnectionOptions{GrpcCompression: comp}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// leftoversEnded holds the tests whose leftover runs endLeftovers ends.
var leftoversEnded sync.Map

// endLeftovers terminates, when the top-level test t ends, every run started since its first
// connection that is still running. A test's worker goes with it, so a run it left waiting for a
// review or a message would answer no query again: every later listing of pending reviews asked
// each such run for its state until the query timed out (TestPendingReviewsEverywhere took 46 s
// in the package, 0.4 s alone). Tests run one at a time (none is parallel), so what started
// since is the test's own. A subtest's runs are ended with its top-level test's when that one
// connected first.
func endLeftovers(t testing.TB) {
	if strings.Contains(t.Name(), "/") {
		return
	}
	if _, dup := leftoversEnded.LoadOrStore(t, struct{}{}); dup {
		return
	}
	since := time.Now().UTC()
	t.Cleanup(func() {
		leftoversEnded.Delete(t)
		c, err := client.Dial(client.Options{HostPort: server.Address, Namespace: server.Namespace, Logger: quiet()})
		if err != nil {
			t.Logf("ending the runs the test left running: %v", err)
			return
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		q := fmt.Sprintf(`ExecutionStatus = "Running" AND StartTime >= %q`, since.Format(time.RFC3339Nano))
		ended := 0
		var token []byte
		for {
			resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q, PageSize: 100, NextPageToken: token})
			if err != nil {
				t.Logf("listing the runs the test left running (%s): %v", q, err)
				return
			}
			for _, e := range resp.GetExecutions() {
				if c.TerminateWorkflow(ctx, e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId(), "the test that started it ended") == nil {
					ended++
				}
			}
			if token = resp.GetNextPageToken(); len(token) == 0 {
				break
			}
		}
		if ended > 0 {
			t.Logf("ended %d runs the test left running", ended)
		}
	})
}

// startWorker runs a worker on its own task queue with the given tool handlers.
func startWorker(t testing.TB, c client.Client, queue string, handlers map[string]activities.Handler) sdkworker.Worker {
	t.Helper()
	w, err := worker.New(c, worker.Options{TaskQueue: queue, Handlers: handlers})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

// weft runs the CLI in-process against the embedded server.
func weft(t testing.TB, queue string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	full := append(append([]string{}, args...), "--address", server.Address, "--namespace", server.Namespace)
	if queue != "" {
		full = append(full, "--task-queue", queue)
	}
	endLeftovers(t)
	code := starter.Execute(full, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// weftIn is weft with standard input.
func weftIn(t testing.TB, queue, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	full := append(append([]string{}, args...), "--address", server.Address, "--namespace", server.Namespace)
	if queue != "" {
		full = append(full, "--task-queue", queue)
	}
	endLeftovers(t)
	code := starter.Execute(full, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// weftEnv runs a command that takes no connection flags, with environment variables set.
func weftEnv(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	var out, errb bytes.Buffer
	code := starter.Execute(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// sideEffects counts tool executions in a file, so that several worker processes can share it.
type sideEffects struct {
	mu   sync.Mutex
	path string
}

func (s *sideEffects) record(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := os.OpenFile(s.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	fmt.Fprintln(f, line)
}

func (s *sideEffects) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	data, _ := os.ReadFile(s.path)
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

func (s *sideEffects) count(line string) int {
	n := 0
	for _, l := range s.lines() {
		if l == line {
			n++
		}
	}
	return n
}

// countingEmbed is an embed handler that records "start X" and "done X" for text X and takes
// a few seconds for texts starting with "slow".
func countingEmbed(se *sideEffects) activities.Handler {
	return func(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
		text := fmt.Sprint(in["text"])
		se.record("start " + text)
		if strings.HasPrefix(text, "slow") {
			select {
			case <-time.After(3 * time.Second):
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		}
		se.record("done " + text)
		return map[string]any{"text": text, "dimensions": 3}, &toolspec.Usage{EmbeddingTokens: int64(len(text))}, nil
	}
}

// crashWorker is a worker process the crash tests kill with SIGKILL.
type crashWorker struct {
	proc   *exec.Cmd
	killed bool
}

// startCrashWorker starts a worker process on queue that records its tool calls in se.
func startCrashWorker(t *testing.T, queue string, se *sideEffects, env ...string) *crashWorker {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	proc := exec.Command(self, "-test.run=^$")
	proc.Env = append(append(os.Environ(), "WEFT_CRASH_WORKER="+queue, "WEFT_ADDRESS="+server.Address, "WEFT_SIDE_EFFECTS="+se.path), env...)
	proc.Stderr = os.Stderr
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	w := &crashWorker{proc: proc}
	t.Cleanup(func() {
		if !w.killed {
			_ = proc.Process.Kill()
			_, _ = proc.Process.Wait()
		}
	})
	return w
}

// kill ends the worker process with SIGKILL: no cleanup, as when a machine dies.
func (w *crashWorker) kill(t *testing.T) {
	t.Helper()
	if err := w.proc.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = w.proc.Process.Wait()
	w.killed = true
}

// historyLength counts a run's history events.
func historyLength(t testing.TB, c client.Client, id string) int {
	t.Helper()
	n := 0
	it := c.GetWorkflowHistory(context.Background(), id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		if _, err := it.Next(); err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// crashHandlers are the tools of the crash tests' workers: counted in the side-effects file.
func crashHandlers(se *sideEffects) map[string]activities.Handler {
	return map[string]activities.Handler{"embed": countingEmbed(se), "search": countingSearch(se), "ingest": fakeIngest(se)}
}

func countingSearch(se *sideEffects) activities.Handler {
	return func(ctx context.Context, in map[string]any) (any, *toolspec.Usage, error) {
		se.record("search " + fmt.Sprint(in["query"]))
		return fakeSearch(ctx, in)
	}
}

// crashWorkerMain is the worker process the crash test starts and kills.
func crashWorkerMain() int {
	c, err := client.Dial(client.Options{HostPort: os.Getenv("WEFT_ADDRESS"), Logger: quiet()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	se := &sideEffects{path: os.Getenv("WEFT_SIDE_EFFECTS")}
	handlers := crashHandlers(se)
	if os.Getenv("WEFT_CRASH_REAL_TOOLS") != "" {
		handlers = nil // the real tools, on the store MONGODB_URI names
	}
	w, err := worker.New(c, worker.Options{TaskQueue: os.Getenv("WEFT_CRASH_WORKER"), Config: activities.ConfigFromEnv(os.Getenv), Handlers: handlers})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := w.Run(sdkworker.InterruptCh()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
