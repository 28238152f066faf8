// Package cluster runs docker-compose.yml without Docker: PostgreSQL from Debian's package and
// every other service as the `weft` command the file gives it, with its environment variables,
// service names rewritten to 127.0.0.1 and ports moved by an offset, each started once what it
// depends on passes its health check. The compose file is the one source of the production
// settings; `make cluster` (cmd/cluster), `make scaleout` (cmd/scaleout) and the integration test
// TestCluster read it.
//
// Entry points: Load (the compose file), Up (a running Cluster: Address, Down), Demo (the demo runs
// against it), and ScaleOut with PrintScale (the scale-out measurement).
//
// It drives weft from outside, as an operator would: processes started through internal/ops/proc, runs
// through client/ (definitions through workflows/dsl). It must not import the worker, the
// interpreter's internals or the server (devserver): everything it starts is the weft binary.
// Nothing in the weft binary imports it.
package cluster
