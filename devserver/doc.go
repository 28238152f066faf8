// Package devserver runs weft's embedded Temporal: a real Temporal server in-process
// (go.temporal.io/server) with its data in SQLite in a data directory (or in memory), or in
// PostgreSQL, and its Web UI, with weft's search attributes (SearchAttributes) registered and the
// namespace created. Data survives restarts. It binds 127.0.0.1 unless told another host.
//
// Entry point: Start (Options) returns a Server with the frontend and UI addresses and Stop. `weft
// dev` and `weft server` reach it through weft-stack (cmd/weft-stack); the integration tests start
// one of their own.
//
// It links the whole server, so only cmd/weft-stack and the integration tests may import it; the
// weft binary's packages (starter and below) must not. It runs no worker and no weft code.
package devserver
