package weft

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"

	"go.temporal.io/sdk/temporal"

	"github.com/weftworks/weft/activities"
	"github.com/weftworks/weft/activities/toolspec"
)

// ToolFunc is a tool implemented by a Go function (Tool): steps and agents name it like a
// built-in, and the workers an Engine starts run it.
type ToolFunc struct {
	spec    *toolspec.Spec
	handler activities.Handler
}

// ToolName is the tool's name (ToolFunc is a Named for Tools and Approve).
func (t *ToolFunc) ToolName() string { return t.spec.Name }

// Spec is the tool's declaration: its input schema is derived from the function's input type.
func (t *ToolFunc) Spec() *toolspec.Spec { return t.spec }

// ToolOption configures a tool's declaration.
type ToolOption func(*toolspec.Spec)

// ReadOnly says the tool changes nothing (MCP clients read the hint).
func ReadOnly() ToolOption { return func(s *toolspec.Spec) { s.Annotations.ReadOnly = true } }

// Destructive says the tool may destroy data.
func Destructive() ToolOption { return func(s *toolspec.Spec) { s.Annotations.Destructive = true } }

// OpenWorld says the tool reaches systems outside weft (the web, an API).
func OpenWorld() ToolOption { return func(s *toolspec.Spec) { s.Annotations.OpenWorld = true } }

// MaxAttempts sets how often a call that fails with a Retryable error is tried (default 5).
func MaxAttempts(n int) ToolOption { return func(s *toolspec.Spec) { s.MaxAttempts = n } }

var (
	toolsMu sync.Mutex
	goTools = map[string]*ToolFunc{}
)

// Tool declares a tool implemented by fn. The input schema is derived from In (a struct: json
// names; fields without omitempty are required; `jsonschema:"..."` describes a field and
// `weft:"min=1,max=10,default=3,enum=a|b"` constrains it), as for weft's own tools, and fn
// receives the step's (or the model's) validated arguments decoded into In. Each call is a
// durable activity run by the workers an Engine starts in this process.
//
// Declare tools at package level or before Start, like flags: the registry is read by running
// workers. A name already declared (a built-in, or twice) panics, as a duplicate flag does.
func Tool[In, Out any](name, description string, fn func(context.Context, In) (Out, error), opts ...ToolOption) *ToolFunc {
	if reflect.TypeFor[In]().Kind() != reflect.Struct {
		panic(fmt.Sprintf("weft.Tool %q: the input type %s is not a struct: a tool's arguments are a JSON object", name, reflect.TypeFor[In]()))
	}
	if _, dup := toolspec.Lookup(name); dup {
		panic(fmt.Sprintf("weft.Tool %q: a tool of that name is declared already: choose another name", name))
	}
	spec := &toolspec.Spec{Name: name, Domain: toolspec.CategoryUtility, Kind: toolspec.KindActivity,
		Title: name, Description: description}
	for _, o := range opts {
		o(spec)
	}
	toolsMu.Lock()
	defer toolsMu.Unlock()
	decl := toolspec.Declare[In, Out](spec)
	if _, err := decl.Schema(); err != nil {
		panic(fmt.Sprintf("weft.Tool %q: deriving the input schema from %s: %v", name, reflect.TypeFor[In](), err))
	}
	t := &ToolFunc{spec: spec, handler: activities.Adapt(decl, func(ctx context.Context, in In) (Out, *toolspec.Usage, error) {
		out, err := fn(ctx, in)
		return out, nil, toolFailure(ctx, name, err)
	})}
	goTools[name] = t
	return t
}

// RetryableError is a Go tool's error that is worth retrying (Retryable): the call is tried
// again, up to MaxAttempts, before the step or the agent's model sees the error. Find it with
// errors.As.
type RetryableError struct{ Err error }

func (e *RetryableError) Error() string { return e.Err.Error() }
func (e *RetryableError) Unwrap() error { return e.Err }

// Retryable marks err, returned by a Go tool, as worth retrying (a service that is down, a rate
// limit): the activity retry policy tries the call again. Any other error a tool returns fails the
// call at once: an agent's model gets its text as the tool's result in its next turn, a step
// fails. Retryable(nil) is nil.
func Retryable(err error) error {
	if err == nil {
		return nil
	}
	return &RetryableError{Err: err}
}

// toolFailure is what a Go tool's error becomes: a Retryable one, or one after the call's context
// ended (a timeout, a worker stopping: another attempt may run elsewhere), stays retryable; weft's
// own input and configuration errors and Temporal application errors keep their meaning; any
// other fails the call at once, with the tool's name and its text.
func toolFailure(ctx context.Context, name string, err error) error {
	var re *RetryableError
	var ie *activities.InputError
	var ce *activities.ConfigError
	var ae *temporal.ApplicationError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &re), ctx.Err() != nil, errors.As(err, &ie), errors.As(err, &ce), errors.As(err, &ae):
		return err
	}
	return temporal.NewApplicationErrorWithOptions(name+": "+err.Error(), toolspec.ErrToolFailed,
		temporal.ApplicationErrorOptions{NonRetryable: true, Cause: err})
}

// handlers are the Go tools' handlers, for worker.New.
func handlers() map[string]activities.Handler {
	toolsMu.Lock()
	defer toolsMu.Unlock()
	out := make(map[string]activities.Handler, len(goTools))
	for name, t := range goTools {
		out[name] = t.handler
	}
	return out
}

// toolNames lists the declared Go tools, sorted.
func toolNames() []string {
	toolsMu.Lock()
	defer toolsMu.Unlock()
	out := make([]string, 0, len(goTools))
	for n := range goTools {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
