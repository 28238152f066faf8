package client

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestQueryRetryable: a query is asked again when nobody answered in time or the worker it went
// to stopped (the server cancels it while the caller still waits), never when the run or the
// query does not exist.
func TestQueryRetryable(t *testing.T) {
	cases := []struct {
		err  error
		want bool
	}{
		{context.DeadlineExceeded, true},
		{serviceerror.NewDeadlineExceeded("query timed out"), true},
		{status.Error(codes.DeadlineExceeded, "deadline"), true},
		{serviceerror.NewCanceled("context canceled"), true},
		{status.Error(codes.Canceled, "context canceled"), true},
		{fmt.Errorf("query: %w", context.Canceled), true},
		{serviceerror.NewNotFound("workflow not found"), false},
		{serviceerror.NewQueryFailed("unknown queryType"), false},
		{errors.New("boom"), false},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, isQueryRetryable(tc.err), "%v", tc.err)
	}
}
