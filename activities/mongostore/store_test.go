package mongostore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
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
// after its parts (no head yet) completes when it is retried. Parts of 64 KiB here, not 4 MB:
// the splitting, the ids and the checks do not depend on the size (megabytes through FerretDB
// and SQLite under -race took a minute); TestBlobPartFitsTheStore stores parts of the real size.
func TestBlobRoundTrip(t *testing.T) {
	ctx := context.Background()
	defer mongostore.SetBlobPart(64 << 10)()
	part := mongostore.BlobPart()
	s := open(t)
	db := "blobs1"
	big := incompressible(2*part + part/4) // three parts, stored as they are
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
		{Key: "blob", Value: id}, {Key: "part", Value: 1}, {Key: "data", Value: bson.Binary{Data: make([]byte, part)}}})
	require.NoError(t, err)
	_, err = s.GetBlob(ctx, db, id)
	require.ErrorContains(t, err, "is not the data stored under this id")
}

// TestBlobPartFitsTheStore: a blob one byte over a part, at the part size PutBlob uses (4 MB),
// is stored as two parts the store accepts and reads back whole; the other blob tests use small
// parts (SetBlobPart).
func TestBlobPartFitsTheStore(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	db := "blobs2"
	data := incompressible(mongostore.BlobPart() + 1)
	id, err := s.PutBlob(ctx, db, data)
	require.NoError(t, err)
	n, err := s.Count(ctx, db, mongostore.BlobCollection)
	require.NoError(t, err)
	require.EqualValues(t, 3, n, "two parts and the head")
	got, err := s.GetBlob(ctx, db, id)
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, got))
}

// incompressible is n bytes zstd cannot shrink (a deterministic pseudo-random stream).
func incompressible(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// vectorsJSON is a batch's outputs as PutBlob gets them: n vectors of 256 numbers, as JSON.
func vectorsJSON(n int) []byte {
	r := rand.New(rand.NewPCG(3, 4))
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"text":"text number %d","model":"text-embedding-3-small","dimensions":256,"vector":[`, i)
		for d := range 256 {
			if d > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatFloat(float64(float32(r.Float64()*2-1)/16), 'g', -1, 32))
		}
		b.WriteString("]}")
	}
	b.WriteByte(']')
	return b.Bytes()
}

// TestBlobCompressed: data zstd shrinks is stored compressed, under part ids of its own, and
// read back as it was; blobs stored before compression (no encoding in the head) still read; a
// write of the plain form cut off before its head does not mix its parts with the compressed
// form's; a compressed part changed in the store, and an encoding this weft does not know, are
// errors that say what to do. Parts of 64 KiB and 40 vectors, not 4 MB and 2,000: the same
// shape (two parts as they are, one compressed) in a hundredth of the bytes.
func TestBlobCompressed(t *testing.T) {
	ctx := context.Background()
	defer mongostore.SetBlobPart(64 << 10)()
	part := mongostore.BlobPart()
	s := open(t)
	c, err := mongo.Connect(options.Client().ApplyURI(uri))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Disconnect(ctx) })
	coll := func(db string) *mongo.Collection { return c.Database(db).Collection(mongostore.BlobCollection) }
	head := func(t *testing.T, db, id string) bson.M {
		var h bson.M
		require.NoError(t, coll(db).FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&h))
		return h
	}
	// storedBytes is what the blob's parts hold in the store
	storedBytes := func(t *testing.T, db, id string) int {
		cur, err := coll(db).Find(ctx, bson.D{{Key: "blob", Value: id}})
		require.NoError(t, err)
		var parts []struct {
			Data bson.Binary `bson:"data"`
		}
		require.NoError(t, cur.All(ctx, &parts))
		n := 0
		for _, p := range parts {
			n += len(p.Data.Data)
		}
		return n
	}
	vectors := vectorsJSON(40) // ~120 KB: two parts uncompressed
	require.Greater(t, len(vectors), part)
	require.LessOrEqual(t, len(vectors), 2*part)
	// plainWrite stores data as PutBlob did before compression: parts id#0.., then the head
	plainWrite := func(t *testing.T, db string, data []byte, withHead bool) string {
		sum := sha256.Sum256(data)
		id := hex.EncodeToString(sum[:16])
		n := (len(data) + part - 1) / part
		for i := range n {
			_, err := coll(db).InsertOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("%s#%d", id, i)}, {Key: "blob", Value: id}, {Key: "part", Value: i},
				{Key: "data", Value: bson.Binary{Data: data[i*part : min(len(data), (i+1)*part)]}}})
			require.NoError(t, err)
		}
		if withHead {
			_, err := coll(db).InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "parts", Value: n}, {Key: "size", Value: len(data)}})
			require.NoError(t, err)
		}
		return id
	}

	t.Run("vectors are stored compressed", func(t *testing.T) {
		db := "blobz1"
		id, err := s.PutBlob(ctx, db, vectors)
		require.NoError(t, err)
		h := head(t, db, id)
		require.Equal(t, "zstd", h["encoding"])
		require.EqualValues(t, 1, h["parts"], "compressed, the two parts' bytes fit in one")
		stored := storedBytes(t, db, id)
		require.EqualValues(t, stored, h["stored"])
		require.Less(t, stored, len(vectors)/2, "JSON numbers compress to less than half")
		got, err := s.GetBlob(ctx, db, id)
		require.NoError(t, err)
		require.True(t, bytes.Equal(vectors, got))
		t.Logf("%d bytes of vectors stored as %d (%.2f)", len(vectors), stored, float64(stored)/float64(len(vectors)))
	})
	t.Run("small and incompressible data are stored as they are", func(t *testing.T) {
		db := "blobz2"
		for _, data := range [][]byte{[]byte(`{"a":[1,2,3]}`), incompressible(64 << 10)} {
			id, err := s.PutBlob(ctx, db, data)
			require.NoError(t, err)
			require.NotContains(t, head(t, db, id), "encoding")
			require.Equal(t, len(data), storedBytes(t, db, id))
			got, err := s.GetBlob(ctx, db, id)
			require.NoError(t, err)
			require.True(t, bytes.Equal(data, got))
		}
	})
	t.Run("a blob stored before compression reads", func(t *testing.T) {
		db := "blobz3"
		id := plainWrite(t, db, vectors, true)
		got, err := s.GetBlob(ctx, db, id)
		require.NoError(t, err)
		require.True(t, bytes.Equal(vectors, got))
		again, err := s.PutBlob(ctx, db, vectors) // the head is there: nothing changes
		require.NoError(t, err)
		require.Equal(t, id, again)
		require.NotContains(t, head(t, db, id), "encoding")
		got, err = s.GetBlob(ctx, db, id)
		require.NoError(t, err)
		require.True(t, bytes.Equal(vectors, got))
	})
	t.Run("a plain write cut off before its head does not mix with a compressed one", func(t *testing.T) {
		db := "blobz4"
		id := plainWrite(t, db, vectors, false)
		again, err := s.PutBlob(ctx, db, vectors)
		require.NoError(t, err)
		require.Equal(t, id, again)
		got, err := s.GetBlob(ctx, db, id)
		require.NoError(t, err)
		require.True(t, bytes.Equal(vectors, got))
	})
	t.Run("a changed compressed part is found out", func(t *testing.T) {
		db := "blobz5"
		id, err := s.PutBlob(ctx, db, vectors)
		require.NoError(t, err)
		_, err = coll(db).UpdateOne(ctx, bson.D{{Key: "_id", Value: id + "#z0"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "data", Value: bson.Binary{Data: incompressible(storedBytes(t, db, id))}}}}})
		require.NoError(t, err)
		_, err = s.GetBlob(ctx, db, id)
		require.ErrorContains(t, err, "do not expand")
		require.ErrorContains(t, err, "delete the documents whose _id starts with")
	})
	t.Run("an encoding this weft does not read", func(t *testing.T) {
		db := "blobz6"
		_, err := coll(db).InsertOne(ctx, bson.D{{Key: "_id", Value: "feed"}, {Key: "parts", Value: 1}, {Key: "size", Value: 10}, {Key: "encoding", Value: "brotli"}})
		require.NoError(t, err)
		_, err = s.GetBlob(ctx, db, "feed")
		require.ErrorContains(t, err, `encoding "brotli"`)
	})
}

// TestCacheFollowsItsOwnWrites: a search after this process's own upsert or delete reads no
// collection (the cache is patched to the write's version) and answers as a fresh read would;
// a write by another process in between makes the next search reload.
func TestCacheFollowsItsOwnWrites(t *testing.T) {
	ctx := context.Background()
	s, other := open(t), open(t)
	search := func(st *mongostore.Store, vec []float32, filter map[string]any) []string {
		hits, path, err := st.Search(ctx, "t9", "kb", vec, 10, filter)
		require.NoError(t, err)
		require.Equal(t, mongostore.PathExact, path)
		var got []string
		for _, h := range hits {
			got = append(got, fmt.Sprintf("%s:%s:%.3f", h.Source, h.Content, h.Score))
		}
		return got
	}
	fresh := func(vec []float32, filter map[string]any) []string { return search(open(t), vec, filter) }

	require.NoError(t, s.Upsert(ctx, "t9", "kb", []mongostore.Chunk{
		chunk("kb", "a.md", 0, "alpha", []float32{1, 0, 0}, map[string]any{"year": 2024, "tags": []string{"x"}}),
		chunk("kb", "b.md", 0, "beta", []float32{0, 1, 0}, map[string]any{"year": 2025}),
	}))
	require.Len(t, search(s, []float32{1, 0, 0}, nil), 2)
	loads := mongostore.Loads(s)

	// An upsert that adds one chunk and replaces another (same id, new metadata and vector).
	a := chunk("kb", "a.md", 0, "alpha", []float32{0, 0, 1}, map[string]any{"year": 2026, "nested": map[string]any{"k": "v"}})
	require.NoError(t, s.Upsert(ctx, "t9", "kb", []mongostore.Chunk{a, chunk("kb", "c.md", 0, "gamma", []float32{0.5, 0.5, 0}, map[string]any{"year": 2025})}))
	for _, f := range []map[string]any{nil, {"metadata.year": 2025}, {"metadata.year": map[string]any{"$gte": 2026}}, {"metadata.nested.k": "v"}} {
		require.Equal(t, fresh([]float32{0, 0, 1}, f), search(s, []float32{0, 0, 1}, f), "filter %v", f)
	}
	require.Equal(t, loads, mongostore.Loads(s), "the upsert patched the cache: no reload")

	// A delete by source is applied to the cache too; one by another field reloads.
	n, err := s.Delete(ctx, "t9", "kb", map[string]any{"source": "b.md"})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	require.Equal(t, fresh([]float32{0, 1, 0}, nil), search(s, []float32{0, 1, 0}, nil))
	require.Len(t, search(s, []float32{0, 1, 0}, nil), 2)
	require.Equal(t, loads, mongostore.Loads(s), "the delete patched the cache: no reload")
	_, err = s.Delete(ctx, "t9", "kb", map[string]any{"model": "nothing-stored-has-this"})
	require.NoError(t, err)
	require.Len(t, search(s, []float32{0, 1, 0}, nil), 2)
	require.Equal(t, loads+1, mongostore.Loads(s), "a delete the cache cannot follow reloads it")

	// Another process writes, then this one: the cache is two versions behind and reloads.
	require.NoError(t, other.Upsert(ctx, "t9", "kb", []mongostore.Chunk{chunk("kb", "d.md", 0, "delta", []float32{0, 1, 0}, nil)}))
	require.NoError(t, s.Upsert(ctx, "t9", "kb", []mongostore.Chunk{chunk("kb", "e.md", 0, "eps", []float32{0, 1, 0}, nil)}))
	got := search(s, []float32{0, 1, 0}, nil)
	require.Equal(t, fresh([]float32{0, 1, 0}, nil), got)
	require.Len(t, got, 4, "the other process's chunk is seen")
	require.Equal(t, loads+2, mongostore.Loads(s))
}
