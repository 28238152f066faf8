// Package worker wires a Temporal worker for weft: the interpreter (workflows.Run, registered
// as "weft") and one activity per tool. It holds no logic of its own; `weft worker` and
// `weft dev` call it. It is the only place that will read provider credentials.
package worker
