package client

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/auth"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
)

func TestMayRead(t *testing.T) {
	ana := &auth.Identity{Name: "ana", Roles: []string{auth.RoleRunner}}
	bob := &auth.Identity{Name: "bob", Roles: []string{auth.RoleReader}}
	rita := &auth.Identity{Name: "rita", Roles: []string{auth.RoleReviewer}}
	root := &auth.Identity{Name: "root", Roles: []string{auth.RoleAdmin}}
	for _, tc := range []struct {
		name      string
		who       *auth.Identity
		startedBy string
		want      bool
	}{
		{"the operator reads anyone's", nil, "ana", true},
		{"the starter reads its own", ana, "ana", true},
		{"another key may not", bob, "ana", false},
		{"a reviewer may not without a pending review", rita, "ana", false},
		{"an admin reads anyone's", root, "ana", true},
		{"the operator's runs are everyone's", bob, "", true},
		{"a name is not a prefix", &auth.Identity{Name: "an", Roles: []string{auth.RoleReader}}, "ana", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, MayRead(tc.who, tc.startedBy))
		})
	}
	err := ReadRefusal("execution weft-x", "ana", bob)
	require.ErrorContains(t, err, "execution weft-x was started by ana: bob may read only")
	var ref *RefusedError
	require.ErrorAs(t, err, &ref)
}

func TestMayDecide(t *testing.T) {
	rita := &auth.Identity{Name: "rita", Roles: []string{auth.RoleReviewer}}
	fin := &auth.Identity{Name: "fin", Roles: []string{auth.RoleReviewer, "finance"}}
	bob := &auth.Identity{Name: "bob", Roles: []string{auth.RoleReader, "finance"}}
	root := &auth.Identity{Name: "root", Roles: []string{auth.RoleAdmin}}
	review := func(reviewers ...string) *weftv1.ReviewRequest { return &weftv1.ReviewRequest{Reviewers: reviewers} }
	for _, tc := range []struct {
		name string
		who  *auth.Identity
		r    *weftv1.ReviewRequest
		want bool
	}{
		{"a review naming nobody: any reviewer", rita, review(), true},
		{"named", rita, review("rita"), true},
		{"not named", rita, review("ana", "role:finance"), false},
		{"by routing role", fin, review("ana", "role:finance"), true},
		{"a routing role without reviewer", bob, review("role:finance"), false},
		{"a reader", bob, review(), false},
		{"an admin", root, review("ana"), true},
		{"the operator", nil, review("ana"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, MayDecide(tc.who, tc.r))
		})
	}
}
