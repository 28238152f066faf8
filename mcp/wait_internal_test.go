package mcp

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestWaitRanOutDecidesFromTheError: a wf_ tool whose run outlives --wait answers "running"
// whatever form the deadline takes, in particular the server's DEADLINE_EXCEEDED that arrives
// while the wait's own context has not yet noticed (issue 21, item 7: 2 of 4 calls answered
// "execution … failed: context deadline exceeded"). A run that ended, or a caller that left, is
// not "running".
func TestWaitRanOutDecidesFromTheError(t *testing.T) {
	live := context.Background()
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	runFailed := temporal.NewApplicationError("step \"x\" failed", "StepFailed")
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{"server deadline before the wait's context expired", live, serviceerror.NewDeadlineExceeded("context deadline exceeded"), true},
		{"gRPC status", live, status.Error(codes.DeadlineExceeded, "context deadline exceeded"), true},
		{"context error, wrapped", live, fmt.Errorf("getting the result: %w", context.DeadlineExceeded), true},
		{"the run failed", live, temporal.NewNonRetryableApplicationError("x", "y", runFailed), false},
		{"the run ended with an execution error", live, &temporal.WorkflowExecutionError{}, false},
		{"another error", live, errors.New("connection refused"), false},
		{"the caller went away", gone, serviceerror.NewDeadlineExceeded("context deadline exceeded"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, waitRanOut(tc.ctx, tc.err))
		})
	}
}
