// Command cluster runs docker-compose.yml without Docker (`make cluster`): PostgreSQL, the Temporal
// server on it, the knowledge store (FerretDB) on it, the workers, the MCP gateway and the console
// as processes on this machine, ports moved by -offset; then the demo end to end. Ctrl-C stops
// everything.
//
// It is a main: it reads flags, calls internal/ops/cluster (Up, Demo) and prints the addresses. Logic
// belongs in internal/ops/cluster, where the integration test (TestCluster) uses it too. It is not part
// of the weft binary.
package main
