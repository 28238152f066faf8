package mongostore_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/weftworks/weft/activities/mongostore"
)

func randomVectors(n, dims int) ([][]float32, []float32) {
	r := rand.New(rand.NewPCG(1, 2))
	vecs := make([][]float32, n)
	norms := make([]float32, n)
	flat := make([]float32, n*dims)
	for i := range vecs {
		vecs[i] = flat[i*dims : (i+1)*dims]
		var s float32
		for d := range vecs[i] {
			x := r.Float32()*2 - 1
			vecs[i][d] = x
			s += x * x
		}
		norms[i] = s
	}
	return vecs, norms
}

func TestTopKMatchesFullSort(t *testing.T) {
	vecs, norms := randomVectors(2000, 16)
	for i := range norms {
		norms[i] = float32(sqrt(float64(norms[i])))
	}
	q := vecs[7]
	got := mongostore.TopK(vecs, norms, q, 10, nil)
	type pair struct {
		i int
		s float64
	}
	var all []pair
	for i, v := range vecs {
		var dot float64
		for d := range v {
			dot += float64(v[d]) * float64(q[d])
		}
		all = append(all, pair{i, dot / (float64(norms[i]) * float64(norms[7]))})
	}
	sort.Slice(all, func(a, b int) bool { return all[a].s > all[b].s })
	require.Len(t, got, 10)
	for k := range got {
		require.Equal(t, all[k].i, got[k].Index)
	}
	require.Equal(t, 7, got[0].Index)
	even := mongostore.TopK(vecs, norms, q, 3, func(i int) bool { return i%2 == 0 })
	for _, s := range even {
		require.Zero(t, s.Index%2)
	}
}

func sqrt(x float64) float64 {
	z := x
	for i := 0; i < 30; i++ {
		z = (z + x/z) / 2
	}
	return z
}

// BenchmarkExactTop10 is the exact-search kernel over 100,000 × 1024 float32 vectors, next to a
// same-run memory-bandwidth floor: one pass summing the same vectors.
func BenchmarkExactTop10(b *testing.B) {
	vecs, norms := randomVectors(100_000, 1024)
	q := vecs[42]
	b.Run("topk", func(b *testing.B) {
		for b.Loop() {
			if r := mongostore.TopK(vecs, norms, q, 10, nil); len(r) != 10 {
				b.Fatal(len(r))
			}
		}
	})
	b.Run("floor-sum", func(b *testing.B) {
		var total float32
		for b.Loop() {
			var s0, s1, s2, s3 float32
			for _, v := range vecs {
				for i := 0; i+3 < len(v); i += 4 {
					s0 += v[i]
					s1 += v[i+1]
					s2 += v[i+2]
					s3 += v[i+3]
				}
			}
			total += s0 + s1 + s2 + s3
		}
		_ = total
	})
}

// BenchmarkIngestAndSearch writes chunks of 100-dimensional vectors into the embedded FerretDB and
// searches them: chunks/s for upserts, and the exact search latency once the cache is warm.
func BenchmarkIngestAndSearch(b *testing.B) {
	s, err := mongostore.Open(context.Background(), uri)
	require.NoError(b, err)
	ctx := context.Background()
	vecs, _ := randomVectors(2000, 100)
	b.Run("upsert", func(b *testing.B) {
		n := 0
		start := time.Now()
		for b.Loop() {
			batch := make([]mongostore.Chunk, 100)
			for i := range batch {
				v := vecs[(n+i)%len(vecs)]
				batch[i] = mongostore.Chunk{ID: fmt.Sprint("c", n+i), Text: "t", Source: "s", Embedding: bson.NewVector(v), Model: "m"}
			}
			require.NoError(b, s.Upsert(ctx, "bench", "chunks", batch))
			n += len(batch)
		}
		b.ReportMetric(float64(n)/time.Since(start).Seconds(), "chunks/s")
	})
	b.Run("search", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := s.Search(ctx, "bench", "chunks", vecs[3], 10, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPutBlob: storing a batch's outputs (512 KB) in a blob collection that already holds
// 40 of them, with PutBlob's inserts and with the upserts by _id it made before, side by side.
// The embedded FerretDB finds an upsert's document by reading the whole collection, so the
// upsert's cost grows with what is stored; the insert's does not.
//
//	go test ./activities/mongostore -run '^$' -bench PutBlob -benchtime 20x
func BenchmarkPutBlob(b *testing.B) {
	ctx := context.Background()
	s := open(b)
	c, err := mongo.Connect(options.Client().ApplyURI(uri))
	require.NoError(b, err)
	defer func() { _ = c.Disconnect(ctx) }()
	blob := func(seed, i int) []byte {
		// incompressible, so that PutBlob stores it as it is, as the upsert did
		data := make([]byte, 512<<10)
		r := rand.New(rand.NewPCG(uint64(seed), uint64(i)))
		for j := range data {
			data[j] = byte(r.Uint32())
		}
		return data
	}
	upsert := func(db string, data []byte) error {
		// PutBlob's write before: one upsert by _id per part and one for the head
		sum := sha256.Sum256(data)
		id := hex.EncodeToString(sum[:16])
		coll := c.Database(db).Collection(mongostore.BlobCollection)
		if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id + "#0"}}, bson.D{{Key: "$set", Value: bson.D{
			{Key: "blob", Value: id}, {Key: "part", Value: 0}, {Key: "data", Value: bson.Binary{Data: data}}}}}, options.UpdateOne().SetUpsert(true)); err != nil {
			return err
		}
		_, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: bson.D{
			{Key: "parts", Value: 1}, {Key: "size", Value: len(data)}}}}, options.UpdateOne().SetUpsert(true))
		return err
	}
	for run, tc := range []struct {
		name  string
		write func(db string, data []byte) error
	}{
		{"insert", func(db string, data []byte) error { _, err := s.PutBlob(ctx, db, data); return err }},
		{"upsert-before", upsert},
	} {
		b.Run(tc.name, func(b *testing.B) {
			db := fmt.Sprintf("putblob%d%d", run, time.Now().UnixNano()%1e6)
			for i := range 40 {
				_, err := s.PutBlob(ctx, db, blob(run+100, i))
				require.NoError(b, err)
			}
			i := 0
			for b.Loop() {
				require.NoError(b, tc.write(db, blob(run, i)))
				i++
			}
		})
	}
}

// BenchmarkPutBlobVectors: storing and reading a batch's outputs as the batch activity makes
// them (128 vectors of 256 numbers as JSON, ~400 KB) in the embedded FerretDB, compressed (what
// PutBlob does) and as they are (PutBlob's write before), side by side; the collection already
// holds 40 blobs.
//
//	go test ./activities/mongostore -run '^$' -bench PutBlobVectors -benchtime 40x -count 3
func BenchmarkPutBlobVectors(b *testing.B) {
	ctx := context.Background()
	s := open(b)
	c, err := mongo.Connect(options.Client().ApplyURI(uri))
	require.NoError(b, err)
	defer func() { _ = c.Disconnect(ctx) }()
	base := vectorsJSON(128)
	vectors := func() []byte { // a different blob each time
		return fmt.Appendf(slices.Clip(base[:len(base)-1]), `,%d]`, time.Now().UnixNano())
	}
	plain := func(db string, data []byte) (string, error) {
		sum := sha256.Sum256(data)
		id := hex.EncodeToString(sum[:16])
		coll := c.Database(db).Collection(mongostore.BlobCollection)
		if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: id + "#0"}, {Key: "blob", Value: id}, {Key: "part", Value: 0},
			{Key: "data", Value: bson.Binary{Data: data}}}}); err != nil {
			return "", err
		}
		_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "parts", Value: 1}, {Key: "size", Value: len(data)}})
		return id, err
	}
	compressed := func(db string, data []byte) (string, error) { return s.PutBlob(ctx, db, data) }
	for run, tc := range []struct {
		name  string
		write func(db string, data []byte) (string, error)
	}{{"write-zstd", compressed}, {"write-plain", plain}} {
		db := fmt.Sprintf("vecblob%d%d", run, time.Now().UnixNano()%1e6)
		var ids []string
		for range 40 {
			id, err := tc.write(db, vectors())
			require.NoError(b, err)
			ids = append(ids, id)
		}
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				_, err := tc.write(db, vectors())
				require.NoError(b, err)
			}
		})
		b.Run("read"+strings.TrimPrefix(tc.name, "write"), func(b *testing.B) {
			i := 0
			for b.Loop() {
				_, err := s.GetBlob(ctx, db, ids[i%len(ids)])
				require.NoError(b, err)
				i++
			}
		})
	}
}
