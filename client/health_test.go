package client

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	tclient "go.temporal.io/sdk/client"
)

// healthTemporal answers Temporal's health check with err.
type healthTemporal struct {
	tclient.Client
	err error
}

func (h healthTemporal) CheckHealth(context.Context, *tclient.CheckHealthRequest) (*tclient.CheckHealthResponse, error) {
	return &tclient.CheckHealthResponse{}, h.err
}

// TestCheckHealth: Temporal and the store are asked when given, each part says what it found,
// and Err is the first real problem (a part nobody asked for is none).
func TestCheckHealth(t *testing.T) {
	down := errors.New("connection refused")
	storeDown := errors.New("store down")
	ok := func(context.Context) error { return nil }
	for _, tc := range []struct {
		name            string
		hc              HealthCheck
		temporal, store error // want (ErrNotChecked: not asked)
		err             string
	}{
		{name: "both answer", hc: HealthCheck{Client: New(healthTemporal{}, ""), Store: ok}},
		{name: "no store configured", hc: HealthCheck{Client: New(healthTemporal{}, "")}, store: ErrNotChecked},
		{name: "only the store", hc: HealthCheck{Store: ok}, temporal: ErrNotChecked},
		{name: "Temporal unhealthy", hc: HealthCheck{Client: New(healthTemporal{err: down}, ""), Store: ok}, temporal: down, err: "temporal's health check failed: connection refused"},
		{name: "the store does not answer", hc: HealthCheck{Client: New(healthTemporal{}, ""), Store: func(context.Context) error { return storeDown }}, store: storeDown, err: "store down"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := CheckHealth(context.Background(), tc.hc)
			if tc.temporal == nil {
				require.NoError(t, h.Temporal)
			} else {
				require.ErrorIs(t, h.Temporal, tc.temporal)
			}
			if tc.store == nil {
				require.NoError(t, h.Store)
			} else {
				require.ErrorIs(t, h.Store, tc.store)
			}
			if tc.err == "" {
				require.NoError(t, h.Err())
			} else {
				require.EqualError(t, h.Err(), tc.err)
			}
		})
	}
	t.Run("nothing listens where it dials", func(t *testing.T) {
		h := CheckHealth(context.Background(), HealthCheck{Dial: &Options{Address: "127.0.0.1:1"}, Timeout: 2 * time.Second})
		require.ErrorContains(t, h.Temporal, "cannot reach Temporal at 127.0.0.1:1")
		require.ErrorContains(t, h.Err(), "cannot reach Temporal")
	})
	t.Run("the store is asked within the timeout", func(t *testing.T) {
		h := CheckHealth(context.Background(), HealthCheck{Timeout: 50 * time.Millisecond, Store: func(ctx context.Context) error {
			<-ctx.Done()
			return ctx.Err()
		}})
		require.ErrorIs(t, h.Store, context.DeadlineExceeded)
	})
}
