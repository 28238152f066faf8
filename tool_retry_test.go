package weft

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/toolspec"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
	"github.com/weftworks/weft/workflows"
)

type ledgerIn struct {
	Account string `json:"account"`
}

// ledgerFails is what the ledger tool returns on its attempt n (1-based); nil: it answers.
var (
	ledgerMu       sync.Mutex
	ledgerFails    func(attempt int) error
	ledgerAttempts int
)

var _ = Tool("weft_test_ledger", "Looks an account up", func(ctx context.Context, in ledgerIn) (map[string]any, error) {
	ledgerMu.Lock()
	defer ledgerMu.Unlock()
	ledgerAttempts++
	if err := ledgerFails(ledgerAttempts); err != nil {
		return nil, err
	}
	return map[string]any{"account": in.Account, "balance": 12}, nil
})

// TestGoToolErrorsReachTheModel runs an agent whose Go tool fails: a plain error is tried once
// and its text is the tool's result in the model's next turn; an error marked Retryable is tried
// again (the activity retry policy), up to the tool's MaxAttempts.
func TestGoToolErrorsReachTheModel(t *testing.T) {
	down := errors.New("the ledger service is down")
	tests := []struct {
		name         string
		fails        func(attempt int) error
		wantAttempts int
		wantResult   string
	}{
		{name: "a plain error goes back at once", fails: func(int) error { return fmt.Errorf("no account %q: ask for one that exists", "42") },
			wantAttempts: 1, wantResult: `error: weft_test_ledger: no account "42": ask for one that exists`},
		{name: "a retryable error is retried", fails: func(n int) error {
			if n < 3 {
				return Retryable(down)
			}
			return nil
		}, wantAttempts: 3, wantResult: `"balance":12`},
		{name: "a retryable error that lasts reaches the model after MaxAttempts", fails: func(int) error { return Retryable(down) },
			wantAttempts: 5, wantResult: "the ledger service is down"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ledgerMu.Lock()
			ledgerFails, ledgerAttempts = tc.fails, 0
			ledgerMu.Unlock()
			var seen [][]any
			model := func(_ context.Context, in map[string]any) (any, *toolspec.Usage, error) {
				msgs, _ := in["messages"].([]any)
				seen = append(seen, msgs)
				if len(seen) == 1 {
					return map[string]any{"text": "", "toolCalls": []any{
						map[string]any{"id": "c1", "name": "weft_test_ledger", "arguments": `{"account":"42"}`}}}, nil, nil
				}
				return map[string]any{"text": "done", "toolCalls": []any{}}, nil, nil
			}
			var s testsuite.WorkflowTestSuite
			s.SetLogger(tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
			env := s.NewTestWorkflowEnvironment()
			env.RegisterWorkflowWithOptions(workflows.Run, workflow.RegisterOptions{Name: runwire.WorkflowType})
			llm, ok := toolspec.Lookup("llm")
			require.True(t, ok)
			env.RegisterActivityWithOptions(activities.Activity(llm, model), activity.RegisterOptions{Name: "llm"})
			env.RegisterActivityWithOptions(activities.Activity(ledgerSpec(t), handlers()["weft_test_ledger"]), activity.RegisterOptions{Name: "weft_test_ledger"})
			def := `{"name":"ledger","steps":[{"id":"a","tool":"agent","inputs":{"prompt":"Balance of 42?","tools":["weft_test_ledger"],"maxIterations":3}}],"output":"{{ a.output }}"}`
			env.ExecuteWorkflow(runwire.WorkflowType, &weftv1.RunRequest{DefinitionJson: def, Inputs: &structpb.Struct{}, Source: "test.json"})
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())

			require.Equal(t, tc.wantAttempts, ledgerAttempts, "attempts of the tool call")
			require.Len(t, seen, 2, "the model was called again after the tool")
			last := seen[1][len(seen[1])-1].(map[string]any)
			require.Equal(t, "tool", last["role"])
			require.Contains(t, last["content"], tc.wantResult)
		})
	}
}

func ledgerSpec(t *testing.T) *toolspec.Spec {
	s, ok := toolspec.Lookup("weft_test_ledger")
	require.True(t, ok)
	return s
}

func TestRetryable(t *testing.T) {
	require.NoError(t, Retryable(nil))
	base := errors.New("down")
	err := fmt.Errorf("calling: %w", Retryable(base))
	var re *RetryableError
	require.ErrorAs(t, err, &re)
	require.ErrorIs(t, err, base)
	require.Equal(t, "calling: down", err.Error())
}
