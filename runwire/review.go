package runwire

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
