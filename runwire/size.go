package runwire

// MaxValueBytes is the largest value (JSON or protobuf bytes) weft puts into one payload of a
// run's history, well under Temporal's 2 MB so that the rest of the task's payloads (headers,
// the step's other inputs, encoding) fit beside it. The interpreter's size gate holds values to
// it (workflows/sizegate.go); the client refuses start requests over it.
const MaxValueBytes = 3 << 19 // 1.5 MB
