package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/weftworks/weft/codec"
	"github.com/weftworks/weft/runwire"
)

// fakeRun is one execution of the fake visibility store.
type fakeRun struct {
	id              string
	started, closed time.Time // closed zero: running
}

// fakeTemporal answers ListWorkflow the way Temporal's visibility does (running runs first, newest
// start first; then closed runs, newest close first) and DescribeWorkflowExecution with describe.
type fakeTemporal struct {
	tclient.Client
	runs     []fakeRun
	memo     func(id string) *commonpb.Payload
	describe *workflowservice.DescribeWorkflowExecutionResponse
	queries  []string
}

func (f *fakeTemporal) ListWorkflow(_ context.Context, r *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	f.queries = append(f.queries, r.Query)
	var sel []fakeRun
	for _, run := range f.runs {
		running := run.closed.IsZero()
		switch {
		case strings.Contains(r.Query, `ExecutionStatus = "Running"`) && !running,
			strings.Contains(r.Query, `ExecutionStatus != "Running"`) && running,
			strings.Contains(r.Query, `ExecutionStatus = "Completed"`) && running:
			continue
		}
		sel = append(sel, run)
	}
	sort.SliceStable(sel, func(i, j int) bool {
		a, b := sel[i], sel[j]
		if a.closed.IsZero() != b.closed.IsZero() {
			return a.closed.IsZero()
		}
		if !a.closed.Equal(b.closed) {
			return a.closed.After(b.closed)
		}
		return a.started.After(b.started)
	})
	from := 0
	if len(r.NextPageToken) > 0 {
		from, _ = strconv.Atoi(string(r.NextPageToken))
	}
	to := min(from+int(r.PageSize), len(sel))
	resp := &workflowservice.ListWorkflowExecutionsResponse{}
	for _, run := range sel[from:to] {
		e := &workflowpb.WorkflowExecutionInfo{
			Execution: &commonpb.WorkflowExecution{WorkflowId: run.id},
			Status:    enums.WORKFLOW_EXECUTION_STATUS_RUNNING,
			StartTime: timestamppb.New(run.started),
		}
		if !run.closed.IsZero() {
			e.Status = enums.WORKFLOW_EXECUTION_STATUS_COMPLETED
			e.CloseTime = timestamppb.New(run.closed)
		}
		if f.memo != nil {
			e.Memo = &commonpb.Memo{Fields: map[string]*commonpb.Payload{runwire.MemoWorkflow: f.memo(run.id)}}
		}
		resp.Executions = append(resp.Executions, e)
	}
	if to < len(sel) {
		resp.NextPageToken = []byte(strconv.Itoa(to))
	}
	return resp, nil
}

func (f *fakeTemporal) DescribeWorkflowExecution(context.Context, string, string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	return f.describe, nil
}

// TestListNewestFirst: runs are listed by start time, newest first, whatever their status; a long
// running (or paused) run does not come before newer finished ones (issue 21, item 5).
func TestListNewestFirst(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	runs := []fakeRun{
		{id: "old-paused", started: at(0)},                         // waiting for review since long ago
		{id: "long-job", started: at(1), closed: at(50)},           // closed last, started early
		{id: "newest-done", started: at(10), closed: at(11)},       // the newest run
		{id: "mid-running", started: at(8)},                        // running, newer than long-job
		{id: "older-done", started: at(5), closed: at(6)},          //
		{id: "oldest-done", started: at(-5), closed: at(-4)},       //
		{id: "second-newest", started: at(9), closed: at(9)},       //
		{id: "ancient-closed", started: at(-100), closed: at(-99)}, //
	}
	all := []string{"newest-done", "second-newest", "mid-running", "older-done", "long-job", "old-paused", "oldest-done", "ancient-closed"}
	ids := func(rs []RunSummary) []string {
		out := []string{}
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	for limit := 1; limit <= len(all)+1; limit++ {
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			f := &fakeTemporal{runs: runs}
			c := &Client{t: f}
			got, err := c.List(context.Background(), ListOptions{Limit: limit})
			require.NoError(t, err)
			require.Equal(t, all[:min(limit, len(all))], ids(got))
		})
	}
	// One closed status: newest start first too, although visibility orders by close time.
	f := &fakeTemporal{runs: runs}
	got, err := (&Client{t: f}).List(context.Background(), ListOptions{Status: "completed", Limit: 2})
	require.NoError(t, err)
	require.Equal(t, []string{"newest-done", "second-newest"}, ids(got))
}

// TestCodecMemoAndHeartbeat: with WEFT_CODEC_KEYS set, memos (the workflow name in `weft runs` and
// the console) and heartbeat details (streamed text) are decoded with the connection's codec
// (issue 21, item 6).
func TestCodecMemoAndHeartbeat(t *testing.T) {
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	o, err := codec.FromEnv(func(k string) string {
		if k == "WEFT_CODEC_KEYS" {
			return "k1=" + key
		}
		return ""
	})
	require.NoError(t, err)
	dc, err := codec.DataConverter(o)
	require.NoError(t, err)
	enc := func(v any) *commonpb.Payload {
		p, err := dc.ToPayload(v)
		require.NoError(t, err)
		require.True(t, codec.IsEncrypted(p), "the test payloads are encrypted")
		return p
	}
	status, err := converter.GetDefaultDataConverter().ToPayload(runwire.StatusAwaitingReview)
	require.NoError(t, err)
	f := &fakeTemporal{
		runs: []fakeRun{{id: "r1", started: time.Now()}},
		memo: func(id string) *commonpb.Payload { return enc("research") },
		describe: &workflowservice.DescribeWorkflowExecutionResponse{
			WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{
				Status:    enums.WORKFLOW_EXECUTION_STATUS_RUNNING,
				StartTime: timestamppb.Now(),
				Memo:      &commonpb.Memo{Fields: map[string]*commonpb.Payload{runwire.MemoWorkflow: enc("research")}},
				// Search attributes are never encoded by the codec.
				SearchAttributes: &commonpb.SearchAttributes{IndexedFields: map[string]*commonpb.Payload{runwire.StatusAttribute.GetName(): status}},
			},
			PendingActivities: []*workflowpb.PendingActivityInfo{{
				ActivityId: "5", ActivityType: &commonpb.ActivityType{Name: "LLM"},
				HeartbeatDetails: &commonpb.Payloads{Payloads: []*commonpb.Payload{enc("The answer so far")}},
			}},
		},
	}
	c := &Client{t: f, dc: dc}

	runs, err := c.List(context.Background(), ListOptions{})
	require.NoError(t, err)
	require.Len(t, runs, 1)
	require.Equal(t, "research", runs[0].Workflow)

	chats, err := c.ListChats(context.Background(), 5)
	require.NoError(t, err)
	require.Len(t, chats, 1)
	require.Equal(t, "research", chats[0].Workflow)

	d, err := c.Describe(context.Background(), "r1")
	require.NoError(t, err)
	require.Equal(t, "research", d.Workflow)
	require.Equal(t, runwire.StatusAwaitingReview, d.Weft)
	require.Len(t, d.Pending, 1)
	require.Equal(t, "The answer so far", d.Pending[0].Details)
}
