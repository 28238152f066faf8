package mongostore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/mongostore"
)

// TestWritesTakeTurnsOnFerretDB: on FerretDB's SQLite backend each write of the store waits for
// the one in flight to the same database (SQLite would have it sleep in its busy handler
// instead), gives up with its context while it waits, writing nothing, goes through once the
// turn is free, and does not wait for a write to another database.
func TestWritesTakeTurnsOnFerretDB(t *testing.T) {
	s := open(t)
	count := func(ctx context.Context, db, coll string) int64 {
		n, err := s.Count(ctx, db, coll)
		require.NoError(t, err)
		return n
	}
	for _, tc := range []struct {
		name    string
		prepare func(ctx context.Context, db string)
		write   func(ctx context.Context, db string) error
		written func(ctx context.Context, db string) bool
	}{
		{"blob", nil, func(ctx context.Context, db string) error {
			_, err := s.PutBlob(ctx, db, []byte("a large output"))
			return err
		}, func(ctx context.Context, db string) bool { return count(ctx, db, mongostore.BlobCollection) > 0 }},
		{"cached embeddings", nil, func(ctx context.Context, db string) error {
			return s.PutEmbeddings(ctx, db, []mongostore.CachedEmbedding{{Key: "k1", Model: "m", Vector: []float32{1, 2}}})
		}, func(ctx context.Context, db string) bool {
			got, err := s.GetEmbeddings(ctx, db, []string{"k1"})
			require.NoError(t, err)
			return len(got) == 1
		}},
		{"chunks", nil, func(ctx context.Context, db string) error {
			return s.Upsert(ctx, db, "kb", []mongostore.Chunk{chunk("kb", "a.md", 0, "alpha", []float32{1, 0}, nil)})
		}, func(ctx context.Context, db string) bool { return count(ctx, db, "kb") > 0 }},
		{"delete", func(ctx context.Context, db string) {
			require.NoError(t, s.Upsert(ctx, db, "kb", []mongostore.Chunk{chunk("kb", "a.md", 0, "alpha", []float32{1, 0}, nil)}))
		}, func(ctx context.Context, db string) error {
			_, err := s.Delete(ctx, db, "kb", map[string]any{"source": "a.md"})
			return err
		}, func(ctx context.Context, db string) bool { return count(ctx, db, "kb") == 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db := fmt.Sprintf("gate%d", time.Now().UnixNano()%1e9)
			if tc.prepare != nil {
				tc.prepare(ctx, db)
			}
			release, ok := mongostore.HoldWrites(s, db)
			t.Cleanup(release)
			require.True(t, ok, "the embedded store is FerretDB on SQLite: its writes take turns")
			wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			err := tc.write(wctx, db)
			cancel()
			require.ErrorIs(t, err, context.DeadlineExceeded, "a write waits for the one in flight")
			require.False(t, tc.written(ctx, db), "a write that gave up waiting wrote nothing")
			other := db + "x"
			if tc.prepare != nil {
				tc.prepare(ctx, other)
			}
			require.NoError(t, tc.write(ctx, other), "a write to another database does not wait")
			require.True(t, tc.written(ctx, other))
			waiting := make(chan error, 1)
			go func() { waiting <- tc.write(ctx, db) }()
			release()
			require.NoError(t, <-waiting, "the waiting write goes through once the turn is free")
			require.True(t, tc.written(ctx, db))
		})
	}
}

// TestFerretDBBackend: the gate is on for FerretDB on SQLite and when FerretDB has not named its
// backend yet, off on PostgreSQL (which takes concurrent writes), read from its startup warnings.
func TestFerretDBBackend(t *testing.T) {
	entry := func(msg string) string { return `{"msg":"` + msg + `","tags":["startupWarnings"],"s":"I"}` }
	for _, tc := range []struct {
		lines   []string
		backend string
		gated   bool
	}{
		{[]string{entry("Powered by FerretDB v1.24.2 and SQLite 3.46.1."), entry("Please star us on GitHub.")}, "SQLite", true},
		{[]string{entry("Powered by FerretDB v1.24.2 and PostgreSQL 15.8."), entry("Please star us on GitHub.")}, "PostgreSQL", false},
		{[]string{entry("Powered by FerretDB v1.24.2."), entry("The telemetry state is undecided.")}, "", true},
		{[]string{"not JSON", entry("Debug logging enabled.")}, "", true},
	} {
		got := mongostore.BackendIn(tc.lines)
		require.Equal(t, tc.backend, got, "%v", tc.lines)
		require.Equal(t, tc.gated, mongostore.SQLiteBackend(got))
	}
}

// BenchmarkPutBlobConcurrent: 32 writers each storing a batch's outputs (128 vectors of 256
// numbers, as JSON) at once, as a batched forEach's requests do, with the write gate (the
// store's writes take turns in the client) and without (FerretDB's SQLite backend makes all
// but one writer sleep in its busy handler and try again).
//
//	go test ./activities/mongostore -run '^$' -bench PutBlobConcurrent -benchtime 5x -count 3
func BenchmarkPutBlobConcurrent(b *testing.B) {
	ctx := context.Background()
	s := open(b)
	base := vectorsJSON(128)
	const writers, each = 32, 4
	for _, gate := range []bool{true, false} {
		name := "gate"
		if !gate {
			name = "no-gate"
		}
		b.Run(name, func(b *testing.B) {
			mongostore.SetWriteGate(s, gate)
			db := fmt.Sprintf("blobconc%d", time.Now().UnixNano()%1e9)
			n := 0
			for b.Loop() {
				var wg sync.WaitGroup
				errs := make(chan error, writers*each)
				for w := range writers {
					wg.Go(func() {
						for i := range each {
							data := fmt.Appendf(base[:len(base)-1:len(base)-1], `,"%d-%d-%d"]`, n, w, i)
							if _, err := s.PutBlob(ctx, db, data); err != nil {
								errs <- err
							}
						}
					})
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					require.NoError(b, err)
				}
				n++
			}
			b.ReportMetric(float64(writers*each*b.N)/b.Elapsed().Seconds(), "blobs/s")
		})
	}
}
