package dsl

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestStepPolicy(t *testing.T) {
	tests := []struct {
		name    string
		step    Step
		want    Policy
		wantErr string
	}{
		{"nothing set", Step{}, Policy{}, ""},
		{"timeout and retry", Step{Timeout: "30s", Retry: &Retry{MaxAttempts: 3, InitialInterval: "2s", Backoff: 1.5, MaxInterval: "1m"}},
			Policy{Timeout: 30 * time.Second, MaxAttempts: 3, InitialInterval: 2 * time.Second, Backoff: 1.5, MaxInterval: time.Minute}, ""},
		{"vai's milliseconds", Step{Timeout: "5000ms"}, Policy{Timeout: 5 * time.Second}, ""},
		{"bad timeout", Step{Timeout: "soon"}, Policy{}, `timeout: "soon" is not a duration`},
		{"negative interval", Step{Retry: &Retry{MaxInterval: "-1s"}}, Policy{}, `retry.maxInterval: "-1s" is negative`},
		{"past the longest duration", Step{Timeout: "9999999h"}, Policy{}, `timeout: "9999999h" is longer than the longest duration, 2562047h`},
		{"the longest duration", Step{Timeout: "2562047h"}, Policy{Timeout: 2562047 * time.Hour}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.step.Policy()
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// TestPolicyIsCompiledOnce: the compiled step carries its parsed policy.
func TestPolicyIsCompiledOnce(t *testing.T) {
	w, err := Load("p.json", []byte(`{"name":"p","steps":[{"id":"a","tool":"embed","timeout":"45s","retry":{"maxAttempts":2,"initialInterval":"3s"},"inputs":{"text":"x"}}]}`))
	require.NoError(t, err)
	require.Equal(t, Policy{Timeout: 45 * time.Second, MaxAttempts: 2, InitialInterval: 3 * time.Second}, w.Steps[0].Policy)
}
