package client

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/converter"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// query asks run or session id a query, for at most queryTimeout. When nobody answered in time
// because the worker that held the run died (its sticky queue still looks served for a few
// seconds, and the server gives up on the query there) it asks again: a live worker answers.
func (c *Client) query(ctx context.Context, id, name string, args ...any) (converter.EncodedValue, error) {
	return c.queryRun(ctx, id, "", name, args...)
}

// queryRun is query of one run of id (runID "": the newest).
func (c *Client) queryRun(ctx context.Context, id, runID, name string, args ...any) (converter.EncodedValue, error) {
	qctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	v, err := c.t.QueryWorkflow(qctx, id, runID, name, args...)
	for err != nil && qctx.Err() == nil && isQueryRetryable(err) {
		select {
		case <-qctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
		v, err = c.t.QueryWorkflow(qctx, id, runID, name, args...)
	}
	return v, err
}

// queryTimeout bounds a query, its asking again included.
const queryTimeout = 15 * time.Second

// isQueryRetryable reports whether a query failed because nobody answered in time, or because the
// worker it was handed to went away while our context is still live (the server cancels a query
// whose worker stopped polling: a worker restarting as a client asks), rather than because the
// run or the query does not exist.
func isQueryRetryable(err error) bool {
	var dl *serviceerror.DeadlineExceeded
	var cancelled *serviceerror.Canceled
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &dl) || status.Code(err) == codes.DeadlineExceeded ||
		errors.Is(err, context.Canceled) || errors.As(err, &cancelled) || status.Code(err) == codes.Canceled
}
