package mcp

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	mcplib "github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/timestamppb"

	weftclient "github.com/weftworks/weft/client"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/workflows"
)

// waitingRuns is a Temporal whose n runs (r0 … r{n-1}, r0 the oldest) each wait on one review,
// listed newest first as visibility does, PageSize a page.
type waitingRuns struct {
	tclient.Client
	n int
	// decided: each run's own state has no review left (decided since visibility marked it
	// waiting), so a listing shows none of them
	decided bool
}

var waitingFrom = time.Date(2025, 1, 1, 10, 0, 0, 0, time.UTC)

func (f waitingRuns) ListWorkflow(_ context.Context, r *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	from := 0
	if len(r.NextPageToken) > 0 {
		from, _ = strconv.Atoi(string(r.NextPageToken))
	}
	to := min(from+int(r.PageSize), f.n)
	resp := &workflowservice.ListWorkflowExecutionsResponse{}
	for k := from; k < to; k++ {
		i := f.n - 1 - k
		resp.Executions = append(resp.Executions, &workflowpb.WorkflowExecutionInfo{
			Execution: &commonpb.WorkflowExecution{WorkflowId: fmt.Sprintf("r%d", i)}, Type: &commonpb.WorkflowType{Name: workflows.WorkflowType},
			Status: enums.WORKFLOW_EXECUTION_STATUS_RUNNING, StartTime: timestamppb.New(waitingFrom.Add(time.Duration(i) * time.Minute))})
	}
	if to < f.n {
		resp.NextPageToken = []byte(strconv.Itoa(to))
	}
	return resp, nil
}

func (f waitingRuns) QueryWorkflow(_ context.Context, id, _, _ string, _ ...any) (converter.EncodedValue, error) {
	var i int
	if _, err := fmt.Sscanf(id, "r%d", &i); err != nil {
		return nil, err
	}
	st := &weftv1.ExecutionState{Workflow: "queue", Status: "awaiting_review",
		PendingReviews: []*weftv1.ReviewRequest{{Id: "gate", Title: "review of " + id, RequestedAt: timestamppb.New(waitingFrom.Add(time.Duration(i) * time.Minute))}}}
	if f.decided {
		st.Status, st.PendingReviews = "running", nil
	}
	p, err := converter.GetDefaultDataConverter().ToPayload(st)
	if err != nil {
		return nil, err
	}
	return waitingValue{p}, nil
}

type waitingValue struct{ p *commonpb.Payload }

func (v waitingValue) HasValue() bool { return true }
func (v waitingValue) Get(ptr any) error {
	return converter.GetDefaultDataConverter().FromPayload(v.p, ptr)
}
func (v waitingValue) String() string             { return "state" }
func (v waitingValue) Payload() *commonpb.Payload { return v.p }

// TestReviewListingsSayWhereTheyWereCut: weft_executions with awaitingReview and the review
// prompt read the newest waiting executions (limit, and 50 for the prompt); when more wait they
// say so, with how many reviews wait at least and how to read more, and say nothing of a cut when
// they read every execution waiting.
func TestReviewListingsSayWhereTheyWereCut(t *testing.T) {
	const cut20 = "At least 20 waiting: the reviews of the 20 newest runs waiting are listed; older runs wait too, and they may have waited longest. weft_executions with awaitingReview and limit 100 reads more."
	const cut100 = "At least 100 waiting: the reviews of the 100 newest runs waiting are listed; older runs wait too, and they may have waited longest. The older ones are listed once newer ones are decided."
	const cut50 = "At least 50 waiting: the reviews of the 50 newest runs waiting are listed; older runs wait too, and they may have waited longest. weft_executions with awaitingReview and limit 100 reads more. Tell the person so: the reviews below are not all that wait."
	for _, tc := range []struct {
		name     string
		n, limit int
		cut      string // weft_executions' cut ("" none)
		prompt   string // what the prompt says of it ("" nothing: checked by "At least" being absent)
	}{
		{"every execution read", 10, 20, "", ""},
		{"cut at the default limit", 150, 20, cut20, cut50},
		{"cut at the highest limit", 150, 100, cut100, cut50},
		{"cut by the prompt only", 30, 50, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := New(Options{})
			g.client = weftclient.New(waitingRuns{n: tc.n}, "test")
			res, err := g.awaiting(context.Background(), g.client, tc.limit)
			require.NoError(t, err)
			require.False(t, res.IsError)
			out, ok := res.StructuredContent.(map[string]any)
			require.True(t, ok, "a structured result: %T", res.StructuredContent)
			require.Len(t, out["reviews"], min(tc.n, tc.limit))
			if tc.cut == "" {
				require.NotContains(t, out, "cut")
			} else {
				require.Equal(t, tc.cut, out["cut"])
			}

			p, err := g.reviewPrompt(context.Background(), mcplib.GetPromptRequest{})
			require.NoError(t, err)
			require.Len(t, p.Messages, 1)
			text, ok := p.Messages[0].Content.(mcplib.TextContent)
			require.True(t, ok)
			require.Contains(t, text.Text, fmt.Sprintf("%d review(s) wait", min(tc.n, reviewPromptRuns)))
			if tc.prompt == "" {
				require.NotContains(t, text.Text, "At least")
			} else {
				require.Contains(t, text.Text, tc.prompt)
			}
		})
	}
}

// TestReviewListingsCutShowingNone: when the newest executions waiting show no review (decided
// since visibility marked them, or none the reader may see) and more wait, weft_executions and
// the prompt say that no review waits among them and older ones wait too, not "at least 0".
func TestReviewListingsCutShowingNone(t *testing.T) {
	g := New(Options{})
	g.client = weftclient.New(waitingRuns{n: 150, decided: true}, "test")
	res, err := g.awaiting(context.Background(), g.client, 20)
	require.NoError(t, err)
	out, ok := res.StructuredContent.(map[string]any)
	require.True(t, ok)
	require.Equal(t, "No review you may see waits in the 20 newest runs waiting; older runs wait too, and they may have waited longest. weft_executions with awaitingReview and limit 100 reads more.", out["cut"])

	p, err := g.reviewPrompt(context.Background(), mcplib.GetPromptRequest{})
	require.NoError(t, err)
	text, ok := p.Messages[0].Content.(mcplib.TextContent)
	require.True(t, ok)
	require.Equal(t, "No review you may see waits in the 50 newest runs waiting; older runs wait too, and they may have waited longest. weft_executions with awaitingReview and limit 100 reads more. Tell the person so.", text.Text)
}

// TestExecutionsLimitInRange: weft_executions takes a limit of 1 to 100, its schema's range; one
// out of it (or not a whole number) is refused with the range, not read as the client's default
// of 100 (0) or passed on (500).
func TestExecutionsLimitInRange(t *testing.T) {
	g := New(Options{})
	g.client = weftclient.New(waitingRuns{n: 150}, "test")
	call := func(args map[string]any) *mcplib.CallToolResult {
		req := mcplib.CallToolRequest{}
		req.Params.Name = "weft_executions"
		req.Params.Arguments = args
		res, err := g.executions(context.Background(), req)
		require.NoError(t, err)
		return res
	}
	for _, limit := range []any{0.0, -3.0, 101.0, 500.0, 2.5, "20"} {
		res := call(map[string]any{"awaitingReview": true, "limit": limit})
		require.True(t, res.IsError, "limit %v", limit)
		require.Contains(t, res.Content[0].(mcplib.TextContent).Text, "give a whole number of executions from 1 to 100", "limit %v", limit)
	}
	for _, limit := range []float64{1, 100} {
		res := call(map[string]any{"awaitingReview": true, "limit": limit})
		require.False(t, res.IsError, "limit %v", limit)
		require.Len(t, res.StructuredContent.(map[string]any)["reviews"], int(limit))
	}
	res := call(map[string]any{"awaitingReview": true, "search": "queue"})
	require.True(t, res.IsError)
	require.NotContains(t, res.Content[0].(mcplib.TextContent).Text, "every waiting one at once", "awaitingReview reads the limit newest, not every one")
}
