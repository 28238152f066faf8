// Command weft-stack is the weft CLI together with the embedded stack: Temporal's server, its Web
// UI and FerretDB. `weft dev`, `weft server` and `weft store` hand themselves over to it (see
// starter/stack.go); it answers every other command the same as weft, only slower to start.
//
// It is a main and holds no logic: it plugs devserver.Start and devdb.Start/StartPostgres into
// starter.ProvideStack and calls starter.Main. It is the only binary that links devserver.
package main
