// Package integration holds the tests that need a real Temporal server: the CLI against the
// embedded server, review by update and by signal, crash recovery with a worker process killed
// mid-step, recording of the histories the replay tests use, the gateway, the console, the
// short soak and the cluster end to end, and the benchmarks that need a server (`make bench`).
// It is the one test package that starts the server, so CI links it once.
package integration
