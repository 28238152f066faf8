// Package report is the home of `weft eval`'s reports: their types (what eval.Run returns, `weft
// eval --json` prints and --baseline reads), where they are kept (a folder, .weft/evals by default,
// one JSON file a report), Save (called by weft eval only: the one writer) and List and Read (the
// console's eval pages).
//
// It sits below the eval engine (package eval, which runs cases through a client) so the console
// can read reports without linking the engine: it must not import Temporal, the client, the
// engine, the console or the CLI.
package report
