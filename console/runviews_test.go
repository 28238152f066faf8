package console_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
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
	"github.com/weftworks/weft/runwire"
)

// fixtureTemporal is a Temporal that knows one run (closed unless its state says it runs): its description, its start request
// (the workflow file), its state query's answer, and no pending reviews (the header asks). Anything
// else it is asked panics (the embedded nil client): the server logs it and the page shows it.
type fixtureTemporal struct {
	tclient.Client
	def   string
	state *weftv1.ExecutionState
	// startedBy and origin are the start request's (who started the run, whose definition it is)
	startedBy, origin string
}

func (f *fixtureTemporal) DescribeWorkflowExecution(context.Context, string, string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	start := time.Now().Add(-time.Minute)
	if st := f.state.GetStatus(); st == runwire.StatusRunning || st == runwire.StatusAwaitingReview {
		// a run in progress: Temporal says running, as it would of the run the state describes
		return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{
			Status: enums.WORKFLOW_EXECUTION_STATUS_RUNNING, StartTime: timestamppb.New(start)}}, nil
	}
	return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{
		Status: enums.WORKFLOW_EXECUTION_STATUS_COMPLETED, StartTime: timestamppb.New(start), CloseTime: timestamppb.New(start.Add(30 * time.Second)),
	}}, nil
}

func (f *fixtureTemporal) QueryWorkflow(context.Context, string, string, string, ...any) (converter.EncodedValue, error) {
	p, err := converter.GetDefaultDataConverter().ToPayload(f.state)
	if err != nil {
		return nil, err
	}
	return encoded{p}, nil
}

func (f *fixtureTemporal) GetWorkflowHistory(context.Context, string, string, bool, enums.HistoryEventFilterType) tclient.HistoryEventIterator {
	p, err := converter.GetDefaultDataConverter().ToPayload(&weftv1.RunRequest{DefinitionJson: f.def, Source: "fixture.json", StartedBy: f.startedBy, Origin: f.origin})
	if err != nil {
		panic(err)
	}
	return &events{list: []*historypb.HistoryEvent{{EventId: 1, EventType: enums.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
		Attributes: &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{
			WorkflowType: &commonpb.WorkflowType{Name: runwire.WorkflowType}, Input: &commonpb.Payloads{Payloads: []*commonpb.Payload{p}},
		}}}}}
}

// UpdateWorkflow: nothing this fixture serves sends an Update; one that did is refused.
func (f *fixtureTemporal) UpdateWorkflow(context.Context, tclient.UpdateWorkflowOptions) (tclient.WorkflowUpdateHandle, error) {
	return nil, serviceerror.NewNotFound("the run takes no waits (fixture)")
}

// GetWorkflow: a run in progress has no result yet; waiting for it ends with the wait.
func (f *fixtureTemporal) GetWorkflow(context.Context, string, string) tclient.WorkflowRun {
	return runInProgress{}
}

type runInProgress struct{ tclient.WorkflowRun }

func (runInProgress) GetID() string    { return "fixture" }
func (runInProgress) GetRunID() string { return "fixture-run" }
func (runInProgress) Get(ctx context.Context, _ any) error {
	<-ctx.Done()
	return ctx.Err()
}
func (r runInProgress) GetWithOptions(ctx context.Context, v any, _ tclient.WorkflowRunGetOptions) error {
	return r.Get(ctx, v)
}

// ListWorkflow: the page's header asks for pending reviews across runs; there are none.
func (f *fixtureTemporal) ListWorkflow(context.Context, *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	return &workflowservice.ListWorkflowExecutionsResponse{}, nil
}

type encoded struct{ p *commonpb.Payload }

func (e encoded) HasValue() bool    { return true }
func (e encoded) Get(ptr any) error { return converter.GetDefaultDataConverter().FromPayload(e.p, ptr) }

type events struct{ list []*historypb.HistoryEvent }

func (e *events) HasNext() bool { return len(e.list) > 0 }
func (e *events) Next() (*historypb.HistoryEvent, error) {
	ev := e.list[0]
	e.list = e.list[1:]
	return ev, nil
}

// fixtureRun serves a console whose one run (weft-fixture) ran def and ended in state (the state
// query's answer as JSON), and returns the run page's URL.
func fixtureRun(t *testing.T, def, state string) string {
	t.Helper()
	var st weftv1.ExecutionState
	require.NoError(t, protojson.Unmarshal([]byte(state), &st), "the fixture's state is an ExecutionState")
	c := weftclient.New(&fixtureTemporal{def: def, state: &st}, "console-test")
	srv := newConsole(t, console.Options{Client: c, Reviewer: "op"})
	return srv.URL + "/runs/weft-fixture"
}

// TestRunAgentIterations: an agent step's detail groups its tool calls by iteration, each with
// the model's text of that iteration, the calls' status, duration, decision and arguments; the
// groups are collapsed but the last.
func TestRunAgentIterations(t *testing.T) {
	def := `{"name":"agentic","steps":[{"id":"a","tool":"agent","inputs":{"prompt":"ship it","tools":["search"],"maxIterations":5}}]}`
	state := `{"workflow":"agentic","status":"completed","steps":[{"id":"a","tool":"agent","status":"completed","durationMs":4200,"iterations":3,
	  "toolCalls":[
	    {"iteration":1,"id":"c1","tool":"search","arguments":{"query":"release notes"},"result":{"hits":2},"durationMs":120,"status":"completed"},
	    {"iteration":1,"id":"c2","tool":"fetch","arguments":{"url":"http://x"},"error":"404 not found","durationMs":80,"status":"failed"},
	    {"iteration":2,"id":"c3","tool":"deploy","arguments":{"version":"1.2"},"result":"deployed","durationMs":900,"status":"completed","decision":"approve","reviewer":"ana","reviewMs":5000}],
	  "output":{"text":"Shipped 1.2","iterations":3,"messages":[
	    {"role":"user","content":"ship it"},
	    {"role":"assistant","content":"Looking for the release notes first.","toolCalls":[{"id":"c1"},{"id":"c2"}]},
	    {"role":"tool","content":"{}"},{"role":"tool","content":"404"},
	    {"role":"assistant","content":"Deploying 1.2 now.","toolCalls":[{"id":"c3"}]},
	    {"role":"tool","content":"deployed"},
	    {"role":"assistant","content":"Shipped 1.2"}]}}]}`
	page := fixtureRun(t, def, state)
	ctx := chromium(t)
	type group struct {
		Summary, Text string
		Open          bool
		Calls         []string
	}
	var groups []group
	var argsShown bool
	read := `[...document.querySelectorAll('#detail details.iteration')].map((d) => ({ Summary: d.querySelector('summary').textContent, Open: d.open,
	  Text: (d.querySelector('.model-text') || {}).textContent || '', Calls: [...d.querySelectorAll('li.call .call-head')].map((c) => c.textContent) }))`
	run(t, ctx, "agent iterations", chromedp.Navigate(page), chromedp.WaitVisible(`svg#graph g.node[data-step="a"]`),
		chromedp.Click(`svg#graph g.node[data-step="a"]`),
		chromedp.WaitVisible(`#detail details.iteration`),
		chromedp.Evaluate(read, &groups),
		chromedp.Click(`#detail details.iteration[data-iteration="1"] > summary`),
		chromedp.Click(`#detail details.iteration[data-iteration="1"] li.call[data-tool="search"] details.call-args > summary`),
		chromedp.Evaluate(`document.querySelector('#detail details.iteration[data-iteration="1"] li.call[data-tool="search"] details.call-args pre').textContent.includes('release notes')`, &argsShown))
	require.Len(t, groups, 3, "one group per iteration: %+v", groups)
	for i, g := range groups {
		require.Contains(t, g.Summary, fmt.Sprintf("Iteration %d", i+1))
		require.Equal(t, i == 2, g.Open, "only the last iteration starts open: %+v", g)
	}
	require.Contains(t, groups[0].Text, "Looking for the release notes first.")
	require.Contains(t, groups[1].Text, "Deploying 1.2 now.")
	require.Contains(t, groups[2].Text, "Shipped 1.2")
	require.Len(t, groups[0].Calls, 2)
	require.Contains(t, groups[0].Calls[0], "search")
	require.Contains(t, groups[0].Calls[0], "completed", "the status is written, not only coloured")
	require.Contains(t, groups[0].Calls[1], "fetch")
	require.Contains(t, groups[0].Calls[1], "failed")
	require.Len(t, groups[1].Calls, 1)
	require.Contains(t, groups[1].Calls[0], "deploy")
	require.Contains(t, groups[1].Calls[0], "approve by ana", "who decided and how")
	require.Contains(t, groups[1].Calls[0], "900 ms")
	require.Empty(t, groups[2].Calls, "the last iteration answered without tools")
	require.True(t, argsShown, "a call's arguments open")
	shot(t, ctx, "run-agent-iterations")
}

// TestRunForEachItems: a forEach step's detail lists its items 50 to a page, each with its status
// and a preview of its output; Next shows the next 50 and an item's whole output opens.
func TestRunForEachItems(t *testing.T) {
	def := `{"name":"many","inputs":{"xs":{"type":"array","default":[1]}},"steps":[{"id":"each","tool":"template","forEach":"{{ inputs.xs }}","inputs":{"text":"{{ item }}"}}]}`
	results := make([]string, 120)
	for i := range results {
		results[i] = fmt.Sprintf(`{"text":"item number %d","n":%d,"long":"%s"}`, i, i, strings.Repeat("x", 200))
	}
	state := `{"workflow":"many","status":"completed","steps":[{"id":"each","tool":"template","status":"completed","itemsTotal":120,"itemsDone":120,
	  "output":{"count":120,"results":[` + strings.Join(results, ",") + `]}}]}`
	page := fixtureRun(t, def, state)
	ctx := chromium(t)
	type rows struct {
		Index  []string
		Status []string
		Range  string
	}
	read := `(() => { const rs = [...document.querySelectorAll('#detail table.items tbody tr[data-item]')];
	  return { Index: rs.map((r) => r.cells[0].textContent), Status: rs.map((r) => r.cells[1].textContent), Range: document.querySelector('#detail .items-range').textContent }; })()`
	var first, second rows
	var opened, head string
	var previewLen int
	run(t, ctx, "forEach items", chromedp.Navigate(page), chromedp.WaitVisible(`svg#graph g.node[data-step="each"]`),
		chromedp.Click(`svg#graph g.node[data-step="each"]`),
		chromedp.WaitVisible(`#detail table.items`),
		chromedp.Evaluate(read, &first),
		chromedp.Evaluate(`[...document.querySelector('#detail section.items').childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join('')`, &head),
		chromedp.Evaluate(`document.querySelector('#detail tr[data-item="3"] .item-preview').textContent.length`, &previewLen),
		chromedp.Click(`#detail .items-next`),
		chromedp.WaitVisible(`#detail tr[data-item="57"]`),
		chromedp.Evaluate(read, &second),
		chromedp.Click(`#detail tr[data-item="57"] .item-open`),
		chromedp.WaitVisible(`#detail tr[data-item-output="57"]`),
		chromedp.Text(`#detail tr[data-item-output="57"]`, &opened))
	require.Empty(t, head, "no stray text (a null written as text) among the items' parts")
	require.Len(t, first.Index, 50, "a page is 50 items")
	require.Equal(t, "0", first.Index[0])
	require.Equal(t, "49", first.Index[49])
	require.Contains(t, first.Status[0], "completed", "the status is written, not only coloured")
	require.Contains(t, first.Range, "1–50 of 120")
	require.LessOrEqual(t, previewLen, 80, "the preview is short")
	require.Len(t, second.Index, 50)
	require.Equal(t, "50", second.Index[0])
	require.Equal(t, "99", second.Index[49])
	require.Contains(t, second.Range, "51–100 of 120")
	require.Contains(t, opened, "item number 57")
	require.Contains(t, opened, strings.Repeat("x", 200), "the whole output, not the preview")
	shot(t, ctx, "run-foreach-items")
}

// TestRunTimeline: the run page draws one bar per step that ran, from its start to its end on one
// time axis, with the status in words and the duration in its title; a bar shows its step.
func TestRunTimeline(t *testing.T) {
	def := `{"name":"timed","steps":[{"id":"a","tool":"template","inputs":{"text":"a"}},
	  {"id":"b","tool":"template","inputs":{"text":"{{ a.output.text }}"}},
	  {"id":"c","tool":"template","inputs":{"text":"{{ b.output.text }}"}}]}`
	state := `{"workflow":"timed","status":"failed","steps":[
	  {"id":"a","tool":"template","status":"completed","startedAt":"2025-01-01T10:00:00Z","finishedAt":"2025-01-01T10:00:10Z","durationMs":10000},
	  {"id":"b","tool":"template","status":"failed","startedAt":"2025-01-01T10:00:10Z","finishedAt":"2025-01-01T10:00:30Z","durationMs":20000,"error":"boom"},
	  {"id":"c","tool":"template","status":"skipped","reason":"b failed"}]}`
	page := fixtureRun(t, def, state)
	ctx := chromium(t)
	type bar struct {
		Step, Text, Title string
		Left, Width       float64
	}
	var bars []bar
	var shown string
	run(t, ctx, "timeline", chromedp.Navigate(page), chromedp.WaitVisible(`#timeline .tl-bar`),
		chromedp.Evaluate(`[...document.querySelectorAll('#timeline .tl-bar')].map((b) => { const r = b.getBoundingClientRect(), t = b.parentElement.getBoundingClientRect();
		  return { Step: b.dataset.step, Text: b.textContent, Title: b.title, Left: (r.left - t.left) / t.width, Width: r.width / t.width }; })`, &bars),
		chromedp.Focus(`#timeline .tl-bar[data-step="b"]`),
		chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(`#detail h2`),
		chromedp.Text(`#detail h2`, &shown))
	require.Len(t, bars, 2, "a step that never started has no bar: %+v", bars)
	require.Equal(t, "a", bars[0].Step)
	require.Contains(t, bars[0].Text, "completed", "the status is written, not only coloured")
	require.Contains(t, bars[0].Title, "10.0 s")
	require.Contains(t, bars[1].Text, "failed")
	require.Contains(t, bars[1].Title, "20.0 s")
	require.InDelta(t, 0, bars[0].Left, 0.01)
	require.InDelta(t, 1.0/3, bars[0].Width, 0.02, "a ran a third of the time")
	require.InDelta(t, 1.0/3, bars[1].Left, 0.02, "b started when a ended")
	require.InDelta(t, 2.0/3, bars[1].Width, 0.02)
	require.Equal(t, "b", shown, "a bar shows its step (from the keyboard too)")
	shot(t, ctx, "run-timeline")
}

// TestRunItemStatuses: an item's status is read from what the run recorded, not guessed from
// the count done: while a forEach runs (its items 4 at a time, finishing in any order) an item
// without a result is "pending or running"; a forEach of reviews that failed shows each item's
// decision (rejected, undecided), not "completed". A status in words is one CSS class token.
func TestRunItemStatuses(t *testing.T) {
	for _, tc := range []struct {
		name, def, state string
		want             []string
	}{
		{"running", `{"name":"many","inputs":{"xs":{"type":"array","default":[1]}},"steps":[{"id":"each","tool":"template","forEach":"{{ inputs.xs }}","inputs":{"text":"{{ item }}"}}]}`,
			`{"workflow":"many","status":"running","steps":[{"id":"each","tool":"template","status":"running","itemsTotal":6,"itemsDone":3}]}`,
			[]string{"pending or running", "pending or running", "pending or running", "pending or running", "pending or running", "pending or running"}},
		{"reviews that failed", `{"name":"approvals","inputs":{"xs":{"type":"array","default":[1]}},"steps":[{"id":"each","tool":"review","forEach":"{{ inputs.xs }}","inputs":{"title":"ok?","data":"{{ item }}","rejectFails":true}}]}`,
			`{"workflow":"approvals","status":"failed","steps":[{"id":"each","tool":"review","status":"failed","error":"item 1 rejected by ana","itemsTotal":3,"itemsDone":2,
			  "output":{"count":3,"results":[{"decision":"approve","data":1,"reviewer":"bo"},{"decision":"reject","data":2,"reviewer":"ana"},{"decision":"undecided","data":null}]}}]}`,
			[]string{"completed", "rejected", "undecided"}},
		{"a loop that failed", `{"name":"many","inputs":{"xs":{"type":"array","default":[1]}},"steps":[{"id":"each","tool":"template","forEach":"{{ inputs.xs }}","inputs":{"text":"{{ item }}"}}]}`,
			`{"workflow":"many","status":"failed","steps":[{"id":"each","tool":"template","status":"failed","error":"item 1: boom","itemsTotal":3,"itemsDone":2,
			  "output":{"count":3,"results":[{"text":"a"},null,null]}}]}`,
			[]string{"completed", "failed", "not run"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := fixtureRun(t, tc.def, tc.state)
			ctx := chromium(t)
			var got struct {
				Status  []string
				Classes [][]string
			}
			read := `(() => { const b = [...document.querySelectorAll('#detail table.items tbody tr[data-item] .status')];
			  return { Status: b.map((x) => x.textContent), Classes: b.map((x) => [...x.classList]) }; })()`
			run(t, ctx, tc.name, chromedp.Navigate(page), chromedp.WaitVisible(`svg#graph g.node[data-step="each"]`),
				chromedp.Click(`svg#graph g.node[data-step="each"]`),
				chromedp.WaitVisible(`#detail table.items`),
				chromedp.Evaluate(read, &got))
			require.Len(t, got.Status, len(tc.want), "%+v", got)
			for i, w := range tc.want {
				require.Contains(t, got.Status[i], w, "item %d: %+v", i, got.Status)
				require.Len(t, got.Classes[i], 2, "item %d: status and one s- class: %v", i, got.Classes[i])
				require.Equal(t, "s-"+strings.ReplaceAll(w, " ", "-"), got.Classes[i][1], "item %d", i)
			}
		})
	}
}

// TestRunForEachAgentCalls: an agent step under forEach lists the tool calls of all its items as
// they were recorded, not grouped by iteration (each item counts its iterations from 1).
func TestRunForEachAgentCalls(t *testing.T) {
	def := `{"name":"agents","inputs":{"xs":{"type":"array","default":[1]}},"steps":[{"id":"a","tool":"agent","forEach":"{{ inputs.xs }}","inputs":{"prompt":"{{ item }}","tools":["search"]}}]}`
	state := `{"workflow":"agents","status":"completed","steps":[{"id":"a","tool":"agent","status":"completed","itemsTotal":2,"itemsDone":2,
	  "toolCalls":[
	    {"iteration":1,"id":"c1","tool":"search","arguments":{"query":"first item"},"status":"completed"},
	    {"iteration":1,"id":"c2","tool":"search","arguments":{"query":"second item"},"status":"completed"},
	    {"iteration":2,"id":"c3","tool":"lookup","arguments":{},"status":"failed","error":"no"},
	    {"iteration":1,"id":"c4","tool":"odd","arguments":{},"status":"constructor"}],
	  "output":{"count":2,"results":[{"text":"A"},{"text":"B"}]}}]}`
	page := fixtureRun(t, def, state)
	ctx := chromium(t)
	var groups int
	var calls []string
	var note string
	run(t, ctx, "forEach agent", chromedp.Navigate(page), chromedp.WaitVisible(`svg#graph g.node[data-step="a"]`),
		chromedp.Click(`svg#graph g.node[data-step="a"]`),
		chromedp.WaitVisible(`#detail ol.calls`),
		chromedp.Evaluate(`document.querySelectorAll('#detail details.iteration').length`, &groups),
		chromedp.Evaluate(`[...document.querySelectorAll('#detail ol.calls li.call .call-head')].map((c) => c.textContent)`, &calls),
		chromedp.Text(`#detail .calls-note`, &note))
	require.Zero(t, groups, "no iteration groups: they would merge the items")
	require.Len(t, calls, 4, "%v", calls)
	for i, tool := range []string{"search", "search", "lookup", "odd"} {
		require.Contains(t, calls[i], tool, "in the order recorded: %v", calls)
	}
	require.Contains(t, calls[2], "failed")
	require.NotContains(t, calls[3], "function", "a status is not looked up among an object's inherited keys")
	require.Contains(t, note, "calls of all items, in the order they finished")
}

// liveEvents replaces the page's EventSource by one the test feeds: __push(f) sends the page's
// first snapshot again with f applied to its state, as the server does when the run moved on.
// __inputs counts the page's requests of a step's inputs.
const liveEvents = `(() => {
  window.__inputs = {};
  const fetch0 = window.fetch;
  window.fetch = (u, o) => { const m = /\/steps\/([^/]+)\/inputs/.exec(String(u)); if (m) window.__inputs[m[1]] = (window.__inputs[m[1]] || 0) + 1; return fetch0(u, o); };
  window.EventSource = class { constructor() { this.on = {}; window.__es = this; } addEventListener(t, f) { (this.on[t] = this.on[t] || []).push(f); } close() {} };
  window.__push = (f) => {
    const v = JSON.parse(document.getElementById('run').dataset.run).snapshot;
    if (f) f(v.state);
    for (const h of window.__es.on.snapshot || []) h({ data: JSON.stringify(v) });
  };
  // __event(e) sends a run event (events.Event's JSON) as the server forwards one
  window.__event = (e) => { for (const h of window.__es.on['run-event'] || []) h({ data: JSON.stringify(e) }); };
})()`

// TestRunLiveKeepsFocus: while a run is live every snapshot redraws the step shown, and what the
// person was doing survives it: the items page and the focused Next button, the focused timeline
// bar, and the "Run this step alone" text (the same element, its focus, caret and typing), whose
// inputs are not read again while the step's status is the same.
func TestRunLiveKeepsFocus(t *testing.T) {
	def := `{"name":"live","inputs":{"xs":{"type":"array","default":[1]}},"steps":[{"id":"a","tool":"chunk","inputs":{"text":"hello"}},
	  {"id":"b","tool":"chunk","inputs":{"text":"{{ a.output.chunks[0] }}"}},
	  {"id":"each","tool":"template","forEach":"{{ inputs.xs }}","inputs":{"text":"{{ item }}"}}]}`
	state := `{"workflow":"live","status":"running","steps":[
	  {"id":"a","tool":"chunk","status":"completed","startedAt":"2025-01-01T10:00:00Z","finishedAt":"2025-01-01T10:00:10Z","durationMs":10000,"output":{"chunks":["hello"]}},
	  {"id":"b","tool":"chunk","status":"running","startedAt":"2025-01-01T10:00:10Z"},
	  {"id":"each","tool":"template","status":"running","startedAt":"2025-01-01T10:00:10Z","itemsTotal":120,"itemsDone":10}]}`
	var st weftv1.ExecutionState
	require.NoError(t, protojson.Unmarshal([]byte(state), &st))
	_, srv, _ := rerunConsoleOf(t, enums.WORKFLOW_EXECUTION_STATUS_RUNNING, false, &fixtureTemporal{def: def, state: &st})
	ctx := chromium(t)
	run(t, ctx, "live page", chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(liveEvents).Do(ctx)
		return err
	}), chromedp.Navigate(srv.URL+"/runs/weft-fixture"), chromedp.WaitVisible(`svg#graph g.node[data-step="each"]`))

	// the items: page 2, Next focused; a snapshot redraws them and the focus stays on Next
	var items struct {
		Focused bool
		Range   string
		Head    string
	}
	run(t, ctx, "items", chromedp.Click(`svg#graph g.node[data-step="each"]`), chromedp.WaitVisible(`#detail table.items`),
		chromedp.Click(`#detail .items-next`), chromedp.WaitVisible(`#detail tr[data-item="57"]`),
		chromedp.Evaluate(`__push((s) => { s.steps[2].itemsDone = 11; })`, nil),
		chromedp.Evaluate(`({ Focused: document.activeElement.classList.contains('items-next') && document.activeElement.isConnected,
		  Range: document.querySelector('#detail .items-range').textContent, Head: document.querySelector('#detail section.items h3').textContent })`, &items))
	require.Contains(t, items.Head, "11/120", "the snapshot was drawn")
	require.Contains(t, items.Range, "51–100", "the page shown stays")
	require.True(t, items.Focused, "the focus stays on Next")

	// the timeline: a focused bar keeps the focus
	var bar string
	run(t, ctx, "timeline", chromedp.Focus(`#timeline .tl-bar[data-step="a"]`),
		chromedp.Evaluate(`__push((s) => { s.steps[2].itemsDone = 12; })`, nil),
		chromedp.Evaluate(`document.activeElement.isConnected && document.activeElement.classList.contains('tl-bar') ? document.activeElement.dataset.step : ''`, &bar))
	require.Equal(t, "a", bar, "the focused bar keeps the focus")

	// "Run this step alone": typing goes on through snapshots, in the same text at the same caret
	type form struct {
		Same, Focused bool
		Caret         int
		Value         string
		Reads         int
	}
	var f form
	read := `(() => { const x = document.querySelector('#detail .alone-inputs');
	  return { Same: x.__mark === 'kept', Focused: document.activeElement === x, Caret: x.selectionStart, Value: x.value, Reads: window.__inputs.b || 0 }; })()`
	run(t, ctx, "alone", chromedp.Click(`svg#graph g.node[data-step="b"]`),
		chromedp.Poll(`!!document.querySelector('#detail .alone-open') && document.querySelector('#detail .inputs').textContent.includes('hello world')`, nil),
		chromedp.Click(`#detail .alone-open`), chromedp.WaitVisible(`#detail .alone-inputs`),
		chromedp.Evaluate(`(() => { const x = document.querySelector('#detail .alone-inputs'); x.__mark = 'kept'; x.focus(); x.setSelectionRange(2, 2); })()`, nil),
		chromedp.Evaluate(`__push((s) => { s.steps[2].itemsDone = 13; })`, nil),
		chromedp.Evaluate(`__push((s) => { s.steps[2].itemsDone = 14; })`, nil),
		chromedp.KeyEvent("Z"),
		chromedp.Evaluate(read, &f))
	require.True(t, f.Same, "the text is the same element: %+v", f)
	require.True(t, f.Focused, "the text keeps the focus")
	require.Equal(t, 3, f.Caret, "the caret stayed where it was, and moved on with the typing")
	require.Equal(t, "Z", f.Value[2:3], "typed at the caret: %q", f.Value)
	require.Equal(t, 1, f.Reads, "the step's inputs are read once while its status is the same")
	shot(t, ctx, "run-live-keeps-focus")
}

// liveRun opens the run page of a running run that ran def and is in state, its EventSource the
// test's (liveEvents).
func liveRun(t *testing.T, def, state string) context.Context {
	t.Helper()
	var st weftv1.ExecutionState
	require.NoError(t, protojson.Unmarshal([]byte(state), &st))
	_, srv, _ := rerunConsoleOf(t, enums.WORKFLOW_EXECUTION_STATUS_RUNNING, false, &fixtureTemporal{def: def, state: &st})
	ctx := chromium(t)
	run(t, ctx, "live page", chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(liveEvents).Do(ctx)
		return err
	}), chromedp.Navigate(srv.URL+"/runs/weft-fixture"), chromedp.WaitVisible(`svg#graph g.node`))
	return ctx
}

// badgeContrast is the contrast ratio (WCAG) of each item status badge's words on its background.
const badgeContrast = `(() => {
  const lum = (c) => { const v = c.match(/[\d.]+/g).slice(0, 3).map((x) => { x = Number(x) / 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
  return [...document.querySelectorAll('#detail table.items tbody tr[data-item] .status')].map((b) => {
    const s = getComputedStyle(b), a = lum(s.color), c = lum(s.backgroundColor);
    return (Math.max(a, c) + 0.05) / (Math.min(a, c) + 0.05); });
})()`

// TestRunLiveItems: while a forEach runs, its items show the state the run's item events give
// (the state query has none): done, running, failed with its error, and pending for an item not
// started yet, without another snapshot.
func TestRunLiveItems(t *testing.T) {
	def := `{"name":"many","inputs":{"xs":{"type":"array","default":[1]}},"steps":[{"id":"each","tool":"template","forEach":"{{ inputs.xs }}","inputs":{"text":"{{ item }}"}}]}`
	state := `{"workflow":"many","status":"running","steps":[{"id":"each","tool":"template","status":"running","startedAt":"2025-01-01T10:00:00Z","itemsTotal":5,"itemsDone":1}]}`
	ctx := liveRun(t, def, state)
	var got struct {
		Status  []string
		Preview []string
		Label   string
	}
	read := `(() => { const rs = [...document.querySelectorAll('#detail table.items tbody tr[data-item]')];
	  return { Status: rs.map((r) => r.cells[1].textContent), Preview: rs.map((r) => r.cells[2].textContent),
	    Label: document.querySelector('#detail tr[data-item="2"] .item-open').getAttribute('aria-label') }; })()`
	ev := func(typ string, item int, errText string) string {
		return fmt.Sprintf(`__event({event:%q,run:"weft-fixture",step:"each",key:"each[%d]",item:%d,time:new Date().toISOString(),error:%q});`, typ, item, item, errText)
	}
	var contrast []float64
	run(t, ctx, "items", chromedp.Click(`svg#graph g.node[data-step="each"]`), chromedp.WaitVisible(`#detail table.items`),
		chromedp.Evaluate(`__event({event:"step_started",run:"weft-fixture",step:"each",time:"2025-01-01T10:00:00Z"});`+
			ev("item_started", 0, "")+ev("item_started", 1, "")+ev("item_started", 2, "")+
			ev("item_completed", 0, "")+ev("item_failed", 2, "upstream said no"), nil),
		chromedp.Poll(`document.querySelector('#detail tr[data-item="0"] .status').textContent.includes('completed')`, nil),
		chromedp.Evaluate(read, &got),
		chromedp.Evaluate(badgeContrast, &contrast))
	want := []string{"✓ completed", "⟳ running", "✕ failed", "○ pending", "○ pending"}
	require.Equal(t, want, got.Status, "each item's state from the events, in words and a mark")
	require.Equal(t, "upstream said no", got.Preview[2], "a failed item shows its error")
	require.Equal(t, "output of item 2", got.Label, "the error opens as an item's output does")
	for i, c := range contrast {
		require.GreaterOrEqual(t, c, 4.5, "item %d's status (%s) is readable: WCAG AA contrast of its words on its badge", i, got.Status[i])
	}
	shot(t, ctx, "run-live-items")
}

// TestRunLiveTimeline: the timeline follows the run's events between snapshots: a step that
// starts gets a bar at once, and a running step's bar grows with the time it takes.
func TestRunLiveTimeline(t *testing.T) {
	def := `{"name":"timed","steps":[{"id":"a","tool":"template","inputs":{"text":"a"}},{"id":"b","tool":"template","inputs":{"text":"{{ a.output.text }}"}}]}`
	start := time.Now().Add(-3 * time.Second).UTC()
	state := fmt.Sprintf(`{"workflow":"timed","status":"running","steps":[
	  {"id":"a","tool":"template","status":"completed","startedAt":%q,"finishedAt":%q,"durationMs":1000}]}`,
		start.Format(time.RFC3339Nano), start.Add(time.Second).Format(time.RFC3339Nano))
	ctx := liveRun(t, def, state)
	type bar struct {
		Step, Text, Title string
		Width             float64
	}
	read := `[...document.querySelectorAll('#timeline .tl-bar')].map((b) => ({ Step: b.dataset.step, Text: b.textContent, Title: b.title,
	  Width: b.getBoundingClientRect().width / b.parentElement.getBoundingClientRect().width }))`
	var before, first, later []bar
	var node string
	var kept bool
	run(t, ctx, "timeline", chromedp.WaitVisible(`#timeline .tl-bar[data-step="a"]`), chromedp.Evaluate(read, &before),
		chromedp.Evaluate(fmt.Sprintf(`__event({event:"step_started",run:"weft-fixture",step:"b",time:%q})`, start.Add(time.Second).Format(time.RFC3339Nano)), nil),
		chromedp.WaitVisible(`#timeline .tl-bar[data-step="b"]`),
		chromedp.Evaluate(read, &first),
		chromedp.Evaluate(`document.querySelector('svg#graph g.node[data-step="b"]').getAttribute('aria-label')`, &node),
		chromedp.Evaluate(`document.querySelector('#timeline .tl-bar[data-step="b"]').__kept = true`, nil),
		chromedp.ActionFunc(func(ctx context.Context) error {
			// the bar is redrawn as time passes: wait for a title that says a longer time so far
			return chromedp.Poll(`(() => { const b = document.querySelector('#timeline .tl-bar[data-step="b"]'); return window.__t0 === undefined ? (window.__t0 = b.title, false) : b.title !== window.__t0; })()`,
				nil, chromedp.WithPollingInterval(200*time.Millisecond), chromedp.WithPollingTimeout(10*time.Second)).Do(ctx)
		}),
		chromedp.Evaluate(read, &later),
		chromedp.Evaluate(`document.querySelector('#timeline .tl-bar[data-step="b"]').__kept === true`, &kept))
	require.Len(t, before, 1)
	require.Len(t, first, 2, "the step that started has a bar before any snapshot: %+v", first)
	require.Equal(t, "b", first[1].Step)
	require.Contains(t, first[1].Text, "running", "the status in words")
	require.Contains(t, first[1].Title, "so far")
	require.Contains(t, node, "running", "the graph says so too")
	require.Len(t, later, 2)
	require.Greater(t, later[1].Width, first[1].Width, "the running bar grew: %+v then %+v", first, later)
	require.Less(t, later[0].Width, first[0].Width, "on the same axis, the finished step's bar is a smaller part of it")
	require.True(t, kept, "the bar grew in place: the one under the pointer or the keyboard is the same element")
	shot(t, ctx, "run-live-timeline")
}

// TestRunItemsBatched: a forEach whose items run in batch child workflows (over BatchThreshold
// items, or provider-batched) records no item events in the run: while it runs an item with no
// result is "pending or running", not pending, and once a batch failed every item but the one
// its error names is unknown, not "not run" (thousands of them may have completed).
func TestRunItemsBatched(t *testing.T) {
	def := `{"name":"many","inputs":{"xs":{"type":"array","default":[1]}},"steps":[{"id":"each","tool":"template","forEach":"{{ inputs.xs }}","inputs":{"text":"{{ item }}"}}]}`
	for _, tc := range []struct {
		name, step, events string
		want               map[int]string
	}{
		{"running", `"status":"running","startedAt":"2025-01-01T10:00:00Z","itemsTotal":2500,"itemsDone":1500`,
			`__event({event:"step_started",run:"weft-fixture",step:"each",time:"2025-01-01T10:00:00Z"});`,
			map[int]string{0: "pending or running", 3: "pending or running", 49: "pending or running"}},
		{"a batch failed", `"status":"failed","startedAt":"2025-01-01T10:00:00Z","finishedAt":"2025-01-01T10:01:00Z","error":"item 3: boom","itemsTotal":2500,"itemsDone":1500`,
			`__event({event:"step_started",run:"weft-fixture",step:"each",time:"2025-01-01T10:00:00Z"});` +
				`__event({event:"step_failed",run:"weft-fixture",step:"each",time:"2025-01-01T10:01:00Z",error:"item 3: boom"});`,
			map[int]string{0: "unknown", 3: "✕ failed", 49: "unknown"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := liveRun(t, def, `{"workflow":"many","status":"running","steps":[{"id":"each","tool":"template",`+tc.step+`}]}`)
			var got []string
			run(t, ctx, tc.name, chromedp.Click(`svg#graph g.node[data-step="each"]`), chromedp.WaitVisible(`#detail table.items`),
				chromedp.Evaluate(`document.querySelector('#detail table.items').dataset.before = 'yes';`+tc.events, nil),
				chromedp.Poll(`!document.querySelector('#detail table.items[data-before]')`, nil), // drawn again after the events
				chromedp.Evaluate(`[...document.querySelectorAll('#detail table.items tbody tr[data-item] .status')].map((x) => x.textContent)`, &got))
			require.Len(t, got, 50, "the first page of 2500 items")
			for i, w := range tc.want {
				require.Equal(t, w, got[i], "item %d: %v", i, got[:5])
			}
		})
	}
}

// TestRunItemsCancelled: with three items at a time, one that fails cancels the two in flight,
// each recorded as item_failed with the cancellation's text and no errorKind (as workers older
// than errorKind record them; TestRunItemsCancelledByKind has the kind): the page shows them cancelled (a
// mark and the word), the one that failed failed, the others pending, and not run once the step
// failed; an item whose own failure says "cancelled" and that the step's error names is failed.
func TestRunItemsCancelled(t *testing.T) {
	def := `{"name":"many","inputs":{"xs":{"type":"array","default":[1]}},"steps":[{"id":"each","tool":"template","forEach":"{{ inputs.xs }}","concurrency":3,"inputs":{"text":"{{ item }}"}}]}`
	state := `{"workflow":"many","status":"running","steps":[{"id":"each","tool":"template","status":"running","startedAt":"2025-01-01T10:00:00Z","itemsTotal":5,"itemsDone":0}]}`
	ctx := liveRun(t, def, state)
	ev := func(typ string, item int, errText string) string {
		return fmt.Sprintf(`__event({event:%q,run:"weft-fixture",step:"each",key:"each[%d]",item:%d,time:new Date().toISOString(),error:%q});`, typ, item, item, errText)
	}
	read := `[...document.querySelectorAll('#detail table.items tbody tr[data-item] .status')].map((x) => x.textContent)`
	var live, ended []string
	run(t, ctx, "items cancelled in flight", chromedp.Click(`svg#graph g.node[data-step="each"]`), chromedp.WaitVisible(`#detail table.items`),
		chromedp.Evaluate(`__event({event:"step_started",run:"weft-fixture",step:"each",time:"2025-01-01T10:00:00Z"});`+
			ev("item_started", 0, "")+ev("item_started", 1, "")+ev("item_started", 2, "")+
			ev("item_failed", 1, "the query bad is refused")+ev("item_failed", 0, "cancelled")+ev("item_failed", 2, "canceled"), nil),
		chromedp.Poll(`!document.querySelector('#detail tr[data-item="1"] .status').textContent.includes('running')`, nil),
		chromedp.Evaluate(read, &live),
		chromedp.Evaluate(`__push((s) => { Object.assign(s.steps[0], {status: 'failed', error: 'item 1: the query bad is refused', finishedAt: '2025-01-01T10:01:00Z'}); })`, nil),
		chromedp.Poll(`document.querySelector('#detail tr[data-item="3"] .status').textContent === 'not run'`, nil),
		chromedp.Evaluate(read, &ended))
	require.Equal(t, []string{"⊘ cancelled", "✕ failed", "⊘ cancelled", "○ pending", "○ pending"}, live, "one failure, two cancelled with it")
	require.Equal(t, []string{"⊘ cancelled", "✕ failed", "⊘ cancelled", "not run", "not run"}, ended)

	// the item the step's error names failed, even when its own error reads "cancelled"
	run(t, ctx, "a failure that says cancelled",
		chromedp.Evaluate(`__push((s) => { Object.assign(s.steps[0], {status: 'failed', error: 'item 0: cancelled', finishedAt: '2025-01-01T10:01:00Z'}); })`, nil),
		chromedp.Poll(`document.querySelector('#detail tr[data-item="0"] .status').textContent.includes('failed')`, nil),
		chromedp.Evaluate(read, &ended))
	require.Equal(t, []string{"✕ failed", "✕ failed", "⊘ cancelled", "not run", "not run"}, ended)
}

// TestRunItemsCancelledByKind: an item is shown cancelled by the kind of its error the event
// carries (errorKind), not by its text: an item whose own error is exactly "cancelled" failed,
// while the run's step goes on and no step error names it; an item cancelled in flight is
// cancelled whatever its text; an event without a kind (a worker older than errorKind) is read
// by its text as before.
func TestRunItemsCancelledByKind(t *testing.T) {
	cases := []struct {
		name, errText, kind, want string
	}{
		{"its own error reads cancelled", "cancelled", "failed", "✕ failed"},
		{"its own error reads canceled", "Canceled", "failed", "✕ failed"},
		{"cancelled in flight", "cancelled", "cancelled", "⊘ cancelled"},
		{"cancelled in flight, another text", "context canceled by the run", "cancelled", "⊘ cancelled"},
		{"timed out", "timed out (start to close)", "timed_out", "✕ failed"},
		{"an older worker's cancellation", "cancelled", "", "⊘ cancelled"},
		{"an older worker's failure", "the query bad is refused", "", "✕ failed"},
	}
	// one item a case, all in flight at once
	def := fmt.Sprintf(`{"name":"many","inputs":{"xs":{"type":"array","default":[1]}},"steps":[{"id":"each","tool":"template","forEach":"{{ inputs.xs }}","concurrency":%d,"inputs":{"text":"{{ item }}"}}]}`, len(cases))
	state := fmt.Sprintf(`{"workflow":"many","status":"running","steps":[{"id":"each","tool":"template","status":"running","startedAt":"2025-01-01T10:00:00Z","itemsTotal":%d,"itemsDone":0}]}`, len(cases))
	ev := func(typ string, item int, errText, kind string) string {
		k := ""
		if kind != "" {
			k = fmt.Sprintf(`,errorKind:%q`, kind)
		}
		return fmt.Sprintf(`__event({event:%q,run:"weft-fixture",step:"each",key:"each[%d]",item:%d,time:new Date().toISOString(),error:%q%s});`, typ, item, item, errText, k)
	}
	events := `__event({event:"step_started",run:"weft-fixture",step:"each",time:"2025-01-01T10:00:00Z"});`
	for i, tc := range cases {
		events += ev("item_started", i, "", "") + ev("item_failed", i, tc.errText, tc.kind)
	}
	ctx := liveRun(t, def, state)
	var got []string
	run(t, ctx, "items that did not complete", chromedp.Click(`svg#graph g.node[data-step="each"]`), chromedp.WaitVisible(`#detail table.items`),
		chromedp.Evaluate(events, nil),
		chromedp.Poll(`[...document.querySelectorAll('#detail table.items tbody tr[data-item] .status')].every((x) => !/running|pending/.test(x.textContent))`, nil),
		chromedp.Evaluate(`[...document.querySelectorAll('#detail table.items tbody tr[data-item] .status')].map((x) => x.textContent)`, &got))
	require.Len(t, got, len(cases))
	for i, tc := range cases {
		require.Equal(t, tc.want, got[i], "item %d: %s", i, tc.name)
	}
}

// TestNodeLabelsFitBesideTheirMark: a step's name on the graph is cut, as drawn, to the room
// left of its status mark ("summarise_each_so…" ran under the ✓); a short name is whole, and the
// full name stays in the node's aria-label.
func TestNodeLabelsFitBesideTheirMark(t *testing.T) {
	def := `{"name":"labels","steps":[{"id":"summarise_each_source_in_turn","tool":"template","inputs":{"text":"a"}},
	  {"id":"w","name":"WWWWWWWWWWWWWWWWW","tool":"template","inputs":{"text":"b"}},
	  {"id":"b","tool":"template","inputs":{"text":"c"}}]}`
	state := `{"workflow":"labels","status":"completed","steps":[
	  {"id":"summarise_each_source_in_turn","tool":"template","status":"completed","durationMs":10},
	  {"id":"w","tool":"template","status":"completed","durationMs":10},
	  {"id":"b","tool":"template","status":"completed","durationMs":10}]}`
	page := fixtureRun(t, def, state)
	ctx := chromium(t)
	type label struct {
		Step, Text, Aria string
		Right, Mark      float64
	}
	var labels []label
	run(t, ctx, "labels", chromedp.Navigate(page), chromedp.WaitVisible(`svg#graph g.node.st-completed`),
		chromedp.Evaluate(`[...document.querySelectorAll('svg#graph g.node')].map((g) => { const l = g.querySelector('.label').getBBox(), m = g.querySelector('.st-mark').getBBox();
		  return { Step: g.dataset.step, Text: g.querySelector('.label').textContent, Aria: g.getAttribute('aria-label'), Right: l.x + l.width, Mark: m.x }; })`, &labels))
	require.Len(t, labels, 3)
	full := map[string]string{"summarise_each_source_in_turn": "summarise_each_source_in_turn", "w": "WWWWWWWWWWWWWWWWW", "b": "b"}
	for _, l := range labels {
		require.Less(t, l.Right, l.Mark, "%s: the name ends before its mark", l.Step)
		require.Contains(t, l.Aria, full[l.Step], "the whole name is read out")
	}
	require.True(t, strings.HasSuffix(labels[0].Text, "…") && strings.HasPrefix("summarise_each_source_in_turn", strings.TrimSuffix(labels[0].Text, "…")), labels[0].Text)
	require.True(t, strings.HasSuffix(labels[1].Text, "…"), "17 wide letters do not fit: %q", labels[1].Text)
	require.Equal(t, "b", labels[2].Text)
}
