package client

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// HealthCheck says what CheckHealth asks: Temporal (through Client, or a connection it dials
// with Dial) and the knowledge store (Store), each when given.
type HealthCheck struct {
	// Client is a connection to ask Temporal through (weft dev, the gateway's own).
	Client *Client
	// Dial, without Client, is where to dial Temporal; the connection is closed after.
	Dial *Options
	// Store asks the knowledge store whether it answers; nil when none is configured.
	Store func(context.Context) error
	// Timeout bounds the whole check (default 3s).
	Timeout time.Duration
}

// ErrNotChecked is a part of Health nobody asked for: no store configured, no Temporal named.
var ErrNotChecked = errors.New("not checked")

// Health is what a health check found: nil where it answered.
type Health struct {
	Temporal error
	Store    error
}

// Err is the first problem found (nil when everything checked answered).
func (h Health) Err() error {
	for _, err := range []error{h.Temporal, h.Store} {
		if err != nil && !errors.Is(err, ErrNotChecked) {
			return err
		}
	}
	return nil
}

// CheckHealth asks Temporal for its health (dialling it first when there is no connection) and
// the store whether it answers, within hc.Timeout. weft ping, the MCP gateway's GET /health and
// the soak test's wait for weft dev all check this way.
func CheckHealth(ctx context.Context, hc HealthCheck) Health {
	if hc.Timeout <= 0 {
		hc.Timeout = 3 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, hc.Timeout)
	defer cancel()
	h := Health{Temporal: ErrNotChecked, Store: ErrNotChecked}
	c := hc.Client
	if c == nil && hc.Dial != nil {
		o := *hc.Dial
		if o.DialTimeout <= 0 || o.DialTimeout > hc.Timeout {
			o.DialTimeout = hc.Timeout
		}
		var err error
		if c, err = Dial(ctx, o); err != nil {
			h.Temporal = err
		} else {
			defer c.Close()
		}
	}
	if c != nil {
		if _, err := c.t.CheckHealth(ctx, nil); err != nil {
			h.Temporal = fmt.Errorf("temporal's health check failed: %w", err)
		} else {
			h.Temporal = nil
		}
	}
	if hc.Store != nil {
		h.Store = hc.Store(ctx)
	}
	return h
}
