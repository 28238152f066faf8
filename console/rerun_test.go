package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
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
)

// rerunTemporal is fixtureTemporal whose one run has the status the test sets, whose history
// holds one activity call per step of calls (what the step's inputs panel reads), and which
// records the runs started instead of starting them.
type rerunTemporal struct {
	*fixtureTemporal
	calls map[string]any

	mu      sync.Mutex
	status  enums.WorkflowExecutionStatus
	started map[string]*weftv1.RunRequest
}

func (f *rerunTemporal) set(st enums.WorkflowExecutionStatus) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status = st
}

func (f *rerunTemporal) runs() map[string]*weftv1.RunRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]*weftv1.RunRequest{}
	for id, r := range f.started {
		out[id] = r
	}
	return out
}

func (f *rerunTemporal) DescribeWorkflowExecution(context.Context, string, string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	f.mu.Lock()
	st := f.status
	f.mu.Unlock()
	start := time.Now().Add(-time.Minute)
	info := &workflowpb.WorkflowExecutionInfo{Status: st, StartTime: timestamppb.New(start)}
	if st != enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		info.CloseTime = timestamppb.New(start.Add(30 * time.Second))
	}
	return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: info}, nil
}

func (f *rerunTemporal) GetWorkflowHistory(ctx context.Context, id, runID string, long bool, filter enums.HistoryEventFilterType) tclient.HistoryEventIterator {
	it := f.fixtureTemporal.GetWorkflowHistory(ctx, id, runID, long, filter).(*events)
	n := int64(1)
	for step, in := range f.calls {
		p, err := converter.GetDefaultDataConverter().ToPayload(in)
		if err != nil {
			panic(err)
		}
		n++
		it.list = append(it.list, &historypb.HistoryEvent{EventId: n, EventType: enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
			Attributes: &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{
				ActivityId: step + "#1", ActivityType: &commonpb.ActivityType{Name: "chunk"}, Input: &commonpb.Payloads{Payloads: []*commonpb.Payload{p}},
			}}})
	}
	return it
}

func (f *rerunTemporal) ExecuteWorkflow(_ context.Context, o tclient.StartWorkflowOptions, _ any, args ...any) (tclient.WorkflowRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.started == nil {
		f.started = map[string]*weftv1.RunRequest{}
	}
	f.started[o.ID] = args[0].(*weftv1.RunRequest)
	return startedRun{id: o.ID}, nil
}

type startedRun struct {
	tclient.WorkflowRun
	id string
}

func (r startedRun) GetID() string    { return r.id }
func (r startedRun) GetRunID() string { return "r1" }

// A run of pipeline: a completed, b failed, t (an inline data tool) skipped.
const (
	rerunDef = `{"name":"pipeline","steps":[{"id":"a","tool":"chunk","inputs":{"text":"hello"}},
	  {"id":"b","tool":"chunk","inputs":{"text":"{{ a.output.chunks[0] }}"}},
	  {"id":"t","tool":"template","inputs":{"text":"{{ b.output.chunks[0] }}"}}]}`
	rerunState = `{"workflow":"pipeline","status":"failed","error":"b: boom","steps":[
	  {"id":"a","tool":"chunk","status":"completed","output":{"chunks":["hello"]}},
	  {"id":"b","tool":"chunk","status":"failed","error":"boom"},
	  {"id":"t","tool":"template","status":"skipped","reason":"b failed"}]}`
)

// rerunConsole serves a console over a rerunTemporal whose run weft-fixture has status st; with
// login, it asks for one (testKeys).
func rerunConsole(t *testing.T, st enums.WorkflowExecutionStatus, login bool) (*rerunTemporal, *httptest.Server, map[string]string) {
	t.Helper()
	return rerunConsoleOf(t, st, login, &fixtureTemporal{})
}

// rerunConsoleOf is rerunConsole whose run's start request has base's startedBy and origin (and
// base's definition and state when it has them; rerunDef's run otherwise).
func rerunConsoleOf(t *testing.T, st enums.WorkflowExecutionStatus, login bool, base *fixtureTemporal) (*rerunTemporal, *httptest.Server, map[string]string) {
	t.Helper()
	if base.def == "" {
		var state weftv1.ExecutionState
		require.NoError(t, protojson.Unmarshal([]byte(rerunState), &state))
		base.def, base.state = rerunDef, &state
	}
	f := &rerunTemporal{fixtureTemporal: base, status: st,
		calls: map[string]any{"b": map[string]any{"text": "hello world"}}}
	o := console.Options{Client: weftclient.New(f, "console-test"), Reviewer: "op"}
	keys := map[string]string{}
	if login {
		o.Keys, keys = testKeys(t)
		o.RequireLogin = true
	}
	return f, newConsole(t, o), keys
}

// TestRetryEndpoint: POST /v1/runs/{id}/retry, as the run page sends it, resumes a failed run
// through weftclient.Retry (a cancelled or terminated one too, as weft retry does: the page
// offers no retry of it, TestRunPageRetry) (the new run reuses the completed step and records the run it resumes, and
// who retried it), needs the runner role as starting a run does, the CSRF token and the
// console's origin, and answers a run that cannot be resumed with a 400 that says why. A runner
// retries only the runs it started (weftclient.CheckAct; 403 naming who may, or the read refusal
// for a run it may not read), an admin any, and a client's run stays a client's.
func TestRetryEndpoint(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status enums.WorkflowExecutionStatus
		who    string // "" the operator on this machine (no login)
		owner  string // who started the run being retried ("" the operator)
		origin string // the run's origin, which the new run keeps
		code   int
		want   string // in the answer
		by     string // StartedBy of the new run
	}{
		{"failed", enums.WORKFLOW_EXECUTION_STATUS_FAILED, "", "", weftclient.OriginOperator, http.StatusOK, `"resumedFrom":"weft-fixture"`, ""},
		{"cancelled", enums.WORKFLOW_EXECUTION_STATUS_CANCELED, "", "", weftclient.OriginOperator, http.StatusOK, `"resumedFrom":"weft-fixture"`, ""},
		{"terminated", enums.WORKFLOW_EXECUTION_STATUS_TERMINATED, "", "", weftclient.OriginOperator, http.StatusOK, `"resumedFrom":"weft-fixture"`, ""},
		{"the operator's run by a runner", enums.WORKFLOW_EXECUTION_STATUS_FAILED, "carl", "", weftclient.OriginOperator, http.StatusForbidden, "cannot retry run weft-fixture: it is the operator's, and only the operator", ""},
		{"another's run by an admin", enums.WORKFLOW_EXECUTION_STATUS_FAILED, "env", "carl", weftclient.OriginOperator, http.StatusOK, `"rerun":["b","t"]`, auth.EnvKeyName},
		{"its own run by a runner", enums.WORKFLOW_EXECUTION_STATUS_FAILED, "carl", "carl", weftclient.OriginOperator, http.StatusOK, `"reused":["a"]`, "carl"},
		{"a client's run", enums.WORKFLOW_EXECUTION_STATUS_FAILED, "", "", weftclient.OriginClient, http.StatusOK, `"reused":["a"]`, ""},
		{"a client's run by a runner", enums.WORKFLOW_EXECUTION_STATUS_FAILED, "carl", "carl", weftclient.OriginClient, http.StatusOK, `"reused":["a"]`, "carl"},
		{"running", enums.WORKFLOW_EXECUTION_STATUS_RUNNING, "", "", weftclient.OriginOperator, http.StatusBadRequest, "is still running: cancel it first", ""},
		{"completed", enums.WORKFLOW_EXECUTION_STATUS_COMPLETED, "", "", weftclient.OriginOperator, http.StatusBadRequest, "there is nothing to resume", ""},
		{"by a reader", enums.WORKFLOW_EXECUTION_STATUS_FAILED, "rita", "", weftclient.OriginOperator, http.StatusForbidden, `needs the role \"runner\"`, ""},
		{"by a reviewer", enums.WORKFLOW_EXECUTION_STATUS_FAILED, "ana", "", weftclient.OriginOperator, http.StatusForbidden, `needs the role \"runner\"`, ""},
		{"by a runner who may not read it", enums.WORKFLOW_EXECUTION_STATUS_FAILED, "carl", "zoe", weftclient.OriginOperator, http.StatusForbidden, "was started by zoe", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, srv, keys := rerunConsoleOf(t, tc.status, tc.who != "", &fixtureTemporal{startedBy: tc.owner, origin: tc.origin})
			base := srv.URL
			c, token := http.DefaultClient, ""
			if tc.who != "" {
				c, token = loginAs(t, srv, keys[tc.who])
			} else {
				token = csrfOf(t, c, base)
			}
			code, out := post(t, c, base+"/v1/runs/weft-fixture/retry", token, base, `{}`)
			require.Equal(t, tc.code, code, out)
			require.Contains(t, out, tc.want)
			started := f.runs()
			if tc.code != http.StatusOK {
				require.Empty(t, started, "nothing is started")
				return
			}
			var ans struct{ ID, ResumedFrom string }
			require.NoError(t, json.Unmarshal([]byte(out), &ans))
			require.True(t, strings.HasPrefix(ans.ID, "weft-fixture-retry-"), ans.ID)
			require.Equal(t, "weft-fixture", ans.ResumedFrom)
			req := started[ans.ID]
			require.NotNil(t, req, "the new run was started: %v", started)
			require.Equal(t, "weft-fixture", req.GetResumedFrom())
			require.Contains(t, req.GetReuse(), "a", "the completed step is reused")
			require.NotContains(t, req.GetReuse(), "b")
			require.Equal(t, tc.by, req.GetStartedBy())
			require.Equal(t, tc.origin, req.GetOrigin(), "the run's own definition keeps its origin (a client's stays a client's)")
		})
	}
	t.Run("needs the token and the console's origin", func(t *testing.T) {
		f, srv, _ := rerunConsole(t, enums.WORKFLOW_EXECUTION_STATUS_FAILED, false)
		base := srv.URL
		token := csrfOf(t, http.DefaultClient, base)
		code, _ := post(t, http.DefaultClient, base+"/v1/runs/weft-fixture/retry", "", base, `{}`)
		require.Equal(t, http.StatusForbidden, code)
		code, _ = post(t, http.DefaultClient, base+"/v1/runs/weft-fixture/retry", token, "http://evil.example", `{}`)
		require.Equal(t, http.StatusForbidden, code)
		require.Empty(t, f.runs())
	})
	t.Run("needs a login", func(t *testing.T) {
		f, srv, _ := rerunConsole(t, enums.WORKFLOW_EXECUTION_STATUS_FAILED, true)
		base := srv.URL
		code, out := post(t, http.DefaultClient, base+"/v1/runs/weft-fixture/retry", "x", base, `{}`)
		require.Equal(t, http.StatusUnauthorized, code, out)
		require.Empty(t, f.runs())
	})
}

// TestRunPageRetry: the run page offers "Retry from the failed step" on a failed run only (a
// cancelled one has no failed step); the button posts the retry and goes to the new run, and a refusal is written in the page.
func TestRunPageRetry(t *testing.T) {
	f, srv, _ := rerunConsole(t, enums.WORKFLOW_EXECUTION_STATUS_COMPLETED, false)
	page := srv.URL + "/runs/weft-fixture"
	ctx := chromium(t)
	hidden := func(st enums.WorkflowExecutionStatus) bool {
		f.set(st)
		var h bool
		run(t, ctx, "open "+st.String(), chromedp.Navigate(page), chromedp.WaitVisible(`svg#graph g.node[data-step="a"]`),
			chromedp.Evaluate(`getComputedStyle(document.getElementById('retry')).display === 'none'`, &h))
		return h
	}
	require.True(t, hidden(enums.WORKFLOW_EXECUTION_STATUS_COMPLETED), "a completed run has nothing to retry")
	require.True(t, hidden(enums.WORKFLOW_EXECUTION_STATUS_CANCELED), "a cancelled run has no failed step to retry from")
	require.False(t, hidden(enums.WORKFLOW_EXECUTION_STATUS_FAILED), "a failed run can be resumed")

	// the run completed since the page was drawn: the refusal is shown next to the button
	f.set(enums.WORKFLOW_EXECUTION_STATUS_COMPLETED)
	var refusal, still string
	run(t, ctx, "refused retry", chromedp.Click(`#retry`),
		chromedp.Poll(`document.getElementById('retry-status').textContent.includes('nothing to resume')`, nil),
		chromedp.Text(`#retry-status`, &refusal), chromedp.Location(&still))
	require.Contains(t, refusal, "Retry refused: run weft-fixture completed: there is nothing to resume")
	require.Equal(t, page, still, "the page stays")
	require.Empty(t, f.runs())
	shot(t, ctx, "run-retry-refused")

	f.set(enums.WORKFLOW_EXECUTION_STATUS_FAILED)
	run(t, ctx, "retry", chromedp.Navigate(page), chromedp.WaitVisible(`#retry`), chromedp.Click(`#retry`))
	went := arrive(t, ctx, "/runs/weft-fixture-retry-")
	started := f.runs()
	require.Len(t, started, 1)
	for id, req := range started {
		require.Equal(t, srv.URL+"/runs/"+id, went, "the page goes to the new run")
		require.Equal(t, "weft-fixture", req.GetResumedFrom())
		require.Contains(t, req.GetReuse(), "a")
	}
	shot(t, ctx, "run-retry")
}

// TestRunStepAlone: a tool step's detail offers "Run this step alone": a JSON text of the inputs
// of its first call, which Run starts as a one-step workflow of the person's own (POST /v1/runs,
// client origin); invalid JSON and a definition the validator refuses are written by the form.
// An inline data tool has no such button.
func TestRunStepAlone(t *testing.T) {
	f, srv, _ := rerunConsole(t, enums.WORKFLOW_EXECUTION_STATUS_FAILED, false)
	page := srv.URL + "/runs/weft-fixture"
	ctx := chromium(t)
	var inline int
	run(t, ctx, "inline step", chromedp.Navigate(page), chromedp.WaitVisible(`svg#graph g.node[data-step="t"]`),
		chromedp.Click(`svg#graph g.node[data-step="t"]`), chromedp.WaitVisible(`#detail .inline-note`),
		chromedp.Evaluate(`document.querySelectorAll('#detail .alone-open').length`, &inline))
	require.Zero(t, inline, "an inline data tool is not run alone")

	var prefilled string
	var formHidden bool
	run(t, ctx, "open the form", chromedp.Click(`svg#graph g.node[data-step="b"]`),
		chromedp.WaitVisible(`#detail .alone-open`),
		chromedp.Evaluate(`document.querySelector('#detail .alone-form').hidden`, &formHidden),
		chromedp.Click(`#detail .alone-open`), chromedp.WaitVisible(`#detail .alone-inputs`),
		chromedp.Value(`#detail .alone-inputs`, &prefilled))
	require.True(t, formHidden, "the form opens on a click")
	require.JSONEq(t, `{"text":"hello world"}`, prefilled, "the first call's resolved inputs")

	var msg string
	run(t, ctx, "invalid JSON", chromedp.SetValue(`#detail .alone-inputs`, `{"text": `),
		chromedp.Click(`#detail .alone-run`),
		chromedp.Poll(`document.querySelector('#detail .alone-status').textContent !== ''`, nil),
		chromedp.Text(`#detail .alone-status`, &msg))
	require.Contains(t, msg, "not valid JSON")
	run(t, ctx, "refused by the validator", chromedp.SetValue(`#detail .alone-inputs`, `{"txt": "x"}`),
		chromedp.Evaluate(`document.querySelector('#detail .alone-inputs').dispatchEvent(new Event('input'))`, nil),
		chromedp.Click(`#detail .alone-run`),
		chromedp.Poll(`document.querySelector('#detail .alone-status').textContent.includes('unknown field')`, nil),
		chromedp.Text(`#detail .alone-status`, &msg))
	require.Contains(t, msg, `unknown field "txt"`)
	require.Empty(t, f.runs())
	shot(t, ctx, "run-step-alone-refused")

	run(t, ctx, "run it", chromedp.SetValue(`#detail .alone-inputs`, `{"text": "edited"}`),
		chromedp.Click(`#detail .alone-run`))
	went := arrive(t, ctx, "/runs/weft-pipeline-b-alone-")
	started := f.runs()
	require.Len(t, started, 1)
	for id, req := range started {
		require.Equal(t, srv.URL+"/runs/"+id, went, "the page goes to the new run")
		require.Equal(t, weftclient.OriginClient, req.GetOrigin(), "the person's own definition, checked as a client's")
		require.Empty(t, req.GetResumedFrom())
		var def map[string]any
		require.NoError(t, json.Unmarshal([]byte(req.GetDefinitionJson()), &def))
		require.Equal(t, "pipeline-b-alone", def["name"])
		require.Equal(t, "{{ b.output }}", def["output"])
		require.Equal(t, []any{map[string]any{"id": "b", "tool": "chunk", "inputs": map[string]any{"text": "edited"}}}, def["steps"])
	}
	shot(t, ctx, "run-step-alone")
}

// arrive waits until the page has gone to a run page whose path starts with prefix and drawn it,
// and returns its address. A wait the navigation interrupts (its page is gone) is waited again.
func arrive(t *testing.T, ctx context.Context, prefix string) string {
	t.Helper()
	cond := fmt.Sprintf(`location.pathname.startsWith(%q) && document.readyState === 'complete' && !!document.getElementById('run-id')`, prefix)
	var err error
	for range 20 {
		if err = chromedp.Run(ctx, chromedp.Poll(cond, nil, chromedp.WithPollingTimeout(10*time.Second))); err == nil {
			var at string
			run(t, ctx, "where", chromedp.Location(&at))
			return at
		}
		// the navigation destroyed the page the wait ran in: wait again in the new one
	}
	run(t, ctx, "arrive at "+prefix, chromedp.ActionFunc(func(context.Context) error { return err }))
	return ""
}

// TestRunStepAloneSettings: "Run this step alone" names the new workflow within the 200
// characters a name may have however long the workflow's name is, and says which of the step's
// settings the run alone does not have.
func TestRunStepAloneSettings(t *testing.T) {
	name := strings.Repeat("w", 200)
	def := `{"name":"` + name + `","steps":[{"id":"a","tool":"chunk","inputs":{"text":"hello"}},
	  {"id":"b","tool":"chunk","forEach":"{{ a.output.chunks }}","concurrency":2,"timeout":"30s","retry":{"maxAttempts":3},"condition":"{{ a.output.chunks }}","inputs":{"text":"{{ item }}"}}]}`
	var st weftv1.ExecutionState
	require.NoError(t, protojson.Unmarshal([]byte(rerunState), &st))
	f, srv, _ := rerunConsoleOf(t, enums.WORKFLOW_EXECUTION_STATUS_FAILED, false, &fixtureTemporal{def: def, state: &st})
	ctx := chromium(t)
	var note string
	run(t, ctx, "open the form", chromedp.Navigate(srv.URL+"/runs/weft-fixture"), chromedp.WaitVisible(`svg#graph g.node[data-step="b"]`),
		chromedp.Click(`svg#graph g.node[data-step="b"]`), chromedp.WaitVisible(`#detail .alone-open`),
		chromedp.Click(`#detail .alone-open`), chromedp.WaitVisible(`#detail .alone-inputs`),
		chromedp.Text(`#detail .alone-dropped`, &note))
	for _, s := range []string{"timeout 30s", "retry", "forEach (concurrency 2)", "condition {{ a.output.chunks }}"} {
		require.Contains(t, note, s, "the settings not carried over are named")
	}
	// the page goes to the new run, or the form says why not (the name too long, before)
	var msg string
	run(t, ctx, "run it", chromedp.Click(`#detail .alone-run`))
	for range 20 {
		err := chromedp.Run(ctx, chromedp.Poll(`location.pathname !== '/runs/weft-fixture' ? 'went' :
		  (document.querySelector('#detail .alone-status.error') || {}).textContent`, &msg, chromedp.WithPollingTimeout(10*time.Second)))
		if err == nil {
			break
		}
		// the navigation destroyed the page the wait ran in: wait again in the new one
	}
	require.Equal(t, "went", msg, "the definition is valid")
	arrive(t, ctx, "/runs/weft-"+strings.Repeat("w", 40))
	started := f.runs()
	require.Len(t, started, 1)
	for _, req := range started {
		var d map[string]any
		require.NoError(t, json.Unmarshal([]byte(req.GetDefinitionJson()), &d))
		got, _ := d["name"].(string)
		require.Len(t, got, 200, "the name is as long as it may be")
		require.True(t, strings.HasPrefix(got, "www") && strings.HasSuffix(got, "-b-alone"), got)
	}
}

// TestRunActionsOnlyForWhoMayAct: the run page shows Cancel and Retry only to who may act on the
// run (the runner role and weftclient.MayAct: its starter, an admin, the operator), so nobody
// else is refused after a click: carl on the failed run he started, and an admin, see Retry; on
// the operator's run, a reader, a reviewer and carl (who did not start it) do not.
func TestRunActionsOnlyForWhoMayAct(t *testing.T) {
	ctx := chromium(t)
	for _, tc := range []struct {
		owner, who string
		may        bool
	}{{"carl", "carl", true}, {"carl", "env", true}, {"", "carl", false}, {"", "rita", false}, {"", "ana", false}} {
		_, srv, keys := rerunConsoleOf(t, enums.WORKFLOW_EXECUTION_STATUS_FAILED, true, &fixtureTemporal{startedBy: tc.owner})
		c, _ := loginAs(t, srv, keys[tc.who])
		resp, err := c.Get(srv.URL + "/api/runs/weft-fixture")
		require.NoError(t, err)
		var v struct {
			MayAct bool `json:"mayAct"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&v))
		resp.Body.Close()
		require.Equal(t, tc.may, v.MayAct, "%s on %q's run", tc.who, tc.owner)
		var hidden bool
		run(t, ctx, tc.who, network.ClearBrowserCookies(), chromedp.Navigate(srv.URL+"/login?next=/runs/weft-fixture"),
			chromedp.SendKeys(`input[name="key"]`, keys[tc.who]), chromedp.Submit(`form.login`), chromedp.WaitVisible(`svg#graph g.node`),
			chromedp.Evaluate(`getComputedStyle(document.getElementById('retry')).display === 'none'`, &hidden))
		require.Equal(t, !tc.may, hidden, "%s on %q's run: Retry shown only to who may", tc.who, tc.owner)
	}
}
