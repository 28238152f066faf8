// Package devdb runs the embedded MongoDB-wire database: FerretDB v1 in-process, either with its
// SQLite backend in a directory on 127.0.0.1 (Start: `weft dev`; StartTemp: tests) or keeping the
// data in PostgreSQL on the host and port given (StartPostgres: `weft store`, the production shape
// without MongoDB). FerretDB v1 has no $vectorSearch, so the knowledge store uses its exact-search
// path here.
//
// It links FerretDB, so only weft-stack (cmd/weft-stack) and tests import it, never the weft
// binary's packages (starter reaches it through starter.ProvideStack). It knows nothing of
// Temporal, workflows or the knowledge store's schema.
package devdb
