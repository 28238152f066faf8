package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	weftgo "github.com/weftworks/weft"
	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/internal/testkit/fakellm"
)

type ledgerAccount struct {
	Account string `json:"account"`
}

// goToolProgramMain is a Go program with a Go tool, run by TestGoToolErrorGoesBackAtOnce as a
// process of its own (this test binary with WEFT_AS_GO_TOOL_PROGRAM set), so the tool is not
// declared in the test process, whose other workers have no handler for it. Its agent asks the
// ledger tool, which fails every attempt with a plain error, or (WEFT_LEDGER=retryable) its first
// with a weft.Retryable one; it prints the attempts and how long the run took.
func goToolProgramMain() int {
	var attempts atomic.Int32
	retryable := os.Getenv("WEFT_LEDGER") == "retryable"
	ledger := weftgo.Tool("integ_ledger", "Looks an account up", func(_ context.Context, in ledgerAccount) (map[string]any, error) {
		n := attempts.Add(1)
		switch {
		case !retryable:
			return nil, fmt.Errorf("no account %q: ask for one that exists", in.Account)
		case n < 2:
			return nil, weftgo.Retryable(errors.New("the ledger service is down"))
		}
		return map[string]any{"account": in.Account, "balance": 12}, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := activities.Config{MongoDBURI: os.Getenv("WEFT_TEST_MONGODB"), OpenAIBaseURL: os.Getenv("OPENAI_BASE_URL"), OpenAIAPIKey: "k", ChatModel: "gpt-4o-mini"}
	e, err := weftgo.Start(ctx, weftgo.Options{TaskQueue: "gotool-error", Config: &cfg})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer e.Close()
	wf := weftgo.New("ledger").Agent("a", "Balance of account 42?", weftgo.Tools(ledger), weftgo.MaxIterations(3))
	start := time.Now()
	res, err := weftgo.Run[string](ctx, e, wf, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("%d %d %s\n", attempts.Load(), time.Since(start).Milliseconds(), res.Output)
	return 0
}

// TestGoToolErrorGoesBackAtOnce runs an agent with a Go tool (goToolProgramMain) on the embedded
// stack, the OpenAI-compatible fake as its model: a plain error is tried once and is the tool's
// result in the model's next request, without the retry policy's backoff (5 attempts, 15 s of
// it, before); a weft.Retryable error is tried again and the model gets the answer.
func TestGoToolErrorGoesBackAtOnce(t *testing.T) {
	tests := []struct {
		ledger       string
		wantAttempts string
		wantResult   string
	}{
		{ledger: "plain", wantAttempts: "1", wantResult: `error: integ_ledger: no account "42": ask for one that exists`},
		{ledger: "retryable", wantAttempts: "2", wantResult: `"balance":12`},
	}
	for _, tc := range tests {
		t.Run(tc.ledger, func(t *testing.T) {
			fake := fakellm.New(fakellm.ToolCall("c1", "integ_ledger", `{"account":"42"}`), fakellm.Text("done"))
			defer fake.Close()
			cmd := exec.Command(os.Args[0], "-test.run", "^$")
			cmd.Env = append(withoutEnv(os.Environ(), "WEFT_TASK_QUEUE"), "WEFT_AS_GO_TOOL_PROGRAM=1", "WEFT_LEDGER="+tc.ledger,
				"TEMPORAL_ADDRESS="+server.Address, "TEMPORAL_NAMESPACE="+server.Namespace, "WEFT_TEST_MONGODB="+store.URI, "OPENAI_BASE_URL="+fake.BaseURL)
			out, err := cmd.Output()
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Log(string(ee.Stderr))
			}
			require.NoError(t, err, string(out))
			f := strings.Fields(string(out))
			require.Len(t, f, 3, string(out))
			t.Logf("%s error: %s attempt(s), the run took %s ms", tc.ledger, f[0], f[1])
			require.Equal(t, tc.wantAttempts, f[0], "attempts of the tool call")
			require.Equal(t, "done", f[2])
			reqs := fake.Requests()
			require.Len(t, reqs, 2)
			last := reqs[1].Messages[len(reqs[1].Messages)-1]
			require.Equal(t, "tool", last["role"])
			require.Contains(t, last["content"], tc.wantResult)
		})
	}
}
