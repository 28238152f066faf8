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
