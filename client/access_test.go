package client

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/auth"
	"github.com/weftworks/weft/internal/testkit/reviewfake"
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

func TestMayAct(t *testing.T) {
	carl := &auth.Identity{Name: "carl", Roles: []string{auth.RoleRunner}}
	root := &auth.Identity{Name: "root", Roles: []string{auth.RoleAdmin}}
	for _, tc := range []struct {
		name      string
		who       *auth.Identity
		startedBy string
		want      bool
	}{
		{"the operator acts on anyone's", nil, "bob", true},
		{"the starter on its own", carl, "carl", true},
		{"another key may not", carl, "bob", false},
		{"nor on the operator's", carl, "", false},
		{"an admin on anyone's", root, "bob", true},
		{"an admin on the operator's", root, "", true},
		{"a name is not a prefix", &auth.Identity{Name: "car", Roles: []string{auth.RoleRunner}}, "carl", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, MayAct(tc.who, tc.startedBy))
		})
	}
}

// ownedRuns is a Temporal of 6 running runs weft-finance-approval-0 … 5 started by bob (0, 3),
// carl (1, 4) and the operator (2, 5): reviewfake.Owners.
func ownedRuns() *reviewfake.Runs {
	return &reviewfake.Runs{N: 6, Prefix: "weft-finance-approval-", MemoKey: MemoStartedBy, StartedBy: reviewfake.Owners}
}

// TestNotFoundSuggestsOnlyWhatTheCallerReads: a lookup of an id no run has ("did you mean")
// names near ids only of the runs the caller may read, through every operation that looks a run
// up (the caller is the context's identity, as the MCP gateway and the console set it), and
// CheckRead's own lookup with the identity it is given.
func TestNotFoundSuggestsOnlyWhatTheCallerReads(t *testing.T) {
	const probe = "weft-finance-approval-"
	c := New(ownedRuns(), "test")
	ops := map[string]func(ctx context.Context) error{
		"State":     func(ctx context.Context) error { _, err := c.State(ctx, probe); return err },
		"Describe":  func(ctx context.Context) error { _, err := c.Describe(ctx, probe); return err },
		"Events":    func(ctx context.Context) error { _, err := c.Events(ctx, probe, 0); return err },
		"Cancel":    func(ctx context.Context) error { return c.Cancel(ctx, probe, "x") },
		"Retry":     func(ctx context.Context) error { _, _, err := c.Retry(ctx, probe, RetryOptions{}); return err },
		"Fork":      func(ctx context.Context) error { _, _, err := c.Fork(ctx, probe, ForkOptions{Step: "a"}); return err },
		"StartedBy": func(ctx context.Context) error { _, err := c.StartedBy(ctx, probe); return err },
		"CheckRead": func(ctx context.Context) error {
			return c.CheckRead(context.Background(), "execution "+probe, probe, Caller(ctx))
		},
	}
	for _, tc := range []struct {
		who  *auth.Identity
		near []string // in the order suggested (the newest first)
	}{
		{nil, []string{probe + "5", probe + "4", probe + "3"}},
		{&auth.Identity{Name: "root", Roles: []string{auth.RoleAdmin}}, []string{probe + "5", probe + "4", probe + "3"}},
		{&auth.Identity{Name: "carl", Roles: []string{auth.RoleRunner}}, []string{probe + "5", probe + "4", probe + "2"}},
		{&auth.Identity{Name: "bob", Roles: []string{auth.RoleRunner}}, []string{probe + "5", probe + "3", probe + "2"}},
		{&auth.Identity{Name: "rita", Roles: []string{auth.RoleReader}}, []string{probe + "5", probe + "2"}},
		{&auth.Identity{Name: "rev", Roles: []string{auth.RoleReviewer}}, []string{probe + "5", probe + "2"}},
	} {
		name := "the operator"
		ctx := context.Background()
		if tc.who != nil {
			name, ctx = tc.who.Name, auth.WithIdentity(ctx, *tc.who)
		}
		for op, do := range ops {
			if op == "CheckRead" && (tc.who == nil || tc.who.Has(auth.RoleAdmin)) {
				continue // who reads everything reads without a lookup
			}
			t.Run(name+"/"+op, func(t *testing.T) {
				err := do(ctx)
				var nf *NotFoundError
				require.ErrorAs(t, err, &nf)
				require.Equal(t, tc.near, nf.Near)
			})
		}
	}
}

// TestActsAreOwnerScoped: cancel, retry, fork, clearing a chat and a schedule's actions are
// refused to a key on a run it did not start, naming who may (and, when it may not even read
// the run, the read refusal reads give); the starter, an admin and the operator pass the check
// (and then meet the run's own state: these runs are running).
func TestActsAreOwnerScoped(t *testing.T) {
	f := ownedRuns()
	c := New(f, "test")
	const bobs, carls, operators = "weft-finance-approval-0", "weft-finance-approval-1", "weft-finance-approval-2"
	carl := &auth.Identity{Name: "carl", Roles: []string{auth.RoleRunner}}
	bob := &auth.Identity{Name: "bob", Roles: []string{auth.RoleRunner}}
	root := &auth.Identity{Name: "root", Roles: []string{auth.RoleAdmin}}
	rev := &auth.Identity{Name: "rev", Roles: []string{auth.RoleReviewer, auth.RoleRunner}} // the fake's every run waits on a review naming nobody
	as := func(who *auth.Identity) context.Context {
		if who == nil {
			return context.Background()
		}
		return auth.WithIdentity(context.Background(), *who)
	}
	acts := map[string]func(ctx context.Context, id string) error{
		"cancel": func(ctx context.Context, id string) error { return c.Cancel(ctx, id, "x") },
		"retry":  func(ctx context.Context, id string) error { _, _, err := c.Retry(ctx, id, RetryOptions{}); return err },
		"fork": func(ctx context.Context, id string) error {
			_, _, err := c.Fork(ctx, id, ForkOptions{Step: "a"})
			return err
		},
	}
	for _, tc := range []struct {
		name    string
		who     *auth.Identity
		id      string
		refused string // in the refusal; "" the check passes
	}{
		{"a runner on another's run (which it may not read)", carl, bobs, "run " + bobs + " was started by bob: carl may read only"},
		{"a runner on the operator's run (which it reads)", carl, operators, "cannot %s run " + operators + ": it is the operator's, and only the operator"},
		{"a reviewer waiting on another's run (which it reads)", rev, carls, "cannot %s run " + carls + ": it was started by carl, and only carl and keys with the admin role may %s it; rev may %s only the runs it started"},
		{"the starter", bob, bobs, ""},
		{"an admin", root, bobs, ""},
		{"the operator", nil, bobs, ""},
	} {
		for act, do := range acts {
			t.Run(tc.name+"/"+act, func(t *testing.T) {
				before := len(f.Cancelled())
				err := do(as(tc.who), tc.id)
				var ref *RefusedError
				if tc.refused == "" {
					require.False(t, errors.As(err, &ref) && ref.Access, "%s may %s %s: %v", tc.name, act, tc.id, err)
					if act == "cancel" {
						require.NoError(t, err)
						require.Equal(t, tc.id, f.Cancelled()[before])
					}
					return
				}
				require.ErrorAs(t, err, &ref)
				require.True(t, ref.Access)
				require.ErrorContains(t, err, strings.ReplaceAll(tc.refused, "%s", act))
				require.Len(t, f.Cancelled(), before, "nothing was cancelled")
			})
		}
	}
	for _, action := range []ScheduleAction{SchedulePause, ScheduleTrigger, ScheduleDelete} {
		err := c.DoSchedule(as(carl), "nightly", action, "")
		require.ErrorContains(t, err, "cannot "+string(action)+" schedule nightly: it is the operator's")
		_, err = c.ClearChat(as(carl), operators)
		require.ErrorContains(t, err, "cannot clear chat session "+operators+": it is the operator's")
	}
}
