// Package evalreport is the home of `weft eval`'s reports: their types (what `weft eval --json`
// prints and --baseline reads), where they are kept (a folder, .weft/evals by default, one JSON
// file a report), Save (called by weft eval only: the one writer) and List and Read (the
// console's eval pages).
//
// It is a leaf beside internal/safefile: it must not import Temporal, the client, the console or
// the CLI, so both the CLI (which writes) and the console (which reads) can use it.
package evalreport
