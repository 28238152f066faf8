package devdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the driver FerretDB's SQLite backend uses (registered as "sqlite")
)

// FerretDB v1.24's SQLite backend finds a document by _id with
//
//	WHERE _ferretdb_sjson->'$._id' = ?
//
// but indexes _id on (_ferretdb_sjson->"_id"), an expression SQLite does not take for the same
// one. So every find, update, upsert and delete by _id reads the whole collection, and a store
// that grows gets slower with each write: a claim-checked output read back, a chunk upserted by
// ingest. idIndexer gives every FerretDB table an index on the expression the lookups use (it is
// no replacement for FerretDB's own unique index, which stays). FerretDB does not know of it: it
// is dropped with its table, and listIndexes does not show it.
//
// It is written by hand because it is a workaround for one version of one backend; it goes with
// an upgrade of FerretDB that fixes the lookup.
type idIndexer struct {
	dir   string
	every time.Duration
	dbs   map[string]*sql.DB // per database file, opened once; run's alone
}

// idIndexSuffix names the index idIndexer adds to a table.
const idIndexSuffix = "_weft_id"

func newIDIndexer(dir string, every time.Duration) *idIndexer {
	return &idIndexer{dir: dir, every: every, dbs: map[string]*sql.DB{}}
}

// run indexes what is there now, then new tables every x.every, until ctx ends.
func (x *idIndexer) run(ctx context.Context) {
	defer x.close()
	t := time.NewTicker(x.every)
	defer t.Stop()
	for {
		x.pass(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pass indexes every FerretDB table of every database file that has no index yet. A file that
// fails (busy, or half created) is indexed on the next pass.
func (x *idIndexer) pass(ctx context.Context) {
	files, _ := filepath.Glob(filepath.Join(x.dir, "*.sqlite")) // an error: none (a directory name Glob reads as a bad pattern)
	for _, f := range files {
		_ = x.indexFile(ctx, f)
	}
}

func (x *idIndexer) indexFile(ctx context.Context, file string) error {
	db, ok := x.dbs[file]
	if !ok {
		var err error
		// mode=rw: never create a file FerretDB has not made
		u := url.URL{Scheme: "file", OmitHost: true, Path: file, RawQuery: "mode=rw&_pragma=busy_timeout(10000)"}
		if db, err = sql.Open("sqlite", u.String()); err != nil {
			return err
		}
		db.SetMaxOpenConns(1)
		x.dbs[file] = db
	}
	// the tables without the index (a table dropped and made again has lost it)
	rows, err := db.QueryContext(ctx, `SELECT t.name FROM sqlite_master t
		WHERE t.type = 'table' AND t.name NOT LIKE '\_ferretdb\_%' ESCAPE '\'
		AND EXISTS (SELECT 1 FROM pragma_table_info(t.name) c WHERE c.name = '_ferretdb_sjson')
		AND NOT EXISTS (SELECT 1 FROM sqlite_master i WHERE i.type = 'index' AND i.name = t.name || ?)`, idIndexSuffix)
	if err != nil {
		return err
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			_ = rows.Close()
			return err
		}
		tables = append(tables, name)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	for _, t := range tables {
		q := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s (_ferretdb_sjson->'$._id')`, quoteIdent(t+idIndexSuffix), quoteIdent(t))
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("table %s: %w", t, err)
		}
	}
	return nil
}

func (x *idIndexer) close() {
	for _, db := range x.dbs {
		_ = db.Close()
	}
}

// quoteIdent quotes an SQLite identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
