// Command scaleout measures the same batch of runs on the PostgreSQL cluster with 1, 2 and 4 worker
// processes, with tuned pollers, and on the embedded SQLite server (`make scaleout`). The figures
// go to docs/performance.md.
//
// It is a main: it reads flags and calls internal/ops/cluster (ScaleOut, PrintScale), where the logic
// lives and must stay. It is not part of the weft binary, and its build output is not committed.
package main
