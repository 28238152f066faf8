// Package runwire is the contract between a weft run and whoever talks to it, apart from the
// protobuf messages themselves (proto/weft/v1): the names a client addresses a run by (workflow
// types, the task queue, query, update and signal names, memo and search-attribute keys), the
// values the state query reports (step statuses, failure types), the review vocabulary
// (decisions, gate kinds, size limits) and the chat session's types. The interpreter
// (workflows/) records and answers with these; the client (client/) and the surfaces above it
// send and read them, without linking the interpreter.
//
// It also holds the pure functions both sides need: the run request a client builds and the
// interpreter compiles (NewRequest, RequestWorkflow), the checks of a review decision the run's
// validator and the client both make before anything reaches history (PickReview,
// CheckDecisionKind, CheckDecisionSize, ReviewerListed, and RoleAdmin, the role that decides any
// review), and readers of what a run records (StepOfActivity, ModelCallConversation, ErrorText,
// ScopeOwner).
//
// Everything here is plain data and pure functions: this package must not import
// go.temporal.io/sdk/workflow, the interpreter (package workflows), client/ or anything that does
// I/O (internal/layers keeps client/ off the interpreter). What needs the workflow SDK stays in
// workflows/.
//
// Files: names.go (workflow types, task queue, query, update, signal and memo names, the status
// search attribute, step statuses, failure types, chat names), request.go (the RunRequest),
// review.go (decisions, gate kinds, decision size limits and checks, ParseDecision),
// reviewpick.go (which pending review a decision answers, who may decide it), chat.go (the chat
// session's types, memory scope owners), activity.go (activity ids, a model call's
// conversation), errors.go (the message of a Temporal error), size.go (the largest value a
// run's history takes, byte sizes in messages).
package runwire
