package console_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	tclient "go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"

	weftclient "github.com/weftworks/weft/client"
	"github.com/weftworks/weft/console"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// toolGateState: an agent's call of ingest waits for approval.
const toolGateState = `{"workflow":"gated","status":"awaiting_review","steps":[{"id":"helper","tool":"agent","status":"awaiting_review","startedAt":"2025-01-01T10:00:00Z"}],
  "pendingReviews":[{"id":"helper/c1","step":"helper","title":"Allow helper to call ingest?","kind":"tool_call","tool":"ingest","data":{"text":"one"},
    "executionId":"weft-fixture","digest":"d1","requestedAt":"2025-01-01T10:00:00Z"}]}`

// alwaysTemporal is gatedTemporal with a tool call's gate: it takes the first decision and keeps it.
type alwaysTemporal struct {
	*gatedTemporal
	mu   sync.Mutex
	sent *weftv1.ReviewDecision
}

func (f *alwaysTemporal) UpdateWorkflow(_ context.Context, o tclient.UpdateWorkflowOptions) (tclient.WorkflowUpdateHandle, error) {
	var d weftv1.ReviewDecision
	if err := protojson.Unmarshal(o.Args[0].(json.RawMessage), &d); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.sent = &d
	f.mu.Unlock()
	return scopedHandle{takenHandle{&d}}, nil
}

func (f *alwaysTemporal) decision() *weftv1.ReviewDecision {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sent
}

// scopedHandle answers with the decision as the run records it, its scope included.
type scopedHandle struct{ takenHandle }

func (h scopedHandle) Get(ctx context.Context, ptr any) error {
	if d, ok := ptr.(*weftv1.ReviewDecision); ok {
		_ = h.takenHandle.Get(ctx, d)
		d.Scope = h.d.GetScope()
	}
	return nil
}

// TestReviewCardApprovesAToolAlways: a tool call's review card has Approve always (and Reject
// always); pressing it sends the decision with scope "run" through the one review operation, and
// the card says the tool's later calls are decided too (issue 44, item 5).
func TestReviewCardApprovesAToolAlways(t *testing.T) {
	g := newGated(t)
	var st weftv1.ExecutionState
	require.NoError(t, protojson.Unmarshal([]byte(toolGateState), &st))
	g.state = &st
	f := &alwaysTemporal{gatedTemporal: g}
	srv := newConsole(t, console.Options{Client: weftclient.New(f, "console-test"), Reviewer: "op", ReviewListingTTL: -1})
	ctx := chromium(t)
	var buttons []string
	var status string
	run(t, ctx, "approve always", chromedp.Navigate(srv.URL+"/reviews"), chromedp.WaitVisible(`#review-list .card button.approve-always`),
		chromedp.Evaluate(`[...document.querySelectorAll('#review-list .card .actions button')].map((b) => b.textContent)`, &buttons),
		chromedp.Click(`#review-list .card button.approve-always`),
		liveText(`#review-list .card.decided .card-status`, &status))
	require.Equal(t, []string{"Approve", "Edit", "Reject", "Approve always", "Reject always"}, buttons)
	require.Contains(t, status, "and the later calls of ingest in this run")
	d := f.decision()
	require.NotNil(t, d)
	require.Equal(t, runwire.DecisionApprove, d.Decision)
	require.Equal(t, runwire.ScopeRun, d.Scope)
	require.Equal(t, "helper/c1", d.Id)
}
