package activities

import (
	"context"
	"errors"
	"reflect"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/weftworks/weft/activities/toolspec"
)

// Every call a provider billed is counted, also when the activity attempt that made it fails: a
// failure carries the usage of the attempt (and of the failed attempts before it) in its error
// details, where the interpreter adds it to the step, the run and the chat. A retried attempt
// starts from the usage the failed one left in its last heartbeat's details (the second value;
// the first stays what people watch: the text so far), so the attempt that finally succeeds or
// fails reports the calls of all attempts.

// UsageOf returns the billed usage a failed tool activity reported with its error, or nil.
func UsageOf(err error) *toolspec.Usage {
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || !ae.HasDetails() {
		return nil
	}
	var u toolspec.Usage
	if ae.Details(&u) != nil || isZero(&u) {
		return nil
	}
	return &u
}

func isZero(u *toolspec.Usage) bool {
	return u == nil || (u.PromptTokens == 0 && u.CompletionTokens == 0 && u.TotalTokens == 0 && u.EmbeddingTokens == 0 && u.CostUSD == 0)
}

// sumUsage adds b to a (either may be nil); nil when nothing was billed.
func sumUsage(a, b *toolspec.Usage) *toolspec.Usage {
	if isZero(a) {
		if isZero(b) {
			return nil
		}
		return b
	}
	if isZero(b) {
		return a
	}
	out := *a
	out.PromptTokens += b.PromptTokens
	out.CompletionTokens += b.CompletionTokens
	out.TotalTokens += b.TotalTokens
	out.EmbeddingTokens += b.EmbeddingTokens
	out.CostUSD += b.CostUSD
	out.Requests += b.Requests
	if b.Model != "" {
		out.Model = b.Model
	}
	return &out
}

// withRequests is u (a call's usage) with the provider requests that billed it: those the
// handler counted (countRequests), or one for a handler that does not count them; nil when
// nothing was billed.
func withRequests(u *toolspec.Usage, rc *requestCount) *toolspec.Usage {
	if isZero(u) {
		return nil
	}
	out := *u
	out.Requests = 1
	if rc.counted && rc.n > 0 {
		out.Requests = int64(rc.n)
	}
	return &out
}

// priorUsage is the usage earlier failed attempts of this activity left in their last heartbeat.
func priorUsage(ctx context.Context) *toolspec.Usage {
	if !activity.IsActivity(ctx) || activity.GetInfo(ctx).Attempt <= 1 || !activity.HasHeartbeatDetails(ctx) {
		return nil
	}
	var first any
	var u toolspec.Usage
	if activity.GetHeartbeatDetails(ctx, &first, &u) != nil || isZero(&u) {
		return nil
	}
	return &u
}

// withUsage returns err carrying the billed usage in its details (err unchanged when nothing was
// billed), and leaves the usage in the heartbeat so that a retry counts it too. The error keeps
// its message, type, retryability, retry delay and cause.
func withUsage(ctx context.Context, err error, u *toolspec.Usage) error {
	if err == nil || isZero(u) {
		return err
	}
	if activity.IsActivity(ctx) {
		// Flushed with the failure (the SDK sends a buffered heartbeat when an attempt fails).
		activity.RecordHeartbeat(ctx, nil, *u)
	}
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return temporal.NewApplicationErrorWithOptions(ae.Message(), ae.Type(), temporal.ApplicationErrorOptions{
			NonRetryable: ae.NonRetryable(), Cause: ae.Unwrap(), Details: []any{*u}, NextRetryDelay: ae.NextRetryDelay(), Category: ae.Category()})
	}
	return temporal.NewApplicationErrorWithOptions(err.Error(), errTypeName(err), temporal.ApplicationErrorOptions{Details: []any{*u}})
}

// errTypeName is the error type Temporal gives a plain Go error: its type's name ("" for
// errors.New), so retry policies that name types keep matching.
func errTypeName(err error) string {
	t := reflectType(err)
	if t == "errorString" {
		return ""
	}
	return t
}

func reflectType(err error) string {
	t := reflect.TypeOf(err)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}
