// Package soak is weft's fault campaign: it starts the stack as separate weft processes (`weft dev
// --no-worker` for the Temporal server and the embedded database; workers and the MCP gateway,
// which reach the database through a proxy it can cut), injects the faults a real deployment meets
// — worker kill -9, server SIGTERM and SIGKILL, the knowledge store unreachable, provider errors
// (Fault), load on the gateway — and checks that every run completes, that no completed step ran
// again and that nothing was stored twice.
//
// Entry points: Run (Options; Full is the `make soak` campaign through cmd/soak, Short the one
// `make test` runs in integration.TestSoakShort) and Print (the table of Rows).
//
// It drives weft from outside, as an operator would: processes through internal/ops/proc, runs through
// client/ (definitions through workflows/dsl). It must not import the worker, the interpreter's
// internals or devserver, and nothing in the weft binary imports it.
package soak
