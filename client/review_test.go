package client

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/weftworks/weft/auth"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// TestDecisionRecordsWhoDecided: an authenticated decision carries the identity (the typed
// label is ignored), an unauthenticated one the label only; the digest goes through either way.
func TestDecisionRecordsWhoDecided(t *testing.T) {
	gate := &weftv1.ReviewRequest{Id: "approve", Step: "approve"}
	for _, tc := range []struct {
		name string
		d    Decision
		want *weftv1.ReviewDecision
	}{
		{"nobody authenticated: a label",
			Decision{Decision: "approve", Reviewer: "typed", Digest: "abc"},
			&weftv1.ReviewDecision{Id: "approve", Decision: "approve", Reviewer: "typed", Digest: "abc"}},
		{"a key: its name and roles, the label ignored",
			Decision{Decision: "reject", Reviewer: "someone else", Comment: "no", By: &auth.Identity{Name: "ana", Roles: []string{"reviewer", "finance"}}},
			&weftv1.ReviewDecision{Id: "approve", Decision: "reject", Reviewer: "ana", Comment: "no", ReviewerRoles: []string{"reviewer", "finance"}, Authenticated: true}},
		{"a key without roles",
			Decision{Decision: "approve", By: &auth.Identity{Name: "bob"}},
			&weftv1.ReviewDecision{Id: "approve", Decision: "approve", Reviewer: "bob", Authenticated: true}},
		{"approve always: the scope goes with it",
			Decision{Decision: "approve", Reviewer: "ana", Scope: runwire.ScopeRun},
			&weftv1.ReviewDecision{Id: "approve", Decision: "approve", Reviewer: "ana", Scope: "run"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := decisionJSON(gate, tc.d)
			require.NoError(t, err)
			got, err := runwire.ParseDecision(b)
			require.NoError(t, err, string(b))
			require.True(t, proto.Equal(tc.want, got), "want %v\ngot  %v", tc.want, got)
		})
	}
}

// TestDecisionScopeIsChecked: scope "run" goes with approve or reject; an edit with it, or
// another scope, is refused before anything is sent (issue 44, item 5).
func TestDecisionScopeIsChecked(t *testing.T) {
	for _, tc := range []struct {
		d   Decision
		err string
	}{
		{Decision{Decision: "approve", Scope: runwire.ScopeRun}, ""},
		{Decision{Decision: "reject", Scope: runwire.ScopeRun}, ""},
		{Decision{Decision: "approve"}, ""},
		{Decision{Decision: "edit", Data: map[string]any{"a": 1}, Scope: runwire.ScopeRun}, `scope "run" decides the tool's later calls too, as approve or reject`},
		{Decision{Decision: "approve", Scope: "forever"}, `scope "forever" is not "run"`},
	} {
		t.Run(tc.d.Decision+" "+tc.d.Scope, func(t *testing.T) {
			err := tc.d.Check()
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			var inv *InvalidError
			require.ErrorAs(t, err, &inv)
			require.ErrorContains(t, err, tc.err)
		})
	}
}
