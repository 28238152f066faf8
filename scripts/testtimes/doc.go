// Command testtimes reads `go test -json` on standard input and writes what plain `go test` would
// (a line per package; the output of the tests that failed), then where the time went: each
// package's wall time, slowest first, and every test that took longer than -over. With -report
// FILE the timing table is also written to FILE. It exits 1 when a test, a package or a build
// failed, so `go test -json ... | testtimes` can stand in for `go test` in a Makefile whose shell
// runs with pipefail.
package main
