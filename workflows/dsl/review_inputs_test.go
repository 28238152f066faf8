package dsl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/workflows/dsl"
)

// TestReviewReviewersAndRejectFails: a review step may say who decides it (names and
// "role:NAME") and whether a reject fails it; malformed entries are refused when the file loads.
func TestReviewReviewersAndRejectFails(t *testing.T) {
	tests := []struct{ name, inputs, msg string }{
		{"names and roles", `"reviewers":["role:finance","ana"]`, ""},
		{"templated entry", `"reviewers":["{{ inputs.approver }}"]`, ""},
		{"templated list", `"reviewers":"{{ inputs.approvers }}"`, ""},
		{"rejectFails", `"rejectFails":true`, ""},
		{"empty role", `"reviewers":["role:"]`, "reviewers"},
		{"space after role:", `"reviewers":["role: finance"]`, "reviewers"},
		{"not a list", `"reviewers":"ana"`, "reviewers"},
		{"empty list", `"reviewers":[]`, "reviewers"},
		{"rejectFails not a boolean", `"rejectFails":"yes"`, "rejectFails"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := `{"name":"x","inputs":{"approver":{"type":"string"},"approvers":{"type":"array"}},"steps":[
			  {"id":"ok","tool":"review","inputs":{"title":"Pay?",` + tt.inputs + `}}]}`
			_, err := dsl.Load("w.json", []byte(file))
			if tt.msg == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.msg)
		})
	}
}
