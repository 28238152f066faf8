package console_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/timestamppb"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/console"
	"github.com/weftworks/weft/eval/report"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// listedTemporal is the run page's fixture Temporal (runviews_test.go) that also lists runs: the
// fixture run and a few others, so that the runs list has rows.
type listedTemporal struct{ *fixtureTemporal }

func (l listedTemporal) ListWorkflow(_ context.Context, r *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	if strings.Contains(r.Query, "awaiting_review") {
		return &workflowservice.ListWorkflowExecutionsResponse{}, nil
	}
	running := strings.Contains(r.Query, `ExecutionStatus = "Running"`)
	now := time.Now()
	var out []*workflowpb.WorkflowExecutionInfo
	add := func(id, workflow string, st enums.WorkflowExecutionStatus, ago time.Duration) {
		if (st == enums.WORKFLOW_EXECUTION_STATUS_RUNNING) != running {
			return
		}
		name, _ := converter.GetDefaultDataConverter().ToPayload(workflow)
		e := &workflowpb.WorkflowExecutionInfo{Execution: &commonpb.WorkflowExecution{WorkflowId: id}, Status: st, StartTime: timestamppb.New(now.Add(-ago)),
			Memo: &commonpb.Memo{Fields: map[string]*commonpb.Payload{runwire.MemoWorkflow: name}}}
		if !running {
			e.CloseTime = timestamppb.New(now.Add(-ago + 30*time.Second))
		}
		out = append(out, e)
	}
	add("weft-fixture", "timed", enums.WORKFLOW_EXECUTION_STATUS_FAILED, 2*time.Minute)
	add("research-assistant-20261126-a8f3c2d1e0b94f6a", "research-assistant-with-a-rather-long-name", enums.WORKFLOW_EXECUTION_STATUS_RUNNING, 40*time.Second)
	add("approval-demo-7f2e", "approval-demo", enums.WORKFLOW_EXECUTION_STATUS_COMPLETED, 3*time.Hour)
	add("nightly-index-19b0", "nightly-index", enums.WORKFLOW_EXECUTION_STATUS_CANCELED, 26*time.Hour)
	return &workflowservice.ListWorkflowExecutionsResponse{Executions: out}, nil
}

// TestConsolePagesAtEverySize: every page of the console (the runs list, a run, the workflows, a
// workflow, the builder, reviews, the evals, an eval report, the login) in light and dark at 1440
// and 390 px: at 390 px nothing is wider than the screen. The screenshots go to bin/artifacts/console,
// or to $WEFT_ARTIFACTS.
func TestConsolePagesAtEverySize(t *testing.T) {
	def := `{"name":"timed","description":"A run with a step of every status, for the screenshots","inputs":{"items":{"type":"array","default":["x","y","z"]}},"steps":[
	  {"id":"fetch_sources","tool":"template","inputs":{"text":"a"}},
	  {"id":"summarise_each_source_in_turn","tool":"template","forEach":"{{ inputs.items }}","inputs":{"text":"{{ item }}"}},
	  {"id":"b","tool":"template","inputs":{"text":"{{ fetch_sources.output.text }}"}},
	  {"id":"c","tool":"template","inputs":{"text":"{{ b.output.text }}"}}]}`
	state := `{"workflow":"timed","status":"failed","error":"step b: boom","steps":[
	  {"id":"fetch_sources","tool":"template","status":"completed","startedAt":"2025-01-01T10:00:00Z","finishedAt":"2025-01-01T10:00:10Z","durationMs":10000,"output":{"text":"hello"}},
	  {"id":"summarise_each_source_in_turn","tool":"template","status":"completed","startedAt":"2025-01-01T10:00:10Z","finishedAt":"2025-01-01T10:00:18Z","durationMs":8000,"itemsTotal":3,"itemsDone":3,"output":[{"text":"x"},{"text":"y"},{"text":"z"}]},
	  {"id":"b","tool":"template","status":"failed","startedAt":"2025-01-01T10:00:10Z","finishedAt":"2025-01-01T10:00:30Z","durationMs":20000,"error":"boom: the template could not be rendered because the input was missing"},
	  {"id":"c","tool":"template","status":"skipped","reason":"b failed"}]}`
	var st weftv1.ExecutionState
	require.NoError(t, protojson.Unmarshal([]byte(state), &st))
	evals := t.TempDir()
	rep := &report.Report{Workflow: "approval-demo", Dataset: "cases.jsonl", StartedAt: time.Now().Add(-time.Hour), Concurrency: 2,
		Summary: report.Summary{Cases: 2, Passed: 1, Failed: 1, PassRate: 0.5, MeanScore: 0.6, Tokens: 1234, CostUSD: 0.0042, DurationMs: 5400},
		Cases: []report.Case{
			{Name: "approves", Pass: true, Score: 1, RunID: "approval-demo-1", Grades: []report.Grade{{Grader: "equals", Pass: true, Score: 1}}},
			{Name: "a-case-with-a-long-name-that-should-wrap-or-be-cut", RunID: "approval-demo-2", Error: "the run waits for review \"confirm\" and the case has no decision for it",
				Grades: []report.Grade{{Grader: "judge", Pass: false, Score: 0.2, Detail: "it hedges"}}},
		}}
	evalID, err := report.Save(evals, rep)
	require.NoError(t, err)
	srv := newConsole(t, console.Options{Client: weftclient.New(listedTemporal{&fixtureTemporal{def: def, state: &st}}, "console-test"), Reviewer: "op", EvalsDir: evals})
	keys, _ := testKeys(t)
	locked := newConsole(t, console.Options{Client: lazyClient(t), Keys: keys, RequireLogin: true})

	ctx := chromium(t)
	// fit: elements that must not scroll sideways inside their own box either at 390 px (the
	// check of the page's width leaves tables out: the runs list's scrolls by design)
	pages := []struct{ name, url, ready, fit string }{
		{"runs", srv.URL + "/", `table.runs tbody tr`, ""},
		{"run", srv.URL + "/runs/weft-fixture", `svg#graph g.node.st-failed`, ""},
		{"workflows", srv.URL + "/workflows", `main`, ""},
		{"workflow", srv.URL + "/workflows/approval-demo", `svg#graph g.node`, ""},
		{"build", srv.URL + "/build?from=approval-demo", `#b-valid.ok`, ""},
		{"reviews", srv.URL + "/reviews", `main`, ""},
		{"evals", srv.URL + "/evals", `main`, ""},
		{"eval", srv.URL + "/evals/" + evalID, `main`, `table.eval-cases`},
		{"login", locked.URL + "/login", `main`, ""},
	}
	for _, scheme := range []string{"light", "dark"} {
		for _, width := range []int64{1440, 390} {
			for _, p := range pages {
				t.Run(fmt.Sprintf("%s-%s-%d", p.name, scheme, width), func(t *testing.T) {
					var scroll float64
					var wide []string
					run(t, ctx, p.name,
						chromedp.EmulateViewport(width, 900),
						emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}),
						chromedp.Navigate(p.url), chromedp.WaitVisible(p.ready),
						chromedp.Poll(`window.__weftReady === true && (!document.getElementById('builder') || window.__weftBuilderReady === true)`, nil),
						chromedp.Evaluate(`document.documentElement.scrollWidth`, &scroll),
						// what sticks out of the screen, to say which element is too wide
						chromedp.Evaluate(`[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1 && !e.closest('.graph-wrap, .b-canvas, pre, table, .minimap')).slice(0, 5).map((e) => e.tagName + '.' + e.className)`, &wide))
					if width == 390 {
						require.LessOrEqual(t, scroll, float64(width)+1, "%s is no wider than a 390 px screen; too wide: %v", p.url, wide)
					}
					if width == 390 && p.fit != "" {
						// each such element, and what in it sticks out of it or of the screen (a
						// <pre> scrolls its own text and is left out)
						var over []string
						run(t, ctx, p.name+" fits", chromedp.Evaluate(`(() => {
						  const out = [], vw = document.documentElement.clientWidth;
						  const boxes = [...document.querySelectorAll(`+"`"+p.fit+"`"+`)];
						  if (!boxes.length) return ['no ' + `+"`"+p.fit+"`"+`];
						  for (const b of boxes) {
						    if (b.scrollWidth > b.clientWidth + 1) out.push(`+"`${b.tagName}.${b.className} scrolls: ${b.scrollWidth} px in ${b.clientWidth}`"+`);
						    const right = Math.min(b.getBoundingClientRect().right, vw) + 1;
						    for (const e of b.querySelectorAll('*')) {
						      if (e.closest('pre')) continue;
						      const r = e.getBoundingClientRect();
						      if (r.width && r.right > right) out.push(`+"`${e.tagName}.${e.className} ends at ${Math.round(r.right)} px, past ${Math.round(right)}`"+`);
						    }
						  }
						  return out.slice(0, 8);
						})()`, &over))
						require.Empty(t, over, "%s: %s fits a 390 px screen without scrolling sideways", p.url, p.fit)
					}
					shot(t, ctx, fmt.Sprintf("%s-%s-%d", p.name, scheme, width))
				})
			}
		}
	}
}
