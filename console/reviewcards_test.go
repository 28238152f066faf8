package console_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/console"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
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
	if f.state.GetStatus() == runwire.StatusCompleted {
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
	if o.UpdateName != runwire.UpdateReview {
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

// ListWorkflow lists the run while its review waits (the reviews page's listing).
func (f *gatedTemporal) ListWorkflow(_ context.Context, r *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.state.GetPendingReviews()) == 0 || strings.Contains(r.Query, `ExecutionStatus != "Running"`) {
		return &workflowservice.ListWorkflowExecutionsResponse{}, nil
	}
	return &workflowservice.ListWorkflowExecutionsResponse{Executions: []*workflowpb.WorkflowExecutionInfo{{
		Execution: &commonpb.WorkflowExecution{WorkflowId: "weft-fixture"}, Type: &commonpb.WorkflowType{Name: runwire.WorkflowType},
		Status: enums.WORKFLOW_EXECUTION_STATUS_RUNNING, StartTime: timestamppb.New(time.Now().Add(-time.Minute))}}}, nil
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

// TestDecidedItemsOfARunningForEach: a forEach of reviews still running holds no decisions in its
// state (the step has no output yet): the run's review_decided events draw the items decided, on a
// page opened after the decision as on one that watched it; the gates still waiting stay cards
// with their buttons.
func TestDecidedItemsOfARunningForEach(t *testing.T) {
	def := `{"name":"approvals","inputs":{"xs":{"type":"array","default":[1]}},"steps":[{"id":"each","tool":"review","forEach":"{{ inputs.xs }}","inputs":{"title":"ok?","data":"{{ item }}"}}]}`
	state := `{"workflow":"approvals","status":"awaiting_review","steps":[{"id":"each","tool":"review","status":"awaiting_review","startedAt":"2025-01-01T10:00:00Z","itemsTotal":2,"itemsDone":1}],
	  "pendingReviews":[{"id":"each[1]","step":"each","title":"ok?","data":2,"kind":"review","executionId":"weft-fixture"}]}`
	ctx := liveRun(t, def, state)
	var cards []string
	run(t, ctx, "an item decided", chromedp.WaitVisible(`#pending .card[data-review="each[1]"] button.approve`),
		chromedp.Evaluate(`__event({event:"review_decided",run:"weft-fixture",step:"each",key:"each[0]",time:"2025-01-01T10:01:00Z",decision:"approve",reviewer:"ana",review:{id:"each[0]",title:"ok?"}})`, nil),
		chromedp.WaitVisible(`#pending .card.decided[data-review="each[0]"]`),
		chromedp.Evaluate(`[...document.querySelectorAll('#pending .card')].map((c) => c.dataset.review + ': ' + c.querySelector('.card-status').textContent + (c.querySelector('button.approve') ? ' [buttons]' : ''))`, &cards))
	require.Len(t, cards, 2)
	require.Equal(t, "each[1]:  [buttons]", cards[0])
	require.Contains(t, cards[1], "each[0]: approved by ana")
}

// TestDecidedReviewsFromTheState: the snapshot's decided gates are the run's: a review step's
// output (who, what, when, the comment, a typed name told apart), each decided item of a forEach
// of reviews (not the undecided ones), an agent's decided tool calls.
func TestDecidedReviewsFromTheState(t *testing.T) {
	state := `{"workflow":"mixed","status":"completed","steps":[
	  {"id":"check","name":"Check it","tool":"review","status":"completed","output":{"decision":"edit","reviewer":"ana","authenticated":true,"comment":"fixed a typo","decidedAt":"2025-01-01T10:05:00Z","data":1}},
	  {"id":"each","tool":"review","status":"failed","output":{"results":[{"decision":"approve","reviewer":"bo","authenticated":false,"decidedAt":"2025-01-01T10:06:00Z"},{"decision":"reject","reviewer":"ana","authenticated":true,"comment":"no"},{"decision":"undecided","data":null}],"count":3}},
	  {"id":"helper","tool":"agent","status":"completed","toolCalls":[{"id":"c1","tool":"search","status":"completed","decision":"approve","reviewer":"cy","authenticated":true},{"id":"c2","tool":"search","status":"completed"}]}]}`
	var st weftv1.ExecutionState
	require.NoError(t, protojson.Unmarshal([]byte(state), &st))
	c := weftclient.New(&fixtureTemporal{def: `{"name":"mixed","steps":[{"id":"check","tool":"review","inputs":{"title":"t","data":1}}]}`, state: &st}, "console-test")
	srv := newConsole(t, console.Options{Client: c, Reviewer: "op"})
	resp, err := srv.Client().Get(srv.URL + "/api/runs/weft-fixture")
	require.NoError(t, err)
	defer resp.Body.Close()
	var v struct {
		Snapshot struct {
			Decided []console.DecidedReview `json:"decided"`
		} `json:"snapshot"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&v))
	at := func(s string) time.Time { t, _ := time.Parse(time.RFC3339, s); return t }
	require.Equal(t, []console.DecidedReview{
		{ID: "check", Step: "check", Title: "Check it", Decision: "edit", Reviewer: "ana", Authenticated: true, Comment: "fixed a typo", DecidedAt: at("2025-01-01T10:05:00Z")},
		{ID: "each[0]", Step: "each", Title: "each, item 0", Decision: "approve", Reviewer: "bo", DecidedAt: at("2025-01-01T10:06:00Z")},
		{ID: "each[1]", Step: "each", Title: "each, item 1", Decision: "reject", Reviewer: "ana", Authenticated: true, Comment: "no"},
		{ID: "helper/c1", Step: "helper", Title: "helper: tool call search", Decision: "approve", Reviewer: "cy", Authenticated: true},
	}, v.Snapshot.Decided)
}

// TestCancelledForEachCountsCompletedItems: a forEach cancelled half way (a done, b cancelled in
// flight, c and d never started) shows the items done the run counts — its items completed, 1 of
// 4 (weftclient.Execution's state) — on its node, in its detail and over its items, and each item
// as it ended; the page reads the count, it does not make one of the items' rows.
func TestCancelledForEachCountsCompletedItems(t *testing.T) {
	def := `{"name":"many","inputs":{"xs":{"type":"array","default":[1]}},"steps":[{"id":"each","tool":"template","forEach":"{{ inputs.xs }}","concurrency":2,"inputs":{"text":"{{ item }}"}}]}`
	state := `{"workflow":"many","status":"cancelled","steps":[{"id":"each","tool":"template","status":"cancelled","error":"stopped: the run was cancelled while the step was in flight",
	  "startedAt":"2025-01-01T10:00:00Z","finishedAt":"2025-01-01T10:01:00Z","itemsTotal":4,"itemsDone":1}]}`
	var st weftv1.ExecutionState
	require.NoError(t, protojson.Unmarshal([]byte(state), &st))
	_, srv, _ := rerunConsoleOf(t, enums.WORKFLOW_EXECUTION_STATUS_CANCELED, false, &fixtureTemporal{def: def, state: &st})
	ctx := chromium(t)
	ev := func(typ string, item int, errText, kind string) string {
		return fmt.Sprintf(`__event({event:%q,run:"weft-fixture",step:"each",key:"each[%d]",item:%d,time:"2025-01-01T10:00:30Z",error:%q,errorKind:%q});`, typ, item, item, errText, kind)
	}
	var got struct {
		Node, Head, Row string
		Items           []string
	}
	run(t, ctx, "a cancelled forEach", chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(liveEvents).Do(ctx)
		return err
	}), chromedp.Navigate(srv.URL+"/runs/weft-fixture"), chromedp.WaitVisible(`svg#graph g.node`),
		chromedp.Click(`svg#graph g.node[data-step="each"]`), chromedp.WaitVisible(`#detail table.items`),
		chromedp.Evaluate(`__event({event:"step_started",run:"weft-fixture",step:"each",time:"2025-01-01T10:00:00Z"});`+
			ev("item_started", 0, "", "")+ev("item_started", 1, "", "")+ev("item_completed", 0, "", "")+ev("item_failed", 1, "cancelled", "cancelled")+
			`__event({event:"step_cancelled",run:"weft-fixture",step:"each",time:"2025-01-01T10:01:00Z"});`, nil),
		chromedp.Poll(`document.querySelector('#detail tr[data-item="1"] .status').textContent.includes('cancelled')`, nil),
		chromedp.Evaluate(`({ Node: document.querySelector('svg#graph g.node[data-step="each"] .progress').textContent,
		  Head: document.querySelector('#detail section.items h3').textContent,
		  Row: [...document.querySelectorAll('#detail dt')].find((d) => d.textContent === 'items').nextElementSibling.textContent,
		  Items: [...document.querySelectorAll('#detail table.items tbody tr[data-item] .status')].map((x) => x.textContent) })`, &got))
	require.Equal(t, "1/4", got.Node)
	require.Equal(t, "Items (1/4 done)", got.Head)
	require.Equal(t, "1/4", got.Row)
	require.Equal(t, []string{"✓ completed", "⊘ cancelled", "not run", "not run"}, got.Items)
}

// TestReviewsPageSaysWhoDecidedElsewhere: on the reviews page a card whose gate another viewer
// decided is not taken away: it says who decided what, as the run records it, and offers no
// buttons any more.
func TestReviewsPageSaysWhoDecidedElsewhere(t *testing.T) {
	f := newGated(t)
	o := console.Options{Client: weftclient.New(f, "console-test"), RequireLogin: true, ReviewListingTTL: -1}
	var keys map[string]string
	o.Keys, keys = testKeys(t)
	srv := newConsole(t, o)
	ctx := chromium(t)
	var n int
	run(t, ctx, "ana's reviews", chromedp.Navigate(srv.URL+"/login?next=/reviews"), chromedp.SendKeys(`input[name="key"]`, keys["ana"]),
		chromedp.Submit(`form.login`), chromedp.WaitVisible(`#review-list .card button.approve`),
		chromedp.Evaluate(`document.querySelectorAll('#review-list .card .actions button').length`, &n))
	require.Equal(t, 3, n)
	c, token := loginAs(t, srv, keys["env"])
	for _, code := range []int{http.StatusConflict, http.StatusOK} { // the run refuses the first (gatedTemporal)
		got, out := post(t, c, srv.URL+"/v1/runs/weft-fixture/reviews", token, srv.URL, `{"review":"check","decision":"approve","comment":"fine","digest":"d1"}`)
		require.Equal(t, code, got, out)
	}
	var status, none string
	run(t, ctx, "decided by another", chromedp.Poll(`(document.querySelector('#review-list .card .card-status') || {}).textContent.includes('approved by')`, nil, chromedp.WithPollingTimeout(20*time.Second)),
		liveText(`#review-list .card .card-status`, &status), chromedp.Evaluate(`document.querySelectorAll('#review-list .card .actions button').length`, &n),
		chromedp.Evaluate(`document.getElementById('no-reviews').hidden ? '' : document.getElementById('no-reviews').textContent`, &none))
	require.Contains(t, status, "approved by "+auth.EnvKeyName)
	require.Contains(t, status, "“fine”")
	require.Zero(t, n, "no buttons on a gate decided")
	require.Equal(t, "Nothing waits for a decision.", none)
	shot(t, ctx, "reviews-decided-elsewhere")
}
