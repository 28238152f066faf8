package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/weftworks/weft/activities/provider"
	"github.com/weftworks/weft/activities/toolspec"
)

// Handler implements one tool: it gets the step's resolved inputs (already valid against the
// tool's input schema) and returns the tool's output and what it consumed. Return an
// *InputError for input that no retry can fix.
type Handler func(ctx context.Context, inputs map[string]any) (output any, usage *toolspec.Usage, err error)

// InputError is a problem with a step's inputs; it is never retried.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// ConfigError says which setting a tool needs; it is never retried.
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return e.Msg }

// ClaimCheck keeps outputs over Above bytes in Blobs (nil: outputs stay in history as they are),
// and Observe, when set, is told of every execution (metrics).
type ClaimCheck struct {
	Blobs   Blobs
	Above   int
	Observe func(tool, status string, d time.Duration, u *toolspec.Usage)
}

// Activity adapts a handler to the activity registered under spec.Name. With a claim check,
// large outputs are stored and referenced, and references in inputs are resolved first.
func Activity(spec *toolspec.Spec, h Handler, cc ...ClaimCheck) func(ctx context.Context, inputs map[string]any) (toolspec.Result, error) {
	adapted := adapt(spec, h, cc...)
	if len(cc) == 0 || cc[0].Observe == nil {
		return adapted
	}
	observe := cc[0].Observe
	return func(ctx context.Context, inputs map[string]any) (toolspec.Result, error) {
		start := time.Now()
		res, err := adapted(ctx, inputs)
		status := "completed"
		if err != nil {
			status = "failed"
		}
		observe(spec.Name, status, time.Since(start), res.Usage)
		return res, err
	}
}

func adapt(spec *toolspec.Spec, h Handler, cc ...ClaimCheck) func(ctx context.Context, inputs map[string]any) (toolspec.Result, error) {
	call := adaptCall(spec, h, cc...)
	return func(ctx context.Context, inputs map[string]any) (toolspec.Result, error) {
		if !activity.IsActivity(ctx) {
			return call(ctx, inputs)
		}
		// One line per call; the SDK's logger adds the workflow, run and activity ids (the
		// activity id names the step: "step#1", "step[3]#1").
		start := time.Now()
		res, err := call(ctx, inputs)
		log := activity.GetLogger(ctx)
		if err != nil {
			log.Warn("tool call failed", "tool", spec.Name, "attempt", activity.GetInfo(ctx).Attempt, "duration", time.Since(start), "error", err)
		} else {
			log.Info("tool call", "tool", spec.Name, "attempt", activity.GetInfo(ctx).Attempt, "duration", time.Since(start))
		}
		return res, err
	}
}

func adaptCall(spec *toolspec.Spec, h Handler, cc ...ClaimCheck) func(ctx context.Context, inputs map[string]any) (toolspec.Result, error) {
	return func(ctx context.Context, inputs map[string]any) (toolspec.Result, error) {
		if inputs == nil {
			inputs = map[string]any{}
		}
		if !spec.HeartbeatsItself {
			// a worker that dies mid-call is noticed within the heartbeat timeout
			defer keepalive(ctx, spec.EffectiveHeartbeat()/3)()
		}
		if len(cc) > 0 && cc[0].Blobs != nil && toolspec.HoldsBlob(inputs) {
			if _, err := resolveBlobs(ctx, cc[0].Blobs, inputs); err != nil {
				return toolspec.Result{}, err // retryable: the store may be back soon
			}
		}
		inputs, _ = spec.Canonical(inputs)
		if err := spec.ValidateInputs(inputs); err != nil {
			return toolspec.Result{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("%s: invalid inputs: %s", spec.Name, validationText(err)), toolspec.ErrInvalidInput, nil)
		}
		ctx, sink := withWarnings(ctx)
		rc := &requestCount{}
		out, usage, err := h(context.WithValue(ctx, requestCountKey{}, rc), inputs)
		usage = sumUsage(priorUsage(ctx), withRequests(usage, rc))
		if err != nil {
			res := toolspec.Result{Usage: usage} // the calls it billed (metrics); the error carries them too
			return res, withUsage(ctx, toolError(spec, err), usage)
		}
		warnings := append(warningsOf(out), sink.take()...)
		if len(cc) > 0 && cc[0].Blobs != nil {
			if out, err = claimCheck(ctx, cc[0].Blobs, cc[0].Above, out); err != nil {
				return toolspec.Result{Usage: usage}, withUsage(ctx, temporal.NewApplicationErrorWithOptions(spec.Name+": "+err.Error(), ErrProviderUnavailable, temporal.ApplicationErrorOptions{Cause: err}), usage)
			}
		}
		return toolspec.Result{Output: out, Attempt: activity.GetInfo(ctx).Attempt, Usage: usage, Warnings: warnings}, nil
	}
}

// validationText is a validation error's message (the schema validator's own, when it is one).
func validationText(err error) string {
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return ve.Error()
	}
	return err.Error()
}

// toolError turns a handler's error into the activity error: input and configuration problems
// and rejected requests are not retried; an unavailable provider is, after its Retry-After.
func toolError(spec *toolspec.Spec, err error) error {
	var ie *InputError
	var ce *ConfigError
	var pe *provider.Error
	switch {
	case errors.As(err, &pe) && pe.Retryable:
		return temporal.NewApplicationErrorWithOptions(spec.Name+": "+pe.Error(), ErrProviderUnavailable,
			temporal.ApplicationErrorOptions{NextRetryDelay: pe.RetryAfter, Cause: err})
	case errors.As(err, &pe) && pe.Setting != "":
		return temporal.NewNonRetryableApplicationError(spec.Name+": "+pe.Error(), toolspec.ErrMissingConfig, err)
	case errors.As(err, &pe):
		return temporal.NewNonRetryableApplicationError(spec.Name+": "+pe.Error(), ErrProviderRejected, err)
	case errors.As(err, &ie):
		return temporal.NewNonRetryableApplicationError(spec.Name+": "+ie.Msg, toolspec.ErrInvalidInput, err)
	case errors.As(err, &ce):
		return temporal.NewNonRetryableApplicationError(spec.Name+": "+ce.Msg, toolspec.ErrMissingConfig, err)
	}
	return err
}

// Warnings a handler gives without putting them in its output: the activity adapter collects
// them into the step's warnings (toolspec.Result.Warnings).

type warningsKey struct{}

type warningSink struct {
	mu   sync.Mutex
	list []string
}

// withWarnings returns a context whose warn calls are collected by the returned sink.
func withWarnings(ctx context.Context) (context.Context, *warningSink) {
	s := &warningSink{}
	return context.WithValue(ctx, warningsKey{}, s), s
}

// warn logs msg and, in a call the adapter runs, adds it to the step's warnings (once).
func warn(ctx context.Context, msg string) {
	if activity.IsActivity(ctx) {
		activity.GetLogger(ctx).Warn(msg)
	} else {
		slog.Warn(msg)
	}
	s, _ := ctx.Value(warningsKey{}).(*warningSink)
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(s.list, msg) {
		s.list = append(s.list, msg)
	}
}

// take returns the warnings collected so far (nil for a nil sink).
func (s *warningSink) take() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.list...)
}

// warningsOf reads the "warnings" a tool put in its output object.
func warningsOf(out any) []string {
	m, ok := out.(map[string]any)
	if !ok {
		return nil
	}
	var ws []string
	switch w := m["warnings"].(type) {
	case []string:
		ws = w
	case []any:
		for _, e := range w {
			if s, ok := e.(string); ok {
				ws = append(ws, s)
			}
		}
	}
	return ws
}

// Error types of provider failures.
const (
	// ErrProviderUnavailable is retried (after Retry-After when the provider sent one).
	ErrProviderUnavailable = "ProviderUnavailable"
	// ErrProviderRejected is a 4xx the request itself caused; not retried.
	ErrProviderRejected = "ProviderRejected"
)

// Handlers pairs every activity tool the registry declares with its handler in impl. A declared
// tool without a handler, or a handler for a tool nobody declared (a typo in an override), is an
// error when the worker is built, never a failure when a run first calls the tool.
func Handlers(impl map[string]Handler) (map[string]Handler, error) {
	out := map[string]Handler{}
	var missing, unknown []string
	for _, s := range toolspec.All() {
		if s.Kind != toolspec.KindActivity {
			continue
		}
		if h, ok := impl[s.Name]; ok && h != nil {
			out[s.Name] = h
		} else {
			missing = append(missing, s.Name)
		}
	}
	for name := range impl {
		if s, ok := toolspec.Lookup(name); !ok || s.Kind != toolspec.KindActivity {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	var errs []error
	if len(missing) > 0 {
		errs = append(errs, fmt.Errorf("activity tools without a handler: %s: bind each to its declaration in an init of the file that implements it, bind(toolspec.X, (*Tools).x) (activities/declare.go)", strings.Join(missing, ", ")))
	}
	if len(unknown) > 0 {
		errs = append(errs, fmt.Errorf("handlers for tools the registry does not declare as activities: %s: check the names against activities/toolspec", strings.Join(unknown, ", ")))
	}
	return out, errors.Join(errs...)
}

func asInput(err error, target **InputError) bool { return errors.As(err, target) }
