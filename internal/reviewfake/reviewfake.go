// Package reviewfake is a Temporal client for tests of the review listings (client, the CLI,
// the MCP gateway): runs that each wait on one review, listed as visibility lists them. It
// stands in for a server only where one would have to hold hundreds of waiting runs.
package reviewfake

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/workflows"
)

// From is when run r0 started; run r{i} started, and asked its review, i minutes later.
var From = time.Date(2025, 1, 1, 10, 0, 0, 0, time.UTC)

// Runs is a Temporal whose N runs (r0 … r{N-1}, r0 the oldest) each wait on one review
// (id "gate"), listed newest first as visibility does, PageSize a page (1,000 when unset).
type Runs struct {
	tclient.Client
	N int
	// Decided: each run's own state has no review left (decided since visibility marked it
	// waiting), so a listing shows none of them.
	Decided bool
	// StartedBy, when set, names who started run i, in the memo field MemoKey.
	StartedBy func(i int) string
	MemoKey   string
	// Data: each review carries "data of <run id>" as its data.
	Data bool
	// Pages counts the listing pages read (safe for concurrent listings).
	Pages atomic.Int64
}

// ListWorkflow lists the runs newest first, a page at a time.
func (f *Runs) ListWorkflow(_ context.Context, r *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	f.Pages.Add(1)
	from := 0
	if len(r.NextPageToken) > 0 {
		from, _ = strconv.Atoi(string(r.NextPageToken))
	}
	size := int(r.PageSize)
	if size <= 0 {
		size = 1000
	}
	to := min(from+size, f.N)
	resp := &workflowservice.ListWorkflowExecutionsResponse{}
	for k := from; k < to; k++ {
		i := f.N - 1 - k // newest first
		info := &workflowpb.WorkflowExecutionInfo{
			Execution: &commonpb.WorkflowExecution{WorkflowId: fmt.Sprintf("r%d", i)}, Type: &commonpb.WorkflowType{Name: workflows.WorkflowType},
			Status: enums.WORKFLOW_EXECUTION_STATUS_RUNNING, StartTime: timestamppb.New(From.Add(time.Duration(i) * time.Minute))}
		if f.StartedBy != nil {
			who, err := converter.GetDefaultDataConverter().ToPayload(f.StartedBy(i))
			if err != nil {
				return nil, err
			}
			info.Memo = &commonpb.Memo{Fields: map[string]*commonpb.Payload{f.MemoKey: who}}
		}
		resp.Executions = append(resp.Executions, info)
	}
	if to < f.N {
		resp.NextPageToken = []byte(strconv.Itoa(to))
	}
	return resp, nil
}

// QueryWorkflow answers a run's state: awaiting its review, or (Decided) running with none.
func (f *Runs) QueryWorkflow(_ context.Context, id, _, _ string, _ ...any) (converter.EncodedValue, error) {
	var i int
	if _, err := fmt.Sscanf(id, "r%d", &i); err != nil {
		return nil, err
	}
	st := &weftv1.ExecutionState{Workflow: "queue", Status: "awaiting_review",
		PendingReviews: []*weftv1.ReviewRequest{{Id: "gate", Title: "review of " + id, RequestedAt: timestamppb.New(From.Add(time.Duration(i) * time.Minute))}}}
	if f.Data {
		st.PendingReviews[0].Data = structpb.NewStringValue("data of " + id)
	}
	if f.Decided {
		st.Status, st.PendingReviews = "running", nil
	}
	return Value(st)
}

// Value is v as a query's answer.
func Value(v any) (converter.EncodedValue, error) {
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	if err != nil {
		return nil, err
	}
	return value{p}, nil
}

type value struct{ p *commonpb.Payload }

func (v value) HasValue() bool { return true }
func (v value) Get(ptr any) error {
	return converter.GetDefaultDataConverter().FromPayload(v.p, ptr)
}
