package reviewfake

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	tclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
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
	// Pages counts the pages read of listings of the runs waiting for a review (safe for
	// concurrent listings); other listings (the near ids of a lookup that found nothing) are not
	// counted.
	Pages atomic.Int64
	// Prefix of the runs' ids ("r" when empty): run i is Prefix+i.
	Prefix string
	// Stuck, when set, says which runs' workflow task keeps failing (attempt 5): a cancel cannot
	// reach them, so client.CancelRun terminates them.
	Stuck func(i int) bool

	mu         sync.Mutex
	cancelled  []string
	terminated []string
}

// ID is run i's id.
func (f *Runs) ID(i int) string {
	p := f.Prefix
	if p == "" {
		p = "r"
	}
	return p + strconv.Itoa(i)
}

// index is the run id names, false when the fake holds no such run.
func (f *Runs) index(id string) (int, bool) {
	p := f.Prefix
	if p == "" {
		p = "r"
	}
	n, ok := strings.CutPrefix(id, p)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(n)
	if err != nil || i < 0 || i >= f.N || f.ID(i) != id {
		return 0, false
	}
	return i, true
}

func notFound(id string) error {
	return serviceerror.NewNotFound(fmt.Sprintf("workflow not found for ID: %s", id))
}

// Cancelled lists the runs asked to stop, in order.
func (f *Runs) Cancelled() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.cancelled...)
}

// ListWorkflow lists the runs newest first, a page at a time; a query for closed runs lists
// none (they all run).
func (f *Runs) ListWorkflow(_ context.Context, r *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	if strings.Contains(r.Query, runwire.StatusAwaitingReview) {
		f.Pages.Add(1)
	}
	if strings.Contains(r.Query, `ExecutionStatus != "Running"`) {
		return &workflowservice.ListWorkflowExecutionsResponse{}, nil
	}
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
			Execution: &commonpb.WorkflowExecution{WorkflowId: f.ID(i)}, Type: &commonpb.WorkflowType{Name: runwire.WorkflowType},
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
	i, ok := f.index(id)
	if !ok {
		return nil, notFound(id)
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

// DescribeWorkflowExecution describes a run: running since it started.
func (f *Runs) DescribeWorkflowExecution(_ context.Context, id, _ string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	i, ok := f.index(id)
	if !ok {
		return nil, notFound(id)
	}
	out := &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{
		Execution: &commonpb.WorkflowExecution{WorkflowId: id}, Type: &commonpb.WorkflowType{Name: runwire.WorkflowType},
		Status: enums.WORKFLOW_EXECUTION_STATUS_RUNNING, StartTime: timestamppb.New(From.Add(time.Duration(i) * time.Minute))}}
	if f.Stuck != nil && f.Stuck(i) {
		out.PendingWorkflowTask = &workflowpb.PendingWorkflowTaskInfo{Attempt: 5}
	}
	return out, nil
}

// TerminateWorkflow records the request (Terminated).
func (f *Runs) TerminateWorkflow(_ context.Context, id, _, _ string, _ ...any) error {
	return f.record(&f.terminated, id)
}

// record appends run id to list (cancelled, terminated); an id the fake does not hold is not found.
func (f *Runs) record(list *[]string, id string) error {
	if _, ok := f.index(id); !ok {
		return notFound(id)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	*list = append(*list, id)
	return nil
}

// Terminated lists the runs terminated, in order.
func (f *Runs) Terminated() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.terminated...)
}

// GetWorkflowHistory is a run's first event: its start request, naming who started it.
func (f *Runs) GetWorkflowHistory(_ context.Context, id, _ string, _ bool, _ enums.HistoryEventFilterType) tclient.HistoryEventIterator {
	i, ok := f.index(id)
	if !ok {
		return &history{err: notFound(id)}
	}
	req := &weftv1.RunRequest{}
	if f.StartedBy != nil {
		req.StartedBy = f.StartedBy(i)
	}
	p, err := converter.GetDefaultDataConverter().ToPayload(req)
	if err != nil {
		return &history{err: err}
	}
	return &history{events: []*historypb.HistoryEvent{{EventId: 1, EventType: enums.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
		Attributes: &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{
			WorkflowType: &commonpb.WorkflowType{Name: runwire.WorkflowType}, Input: &commonpb.Payloads{Payloads: []*commonpb.Payload{p}}}}}}}
}

// CancelWorkflow records the request (Cancelled).
func (f *Runs) CancelWorkflow(_ context.Context, id, _ string) error {
	return f.record(&f.cancelled, id)
}

// GetWorkflow is a run to wait on: an id the fake does not hold is not found; its runs run
// until ctx ends.
func (f *Runs) GetWorkflow(_ context.Context, id, _ string) tclient.WorkflowRun {
	r := &run{id: id}
	if _, ok := f.index(id); !ok {
		r.err = notFound(id)
	}
	return r
}

type run struct {
	tclient.WorkflowRun
	id  string
	err error
}

func (r *run) GetID() string { return r.id }
func (r *run) Get(ctx context.Context, _ any) error {
	if r.err != nil {
		return r.err
	}
	<-ctx.Done()
	return ctx.Err()
}

// history iterates over events, or fails with err as the SDK's iterator does (HasNext, then
// Next's error).
type history struct {
	events []*historypb.HistoryEvent
	err    error
}

func (h *history) HasNext() bool { return h.err != nil || len(h.events) > 0 }
func (h *history) Next() (*historypb.HistoryEvent, error) {
	if h.err != nil {
		err := h.err
		h.err = nil
		return nil, err
	}
	ev := h.events[0]
	h.events = h.events[1:]
	return ev, nil
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

// Owners is StartedBy for tests that cross the read and act rules: bob started every third run
// (0, 3, …), carl the ones after bob's, and nobody authenticated (the operator) the others.
func Owners(i int) string {
	return [...]string{"bob", "carl", ""}[i%3]
}
