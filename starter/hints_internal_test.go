package starter

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	weftclient "github.com/weftworks/weft/client"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
	"github.com/weftworks/weft/runwire"
)

// TestStatusReviewHintWorksAsWritten: the command weft status shows beside a step awaiting review
// is one the review command accepts: a review's own id, or --step with --all for a step with
// several pending reviews (issue 21: it said --step check for a forEach review, which is refused
// because --step is ambiguous there).
func TestStatusReviewHintWorksAsWritten(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pending []*weftv1.ReviewRequest
		want    string
	}{
		{"one review", []*weftv1.ReviewRequest{{Id: "check", Step: "check"}},
			"awaiting review (weft review run-1 approve --id 'check')"},
		{"a forEach review", []*weftv1.ReviewRequest{{Id: "check[0]", Step: "check"}, {Id: "check[2]", Step: "check"}, {Id: "other", Step: "other"}},
			"awaiting review (2 reviews: weft review run-1 approve --id 'check[0]', or all of them: --step check --all)"},
		{"an agent's tool call", []*weftv1.ReviewRequest{{Id: "check/call_1", Step: "check"}},
			"awaiting review (weft review run-1 approve --id 'check/call_1')"},
		{"a review of a child run", []*weftv1.ReviewRequest{{Id: "approval", Step: "approval", ExecutionId: "run-1/check"}},
			"awaiting review (weft review run-1 approve --id REVIEW; weft reviews lists the ids)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &weftv1.ExecutionState{Workflow: "w", Status: runwire.StatusAwaitingReview, PendingReviews: tc.pending,
				Steps: []*weftv1.StepState{{Id: "check", Status: runwire.StatusAwaitingReview}}}
			var out bytes.Buffer
			printStatus(&out, weftclient.Resolve("run-1", &weftclient.Description{Status: "running"}, st))
			require.Contains(t, out.String(), tc.want)
			require.Contains(t, out.String(), "(run-1)  awaiting review\n", "the header says what the step line says")
			require.NotContains(t, out.String(), "approve --step check)", "--step alone is refused when the step has several reviews")
			// The id the hint names is one the client's review picks.
			for _, r := range tc.pending {
				require.Contains(t, out.String(), "--id '"+r.Id+"'", "each pending review is listed with its id")
			}
		})
	}
}
