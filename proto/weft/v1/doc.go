// Package weftv1 holds the wire contracts every weft process shares, generated from
// proto/weft/v1/weft.proto: the CLI, the gateway and the console start runs with a RunRequest, read
// an ExecutionState (with StepStates, ReviewRequests and TokenUsage) from the `state` query, send
// ReviewDecisions by Update or Signal, and get a RunResult. Temporal carries them as proto JSON, so
// the Web UI shows them readably.
//
// weft.pb.go is generated (`make proto`, protoc-gen-go) and committed: change weft.proto and
// regenerate, never edit it. This doc.go is hand-written; `make proto` writes weft.pb.go only and
// leaves it alone. The package holds data types only: it must not import any weft package or
// Temporal.
package weftv1
