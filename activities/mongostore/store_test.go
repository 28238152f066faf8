package mongostore_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/weftworks/weft/activities/mongostore"
	"github.com/weftworks/weft/devdb"
)

var uri string

func TestMain(m *testing.M) {
	db, err := devdb.StartTemp(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	uri = db.URI
	code := m.Run()
	db.Close()
	os.Exit(code)
}

func open(t testing.TB) *mongostore.Store {
	s, err := mongostore.Open(context.Background(), uri)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

func chunk(coll, source string, i int, text string, vec []float32, meta map[string]any) mongostore.Chunk {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	return mongostore.Chunk{ID: mongostore.ChunkID(coll, source, i, text), Text: text, Source: source, ChunkIndex: i,
		Metadata: meta, Model: "test", Embedding: bson.NewVector(vec), CreatedAt: now, UpdatedAt: now}
}

func TestUpsertIsIdempotentAndSearchFallsBackToExact(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	docs := []mongostore.Chunk{
		chunk("kb", "a.md", 0, "alpha", []float32{1, 0, 0}, map[string]any{"type": "doc", "year": 2024}),
		chunk("kb", "b.md", 0, "beta", []float32{0, 1, 0}, map[string]any{"type": "api", "year": 2025}),
		chunk("kb", "c.md", 0, "gamma", []float32{0.9, 0.1, 0}, map[string]any{"type": "api", "year": 2026}),
	}
	require.NoError(t, s.Upsert(ctx, "t1", "kb", docs))
	require.NoError(t, s.Upsert(ctx, "t1", "kb", docs), "a retried ingest")
	cols, err := s.Collections(ctx, "t1")
	require.NoError(t, err)
	require.Equal(t, []mongostore.CollectionInfo{{Name: "kb", DocumentCount: 3, EmbeddingField: "embedding", Dimensions: 3, Model: "test"}}, cols)

	hits, path, err := s.Search(ctx, "t1", "kb", []float32{1, 0, 0}, 2, nil)
	require.NoError(t, err)
	require.Equal(t, mongostore.PathExact, path, "FerretDB has no $vectorSearch")
	require.Equal(t, []string{"a.md", "c.md"}, []string{hits[0].Source, hits[1].Source})
	require.InDelta(t, 1.0, hits[0].Score, 1e-6)

	for _, c := range []struct {
		filter map[string]any
		want   []string
	}{
		{map[string]any{"metadata.type": "api"}, []string{"c.md", "b.md"}},
		{map[string]any{"metadata.year": map[string]any{"$gte": 2025}}, []string{"c.md", "b.md"}},
		{map[string]any{"metadata.type": map[string]any{"$in": []any{"doc"}}}, []string{"a.md"}},
		{map[string]any{"$or": []any{map[string]any{"metadata.year": 2024}, map[string]any{"metadata.year": map[string]any{"$lt": 2026, "$gt": 2024}}}}, []string{"a.md", "b.md"}},
	} {
		hits, _, err := s.Search(ctx, "t1", "kb", []float32{1, 0, 0}, 10, c.filter)
		require.NoError(t, err)
		var got []string
		for _, h := range hits {
			got = append(got, h.Source)
		}
		require.Equal(t, c.want, got, "%v", c.filter)
	}
}

func TestCacheSeesIngestsFromAnotherProcess(t *testing.T) {
	ctx := context.Background()
	reader, writer := open(t), open(t) // two clients stand for two worker processes
	require.NoError(t, writer.Upsert(ctx, "t2", "kb", []mongostore.Chunk{chunk("kb", "a.md", 0, "a", []float32{1, 0}, nil)}))
	hits, _, err := reader.Search(ctx, "t2", "kb", []float32{0, 1}, 5, nil)
	require.NoError(t, err)
	require.Len(t, hits, 1)
	require.NoError(t, writer.Upsert(ctx, "t2", "kb", []mongostore.Chunk{chunk("kb", "b.md", 0, "b", []float32{0, 1}, nil)}))
	hits, _, err = reader.Search(ctx, "t2", "kb", []float32{0, 1}, 5, nil)
	require.NoError(t, err)
	require.Equal(t, "b.md", hits[0].Source, "the reader's cache reloaded after the writer's ingest")
}

func TestDimensionMismatchAndAggregate(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, s.Upsert(ctx, "t3", "kb", []mongostore.Chunk{
		chunk("kb", "a.md", 0, "a", []float32{1, 0, 0}, map[string]any{"type": "doc"}),
		chunk("kb", "b.md", 0, "b", []float32{0, 1, 0}, map[string]any{"type": "api"}),
	}))
	_, _, err := s.Search(ctx, "t3", "kb", []float32{1, 0}, 5, nil)
	var de *mongostore.DimensionError
	require.ErrorAs(t, err, &de)
	require.Contains(t, err.Error(), "holds 3-dimensional embeddings but the query has 2")

	docs, err := s.Aggregate(ctx, "t3", "kb", []any{map[string]any{"$match": map[string]any{"metadata.type": "api"}}}, 10)
	require.NoError(t, err)
	require.Len(t, docs, 1)
	require.Equal(t, "b.md", docs[0].(map[string]any)["source"])
	require.NotContains(t, docs[0].(map[string]any), "embedding")
	_, err = s.Aggregate(ctx, "t3", "kb", []any{map[string]any{"$out": "copy"}}, 10)
	require.ErrorContains(t, err, "pipeline[0]: $out writes data")
}

func TestFilterValidation(t *testing.T) {
	require.NoError(t, mongostore.ValidateFilter(map[string]any{"metadata.type": "x", "year": map[string]any{"$gt": 1}}))
	require.ErrorContains(t, mongostore.ValidateFilter(map[string]any{"text": map[string]any{"$regex": "a"}}), "operator $regex is not supported")
	require.ErrorContains(t, mongostore.ValidateFilter(map[string]any{"$where": "1"}), "$where is not supported")
}

// TestBlobRoundTrip: PutBlob stores data in parts under its content hash and GetBlob reads it
// back; storing the same data again (a retried activity) keeps one copy, and a write cut off
// after its parts (no head yet) completes when it is retried.
func TestBlobRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	db := "blobs1"
	big := make([]byte, 9<<20) // three parts
	for i := range big {
		big[i] = byte(i * 7)
	}
	for _, tc := range []struct {
		name string
		data []byte
		docs int64 // documents after this write: parts and heads so far
	}{
		{"three parts", big, 4},
		{"the same again", big, 4},
		{"small", []byte(`{"a":1}`), 6},
		{"empty", []byte{}, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := s.PutBlob(ctx, db, tc.data)
			require.NoError(t, err)
			got, err := s.GetBlob(ctx, db, id)
			require.NoError(t, err)
			require.Equal(t, len(tc.data), len(got))
			require.True(t, bytes.Equal(tc.data, got))
			n, err := s.Count(ctx, db, mongostore.BlobCollection)
			require.NoError(t, err)
			require.Equal(t, tc.docs, n)
		})
	}

	id, err := s.PutBlob(ctx, db, big)
	require.NoError(t, err)
	_, err = s.Delete(ctx, db, mongostore.BlobCollection, map[string]any{"_id": id})
	require.NoError(t, err)
	_, err = s.GetBlob(ctx, db, id)
	require.Error(t, err, "the head is gone")
	again, err := s.PutBlob(ctx, db, big)
	require.NoError(t, err)
	require.Equal(t, id, again)
	got, err := s.GetBlob(ctx, db, id)
	require.NoError(t, err)
	require.True(t, bytes.Equal(big, got))

	// a part changed in the store (same size) is found out, not handed back
	_, err = s.Delete(ctx, db, mongostore.BlobCollection, map[string]any{"_id": id + "#1"})
	require.NoError(t, err)
	c, err := mongo.Connect(options.Client().ApplyURI(uri))
	require.NoError(t, err)
	defer func() { _ = c.Disconnect(ctx) }()
	_, err = c.Database(db).Collection(mongostore.BlobCollection).InsertOne(ctx, bson.D{{Key: "_id", Value: id + "#1"},
		{Key: "blob", Value: id}, {Key: "part", Value: 1}, {Key: "data", Value: bson.Binary{Data: make([]byte, 4<<20)}}})
	require.NoError(t, err)
	_, err = s.GetBlob(ctx, db, id)
	require.ErrorContains(t, err, "is not the data stored under this id")
}
