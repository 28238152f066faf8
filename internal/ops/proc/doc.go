// Package proc starts the weft processes that the fault campaign (internal/ops/soak), the cluster and
// the scale-out benchmark (internal/ops/cluster) run: each in its own process group, its output
// appended to a log file.
//
// Entry points: Start, then Proc's Stop (a signal, then kill after a grace period) and Alive.
//
// It is os/exec and nothing else: it must not import any weft package, and nothing in the weft
// binary imports it.
package proc
