// Package runwire is the contract between a weft run and whoever talks to it, apart from the
// protobuf messages themselves (proto/weft/v1): the names a client addresses a run by (workflow
// types, the task queue, query, update and signal names, memo and search-attribute keys), the
// values the state query reports (step statuses, failure types), the review vocabulary
// (decisions, gate kinds, size limits) and the chat session's types. The interpreter
// (workflows/) records and answers with these; the client (client/) and the surfaces above it
// send and read them, without linking the interpreter.
//
// Everything here is plain data and pure functions: this package must not import
// go.temporal.io/sdk/workflow, workflows/, client/ or anything that does I/O. What needs the
// workflow SDK stays in workflows/.
//
// Files: names.go (workflow types, task queue, query, update, signal and memo names, the status
// search attribute, step statuses, failure types, chat names), review.go (decisions, gate kinds,
// decision size limits), size.go (the largest value a run's history takes).
package runwire
