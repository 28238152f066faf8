package runwire_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/auth"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// TestPickReview: one rule picks the review a decision answers for the run and for the client;
// each speaks its own words (the CLI's flags, the Update's fields) in the refusals.
func TestPickReview(t *testing.T) {
	pending := []*weftv1.ReviewRequest{{Id: "a[0]", Step: "a"}, {Id: "a[1]", Step: "a"}, {Id: "agent/c1", Step: "agent"}}
	cli := runwire.ReviewWording{Run: "run r", Name: "with --id", NameOrStep: "with --id or --step", All: "decide them all with --all"}
	update := runwire.ReviewWording{Name: `in "id"`, NameOrStep: `in "id"`}
	stepNote := update
	stepNote.Step = func(step, list string) error { return errors.New("no step " + step + " (pending: " + list + ")") }
	for _, tc := range []struct {
		name     string
		pending  []*weftv1.ReviewRequest
		id, step string
		w        runwire.ReviewWording
		want     string // the review's id
		err      string
	}{
		{name: "by id", pending: pending, id: "a[1]", w: cli, want: "a[1]"},
		{name: "by step with one review", pending: pending, step: "agent", w: cli, want: "agent/c1"},
		{name: "the only one", pending: pending[2:], w: update, want: "agent/c1"},
		{name: "unknown id, CLI", pending: pending, id: "zzz", w: cli, err: `run r has no pending review "zzz" (pending: a[0], a[1], agent/c1)`},
		{name: "unknown id, Update", pending: pending, id: "zzz", w: update, err: `no pending review "zzz" (pending: a[0], a[1], agent/c1)`},
		{name: "step with two, CLI", pending: pending, step: "a", w: cli, err: `step "a" has 2 pending reviews (a[0], a[1]): name one with --id, or decide them all with --all`},
		{name: "step with two, Update", pending: pending, step: "a", w: update, err: `step "a" has 2 pending reviews (a[0], a[1]): name one in "id"`},
		{name: "step with none, CLI", pending: pending, step: "b", w: cli, err: `step "b" of run r is not awaiting review (pending: a[0], a[1], agent/c1)`},
		{name: "step with none, the run explains", pending: pending, step: "b", w: stepNote, err: `no step b (pending: a[0], a[1], agent/c1)`},
		{name: "ambiguous, CLI", pending: pending, w: cli, err: `run r has 3 pending reviews (a[0], a[1], agent/c1): name one with --id or --step, or decide them all with --all`},
		{name: "ambiguous, Update", pending: pending, w: update, err: `this run has 3 pending reviews (a[0], a[1], agent/c1): name one in "id"`},
		{name: "none pending, CLI", id: "a[0]", w: cli, err: "run r has no pending review"},
		{name: "none pending, Update", w: update, err: "this run has no pending review"},
		{name: "none pending, Update by id", id: "x", w: update, err: `no pending review "x" (pending: none)`},
		{name: "none pending, Update by step", step: "b", w: stepNote, err: "no step b (pending: none)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := runwire.PickReview(tc.pending, tc.id, tc.step, tc.w)
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got.Id)
		})
	}
}

func TestCheckDecisionKind(t *testing.T) {
	for _, tc := range []struct {
		decision string
		data     bool
		err      string
	}{
		{"approve", false, ""},
		{"reject", false, ""},
		{"edit", true, ""},
		{"edit", false, "an edit decision needs data: the corrected proposal"},
		{"yolo", false, `decision "yolo" is not approve, edit or reject`},
		{"", false, `decision "" is not approve, edit or reject`},
	} {
		err := runwire.CheckDecisionKind(tc.decision, tc.data)
		if tc.err == "" {
			require.NoError(t, err, tc.decision)
		} else {
			require.EqualError(t, err, tc.err, tc.decision)
		}
	}
}

// TestRoleAdminIsAuths: the role the run's validator lets decide any review is the admin role
// auth grants (keys, OAuth, WEFT_MCP_KEY); were they to drift apart, an admin's decision would be
// refused by the run after the client let it through, or the other way round.
func TestRoleAdminIsAuths(t *testing.T) {
	require.Equal(t, auth.RoleAdmin, runwire.RoleAdmin)
	require.Contains(t, auth.BuiltinRoles, runwire.RoleAdmin)
	require.True(t, auth.Identity{Roles: []string{runwire.RoleAdmin}}.Has(auth.RoleReviewer), "runwire.RoleAdmin must hold every role in auth")
}
