// Package worker will wire the Temporal worker behind `weft worker` and `weft dev`: dial,
// register the interpreter and one activity per tool in activities/toolspec, run until
// interrupted. It is the only place that reads provider credentials. Wiring only, no logic.
// It arrives with the durable-execution issue.
package worker
