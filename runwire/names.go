package runwire

import "go.temporal.io/sdk/temporal"

// The names a client addresses a run by: its workflow type, task queue, query, update and
// signal names, and the keys of its memo.
const (
	// WorkflowType is the registered name of the interpreter's workflow (workflows.Run).
	WorkflowType = "weft"
	// TaskQueue is the default task queue of weft workers.
	TaskQueue = "weft"
	// QueryState returns the *weftv1.ExecutionState of a run.
	QueryState = "state"
	// UpdateReview delivers a review decision with validation (weft CLI, gateway).
	UpdateReview = "review"
	// SignalReview delivers the same decision JSON as a signal (temporal CLI, tctl).
	SignalReview = "review"
	// MemoWorkflow is the memo key holding the workflow's name.
	MemoWorkflow = "workflow"
	// MemoParent is the memo key holding the parent run's id of a child run.
	MemoParent = "parent"
)

// StatusAttribute is the custom search attribute WeftStatus: running, awaiting_review,
// completed or failed. `weft dev` registers it; find paused runs with
// WeftStatus = "awaiting_review".
var StatusAttribute = temporal.NewSearchAttributeKeyKeyword("WeftStatus")

// Error types of the failures a run reports (temporal.ApplicationError's Type).
const (
	ErrInvalidDefinition = "InvalidDefinition"
	ErrStepFailed        = "StepFailed"
	ErrReviewRejected    = "ReviewRejected"
	ErrReviewTimeout     = "ReviewTimeout"
	// ErrBudgetExceeded: a model call would have passed a budget (the file's or a step's), so it
	// was not made; the message names the budget, what was spent and the limit.
	ErrBudgetExceeded = "BudgetExceeded"
)

// Step statuses, as the state query reports them (StepState.status); a run's status is one of
// running, awaiting_review, completed, failed and cancelled.
const (
	StatusPending        = "pending"
	StatusRunning        = "running"
	StatusCompleted      = "completed"
	StatusSkipped        = "skipped"
	StatusFailed         = "failed"
	StatusAwaitingReview = "awaiting_review"
	StatusCancelled      = "cancelled"
	// StatusNotRun: the step never started (the run ended, failed or was cancelled while it
	// waited for its dependencies). It is not cancelled: nothing of it ran.
	StatusNotRun = "not_run"
)

// StoppedInFlight is the error of a step that was running when its run was cancelled.
const StoppedInFlight = "cancelled: the run was cancelled"

// ToolDrift begins the error of an agent tool call a replay (RunRequest.recorded_calls) did not
// run because the recorded run made no call of that tool with those arguments: the model asked
// for something the record cannot answer, which tells a tool's drift apart from the model's.
const ToolDrift = "tool drift: not in the record"

// HandoffToolPrefix names a handoff among an agent's tool calls: "handoff:NAME".
const HandoffToolPrefix = "handoff:"

// A chat session is one long-running workflow (workflows.Chat): each user message is an Update
// that runs one agent turn and returns the answer.
const (
	// ChatWorkflowType is the registered name of the chat workflow (workflows.Chat).
	ChatWorkflowType = "weft-chat"
	// UpdateChatMessage runs one turn: ChatMessage in, ChatReply out.
	UpdateChatMessage = "message"
	// UpdateChatClear forgets the conversation (the session and its usage stay).
	UpdateChatClear = "clear"
	// QueryChat returns the ChatSession.
	QueryChat = "chat"
)
