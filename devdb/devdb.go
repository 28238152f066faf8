package devdb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

// DB is a running embedded database.
type DB struct {
	URI     string
	cancel  context.CancelFunc
	done    chan error
	tempDir string
}

// Start starts FerretDB with its data in dir (created if needed) and waits until it listens.
// port 0 picks a free port.
func Start(ctx context.Context, dir string, port int) (*DB, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("database dir %s: %w", dir, err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	// FerretDB's default, WAL with every commit fsynced, is kept although the fsyncs are much of
	// the wait of a forEach whose outputs go to the store: weft dev's Temporal server syncs its
	// SQLite at checkpoints only (synchronous=normal), and a store synced less than that could lose
	// an output a history it kept refers to. As it is, a power loss can only take history that
	// refers to nothing the store lost: the steps run again.
	return start(ctx, "127.0.0.1", port, &ferretdb.Config{Handler: "sqlite", SQLiteURL: "file:" + abs + "/"}, dir, abs)
}

// StartPostgres serves the MongoDB wire protocol on host:port with FerretDB keeping the data in
// PostgreSQL (postgres://USER:PASSWORD@HOST:PORT/DATABASE): the production shape without MongoDB.
func StartPostgres(ctx context.Context, postgresURL, host string, port int) (*DB, error) {
	return start(ctx, host, port, &ferretdb.Config{Handler: "postgresql", PostgreSQLURL: postgresURL}, "PostgreSQL", "")
}

// idIndexEvery is how often the SQLite files are looked at for new collections to index.
var idIndexEvery = 2 * time.Second

// start starts FerretDB; sqliteDir names the SQLite backend's directory (idIndexer indexes its
// tables), "" for PostgreSQL.
func start(ctx context.Context, host string, port int, cfg *ferretdb.Config, where, sqliteDir string) (*DB, error) {
	if port == 0 {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, err
		}
		port = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	cfg.Listener = ferretdb.ListenerConfig{TCP: addr}
	cfg.Logger = slog.New(slog.DiscardHandler)
	f, err := ferretdb.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("starting FerretDB on %s: %w", where, err)
	}
	rctx, cancel := context.WithCancel(context.Background())
	db := &DB{URI: "mongodb://" + addr + "/", cancel: cancel, done: make(chan error, 1)}
	go func() { db.done <- f.Run(rctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			if sqliteDir != "" {
				go newIDIndexer(sqliteDir, idIndexEvery).run(rctx)
			}
			return db, nil
		}
		select {
		case err := <-db.done:
			cancel()
			return nil, fmt.Errorf("FerretDB stopped while starting on %s: %v", addr, err)
		case <-ctx.Done():
			cancel()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cancel()
			return nil, errors.New("FerretDB did not start listening on " + addr)
		}
	}
}

// Stop stops the database and waits for it.
func (d *DB) Stop() {
	d.cancel()
	select {
	case err := <-d.done:
		_ = err // stopped on request: its error is the cancellation
	case <-time.After(5 * time.Second):
	}
}

// StartTemp starts a database in a new temporary directory (tests); Close stops it and removes
// the directory.
func StartTemp(ctx context.Context) (*DB, error) {
	dir, err := os.MkdirTemp("", "weft-devdb")
	if err != nil {
		return nil, err
	}
	db, err := Start(ctx, dir, 0)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	db.tempDir = dir
	return db, nil
}

// Close stops the database and removes a temporary directory made by StartTemp.
func (d *DB) Close() {
	d.Stop()
	if d.tempDir != "" {
		os.RemoveAll(d.tempDir)
	}
}
