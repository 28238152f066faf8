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

// TestWritesTakeTurnsOnFerretDB: on FerretDB every write of the store waits for the one in
// flight (its SQLite backend would have it sleep in a busy loop instead), gives up with its
// context while it waits, writing nothing, and goes through once the turn is free.
func TestWritesTakeTurnsOnFerretDB(t *testing.T) {
	s := open(t)
	for _, tc := range []struct {
		name    string
		write   func(ctx context.Context, db string) error
		written func(ctx context.Context, db string) bool
	}{
		{"blob", func(ctx context.Context, db string) error {
			_, err := s.PutBlob(ctx, db, []byte("a large output"))
			return err
		}, func(ctx context.Context, db string) bool {
			n, err := s.Count(ctx, db, mongostore.BlobCollection)
			require.NoError(t, err)
			return n > 0
		}},
		{"cached embeddings", func(ctx context.Context, db string) error {
			return s.PutEmbeddings(ctx, db, []mongostore.CachedEmbedding{{Key: "k1", Model: "m", Vector: []float32{1, 2}}})
		}, func(ctx context.Context, db string) bool {
			got, err := s.GetEmbeddings(ctx, db, []string{"k1"})
			require.NoError(t, err)
			return len(got) == 1
		}},
		{"chunks", func(ctx context.Context, db string) error {
			return s.Upsert(ctx, db, "kb", []mongostore.Chunk{chunk("kb", "a.md", 0, "alpha", []float32{1, 0}, nil)})
		}, func(ctx context.Context, db string) bool {
			n, err := s.Count(ctx, db, "kb")
			require.NoError(t, err)
			return n > 0
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db := fmt.Sprintf("gate%d", time.Now().UnixNano()%1e9)
			release, ok := mongostore.HoldWrites(s)
			require.True(t, ok, "the embedded store is FerretDB: its writes take turns")
			wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			err := tc.write(wctx, db)
			cancel()
			require.ErrorIs(t, err, context.DeadlineExceeded, "a write waits for the one in flight")
			require.False(t, tc.written(ctx, db), "a write that gave up waiting wrote nothing")
			release()
			require.NoError(t, tc.write(ctx, db))
			require.True(t, tc.written(ctx, db))
		})
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
