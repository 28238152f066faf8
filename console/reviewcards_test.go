package console_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/timestamppb"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/console"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/workflows"
)

// A run of gated waits for check, a review only ana or a reviewer with the role finance (an
// admin, the operator) may decide.
const (
	gatedDef   = `{"name":"gated","steps":[{"id":"check","tool":"review","inputs":{"title":"Check the answer","data":{"answer":42}}}]}`
	gatedState = `{"workflow":"gated","status":"awaiting_review","steps":[{"id":"check","tool":"review","status":"awaiting_review","startedAt":"2025-01-01T10:00:00Z"}],
	  "pendingReviews":[{"id":"check","step":"check","title":"Check the answer","data":{"answer":42},"kind":"review","executionId":"weft-fixture",
	    "reviewers":["ana","role:finance"],"digest":"d1","requestedAt":"2025-01-01T10:00:00Z"}]}`
)

// gatedTemporal is the one run of gated: its review Update refuses the first decision (as a run
// refuses one whose data changed) and takes the next, which the run's state then records as the
// review step's output and Temporal as a completed run.
type gatedTemporal struct {
	*fixtureTemporal
	mu        sync.Mutex
	state     *weftv1.ExecutionState
	decisions int
}

func newGated(t *testing.T) *gatedTemporal {
	var st weftv1.ExecutionState
	require.NoError(t, protojson.Unmarshal([]byte(gatedState), &st))
	return &gatedTemporal{fixtureTemporal: &fixtureTemporal{def: gatedDef, state: &st}, state: &st}
}

func (f *gatedTemporal) DescribeWorkflowExecution(context.Context, string, string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	start := time.Now().Add(-time.Minute)
	info := &workflowpb.WorkflowExecutionInfo{Status: enums.WORKFLOW_EXECUTION_STATUS_RUNNING, StartTime: timestamppb.New(start)}
	if f.state.GetStatus() == workflows.StatusCompleted {
		info.Status, info.CloseTime = enums.WORKFLOW_EXECUTION_STATUS_COMPLETED, timestamppb.New(time.Now())
	}
	return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: info}, nil
}

func (f *gatedTemporal) QueryWorkflow(context.Context, string, string, string, ...any) (converter.EncodedValue, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := converter.GetDefaultDataConverter().ToPayload(f.state)
	if err != nil {
		return nil, err
	}
	return encoded{p}, nil
}

func (f *gatedTemporal) UpdateWorkflow(_ context.Context, o tclient.UpdateWorkflowOptions) (tclient.WorkflowUpdateHandle, error) {
	if o.UpdateName != workflows.UpdateReview {
		return nil, serviceerror.NewNotFound("the run takes no waits (fixture)")
	}
	var d weftv1.ReviewDecision
	if err := protojson.Unmarshal(o.Args[0].(json.RawMessage), &d); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.decisions++
	if f.decisions == 1 {
		return nil, errors.New("the data of review check changed since it was shown: read it again")
	}
	out := fmt.Sprintf(`{"decision":%q,"reviewer":%q,"authenticated":%t,"comment":%q,"decidedAt":"2025-01-01T10:05:00Z","data":{"answer":42}}`,
		d.GetDecision(), d.GetReviewer(), d.GetAuthenticated(), d.GetComment())
	var st weftv1.ExecutionState
	if err := protojson.Unmarshal([]byte(`{"workflow":"gated","status":"completed","steps":[{"id":"check","tool":"review","status":"completed","output":`+out+`}]}`), &st); err != nil {
		return nil, err
	}
	f.state = &st
	return takenHandle{&d}, nil
}

// takenHandle answers a decision the run took with the decision.
type takenHandle struct{ d *weftv1.ReviewDecision }

func (h takenHandle) WorkflowID() string { return "weft-fixture" }
func (h takenHandle) RunID() string      { return "" }
func (h takenHandle) UpdateID() string   { return "u-" + h.d.GetId() }
func (h takenHandle) Get(_ context.Context, ptr any) error {
	if d, ok := ptr.(*weftv1.ReviewDecision); ok {
		d.Id, d.Decision, d.Reviewer, d.Comment = h.d.GetId(), h.d.GetDecision(), h.d.GetReviewer(), h.d.GetComment()
	}
	return nil
}

// liveText reads the text of the first node sel matches, in one step of the page's own script
// (as integration's liveText): a live page replaces its nodes as updates arrive. It waits until
// a node matches.
func liveText(sel string, out *string) chromedp.Action {
	js := fmt.Sprintf(`(() => { const n = document.querySelector(%q); return n ? n.textContent : null; })()`, sel)
	return chromedp.Poll(js, out, chromedp.WithPollingTimeout(20*time.Second))
}

// TestReviewAccessInTheSnapshot: the run's snapshot says, for each pending review, who may decide
// it and whether the viewer may (weftclient.MayDecide): the reviewer it names and an admin may,
// a reader and a reviewer it does not name may not, and are told why.
func TestReviewAccessInTheSnapshot(t *testing.T) {
	f := newGated(t)
	o := console.Options{Client: weftclient.New(f, "console-test"), RequireLogin: true}
	var keys map[string]string
	o.Keys, keys = testKeys(t)
	srv := newConsole(t, o)
	for _, tc := range []struct {
		who string
		may bool
		why string
	}{
		{"ana", true, ""},
		{"env", true, ""},
		{"rita", false, "you are logged in as rita, which has the role reader and not the reviewer role"},
	} {
		c, _ := loginAs(t, srv, keys[tc.who])
		resp, err := c.Get(srv.URL + "/api/runs/weft-fixture")
		require.NoError(t, err)
		var v struct {
			Snapshot struct {
				ReviewAccess map[string]console.ReviewAccess `json:"reviewAccess"`
			} `json:"snapshot"`
		}
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&v))
		resp.Body.Close()
		a := v.Snapshot.ReviewAccess["check"]
		require.Equal(t, tc.may, a.MayDecide, tc.who)
		require.Equal(t, "ana, or a reviewer with the role finance (and an admin, or the operator on the console's machine)", a.Deciders)
		require.Equal(t, tc.why, a.Why, tc.who)
	}
}

// TestReviewCardsSayWhoDecides: a review card says who may decide it before anyone clicks, and
// offers Approve, Edit and Reject only to who may (a reader sees why not); a decision the run
// refused is shown as an error, and the next one that it took is not; the decision, read from
// the run, stays on the page after a reload and shows to another viewer.
func TestReviewCardsSayWhoDecides(t *testing.T) {
	f := newGated(t)
	o := console.Options{Client: weftclient.New(f, "console-test"), RequireLogin: true}
	var keys map[string]string
	o.Keys, keys = testKeys(t)
	srv := newConsole(t, o)
	page := srv.URL + "/runs/weft-fixture"
	ctx := chromium(t)
	login := func(who string) chromedp.Action {
		return chromedp.Tasks{network.ClearBrowserCookies(), chromedp.Navigate(srv.URL + "/login?next=/runs/weft-fixture"),
			chromedp.SendKeys(`input[name="key"]`, keys[who]), chromedp.Submit(`form.login`), chromedp.WaitVisible(`#pending .card`)}
	}
	const buttons = `document.querySelectorAll('#pending .card .actions button').length`

	var deciders, mayNot string
	var n int
	run(t, ctx, "a reader", login("rita"),
		liveText(`#pending .card .deciders`, &deciders), liveText(`#pending .card .may-not`, &mayNot), chromedp.Evaluate(buttons, &n))
	require.Equal(t, "Who may decide: ana, or a reviewer with the role finance (and an admin, or the operator on the console's machine).", deciders)
	require.Contains(t, mayNot, "You may not decide it: you are logged in as rita")
	require.Zero(t, n, "no buttons for who may not decide")
	shot(t, ctx, "review-card-may-not")

	var refused, decided string
	var red, stillRed bool
	run(t, ctx, "the named reviewer", login("ana"), liveText(`#pending .card .deciders`, &deciders), chromedp.Evaluate(buttons, &n))
	require.Equal(t, 3, n, "Approve, Edit and Reject")
	run(t, ctx, "refused, then taken",
		chromedp.Click(`#pending .card button.approve`),
		chromedp.Poll(`document.querySelector('#pending .card .card-status').textContent.includes('changed since')`, nil),
		liveText(`#pending .card .card-status`, &refused),
		chromedp.Evaluate(`document.querySelector('#pending .card .card-status').classList.contains('error')`, &red),
		chromedp.Click(`#pending .card button.approve`),
		chromedp.Poll(`document.querySelector('#pending .card.decided') !== null`, nil),
		liveText(`#pending .card .card-status`, &decided),
		chromedp.Evaluate(`document.querySelector('#pending .card .card-status').classList.contains('error')`, &stillRed))
	require.Contains(t, refused, "changed since it was shown")
	require.True(t, red, "the refusal is an error")
	require.Contains(t, decided, "approved by ana")
	require.False(t, stillRed, "the decision taken after a refusal is not shown as an error")
	shot(t, ctx, "review-card-decided")

	var reloaded, other string
	run(t, ctx, "reloaded", chromedp.Navigate(page), chromedp.WaitVisible(`#pending .card.decided`), liveText(`#pending .card.decided .card-status`, &reloaded))
	require.Contains(t, reloaded, "approved by ana", "the decision is read from the run")
	run(t, ctx, "another viewer", login("env"), liveText(`#pending .card.decided .card-status`, &other), chromedp.Evaluate(buttons, &n))
	require.Contains(t, other, "approved by ana")
	require.Zero(t, n)
}
