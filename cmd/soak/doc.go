// Command soak runs weft's fault campaign against a weft binary and prints the table (`make soak`;
// -short runs the campaign `make test` runs).
//
// It is a main: it reads flags and calls internal/ops/soak (Run, Print), where the logic lives and must
// stay. It is not part of the weft binary.
package main
