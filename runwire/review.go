package runwire

import (
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	weftv1 "github.com/weftworks/weft/proto/weft/v1"
)

// Review decisions (ReviewDecision.decision).
const (
	DecisionApprove = "approve"
	DecisionEdit    = "edit"
	DecisionReject  = "reject"
)

// Gate kinds (ReviewRequest.kind): a review step's (or one of its forEach items') review, or an
// agent's tool call waiting for approval.
const (
	GateReview   = "review"
	GateToolCall = "tool_call"
)

// MaxEditBytes is the largest edited data (JSON bytes) a review decision may carry. The decision
// is written to the run's history (Temporal refuses a payload over 2 MB, and then fails the
// workflow task instead of answering), and the edited data becomes the step's output, which
// later steps, the run's result and the state carry again.
const MaxEditBytes = 1 << 20

// MaxDecisionBytes is the largest decision (protobuf bytes) the validator accepts.
const MaxDecisionBytes = MaxEditBytes + 64<<10

// CheckDecisionSize refuses a decision for review id whose edit is over MaxEditBytes or which is
// over MaxDecisionBytes in all. The Update's validator checks it, and so does the client before
// it sends one: a refused Update's answer carries the request back, so one over Temporal's 2 MB
// fails the workflow task instead of being refused.
func CheckDecisionSize(id string, d *weftv1.ReviewDecision) error {
	if d.Decision == DecisionEdit {
		if n := jsonSize(d.Data.AsInterface()); n > MaxEditBytes {
			return fmt.Errorf("edited data for %q is too large: %s of JSON, more than a review edit may carry (%s): "+
				"send a shorter edit, or approve and let a later step change the data (put large content in a file or ingest it, and edit a reference to it)",
				id, ByteSize(n), ByteSize(MaxEditBytes))
		}
	}
	if n := proto.Size(d); n > MaxDecisionBytes {
		return fmt.Errorf("the decision for %q is too large: %s, more than %s: shorten the comment", id, ByteSize(n), ByteSize(MaxDecisionBytes))
	}
	return nil
}

// jsonSize is the length of v as JSON (-1 when it does not encode).
func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return -1
	}
	return len(b)
}

// ParseDecision decodes a review decision from JSON (proto JSON field names: step, decision,
// data, reviewer, comment).
func ParseDecision(data []byte) (*weftv1.ReviewDecision, error) {
	d := &weftv1.ReviewDecision{}
	if err := protojson.Unmarshal(data, d); err != nil {
		return nil, fmt.Errorf("review decision is not valid JSON of {step, decision, data, reviewer, comment}: %w", err)
	}
	return d, nil
}
