package dsl

import (
	"fmt"
	"time"

	"github.com/weftworks/weft/activities/toolspec"
)

// Policy is a step's timeout and retry overrides, parsed: zero fields keep the tool's defaults.
// The compiler parses it once per step (CompiledStep.Policy), reporting a bad duration at its
// place in the file; the interpreter only reads it.
type Policy struct {
	Timeout         time.Duration
	MaxAttempts     int
	InitialInterval time.Duration
	Backoff         float64
	MaxInterval     time.Duration
}

// Policy parses the step's timeout and retry. The error names the field and what to write.
func (s *Step) Policy() (Policy, error) {
	var p Policy
	var err error
	if p.Timeout, err = parseDuration("timeout", s.Timeout); err != nil {
		return Policy{}, err
	}
	if r := s.Retry; r != nil {
		p.MaxAttempts, p.Backoff = r.MaxAttempts, r.Backoff
		if p.InitialInterval, err = parseDuration("retry.initialInterval", r.InitialInterval); err != nil {
			return Policy{}, err
		}
		if p.MaxInterval, err = parseDuration("retry.maxInterval", r.MaxInterval); err != nil {
			return Policy{}, err
		}
	}
	return p, nil
}

// parseDuration reads a duration field ("" is unset).
func parseDuration(field, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := toolspec.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", field, err)
	}
	return d, nil
}
