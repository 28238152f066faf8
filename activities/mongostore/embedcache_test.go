package mongostore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftworks/weft/activities/mongostore"
)

// TestEmbeddingKeyNamesEveryPart: a key changes with each of model, input type, dimensions and
// text, and parts cannot run into each other.
func TestEmbeddingKeyNamesEveryPart(t *testing.T) {
	base := mongostore.EmbeddingKey("m", "document", 0, "text")
	require.Len(t, base, 64, "sha256 hex")
	require.Equal(t, base, mongostore.EmbeddingKey("m", "document", 0, "text"))
	for name, k := range map[string]string{
		"model":      mongostore.EmbeddingKey("m2", "document", 0, "text"),
		"input type": mongostore.EmbeddingKey("m", "query", 0, "text"),
		"dimensions": mongostore.EmbeddingKey("m", "document", 256, "text"),
		"text":       mongostore.EmbeddingKey("m", "document", 0, "text2"),
		"boundaries": mongostore.EmbeddingKey("m", "document", 0, "\x00text"),
	} {
		require.NotEqual(t, base, k, name)
	}
}

// TestEmbeddingCacheRoundTrip: PutEmbeddings stores vectors (a retried write keeps one document
// per key), GetEmbeddings returns the ones found, looking them up one by one (FerretDB, which
// this store is: its $in reads the whole collection) or in one query, and the cache is not
// listed as a chunk collection.
func TestEmbeddingCacheRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	require.True(t, mongostore.OneByID(s), "the embedded store is FerretDB")
	for _, oneByID := range []bool{true, false} {
		t.Run(fmt.Sprintf("oneByID=%v", oneByID), func(t *testing.T) {
			mongostore.SetOneByID(s, oneByID)
			db := fmt.Sprintf("embcache%v", oneByID)
			a := mongostore.CachedEmbedding{Key: mongostore.EmbeddingKey("m", "", 0, "a"), Model: "m-v1", Vector: []float32{0.25, -1, 3.5}}
			b := mongostore.CachedEmbedding{Key: mongostore.EmbeddingKey("m", "", 0, "b"), Model: "m-v1", Vector: []float32{1e-7, 2}}
			require.NoError(t, s.PutEmbeddings(ctx, db, []mongostore.CachedEmbedding{a, b}))
			c := mongostore.CachedEmbedding{Key: mongostore.EmbeddingKey("m", "", 0, "c"), Model: "m-v1", Vector: []float32{7}}
			require.NoError(t, s.PutEmbeddings(ctx, db, []mongostore.CachedEmbedding{a, c}), "a retried write, with one new key")
			require.NoError(t, s.PutEmbeddings(ctx, db, nil))

			got, err := s.GetEmbeddings(ctx, db, []string{b.Key, "missing", a.Key, c.Key})
			require.NoError(t, err)
			require.Equal(t, map[string]mongostore.CachedEmbedding{a.Key: a, b.Key: b, c.Key: c}, got)
			n, err := s.Count(ctx, db, mongostore.EmbeddingCacheCollection)
			require.NoError(t, err)
			require.Equal(t, int64(3), n)

			got, err = s.GetEmbeddings(ctx, db, nil)
			require.NoError(t, err)
			require.Empty(t, got)

			cols, err := s.Collections(ctx, db)
			require.NoError(t, err)
			require.Empty(t, cols, "the cache is weft's bookkeeping, not a chunk collection")
		})
	}
}

// BenchmarkGetEmbeddings: one lookup of 1,000 keys in a cache holding 5,000 vectors of 1,024
// dimensions, one by one (what the store does on FerretDB) and with one $in, side by side.
//
//	go test ./activities/mongostore -run '^$' -bench GetEmbeddings
func BenchmarkGetEmbeddings(b *testing.B) {
	ctx := context.Background()
	s := open(b)
	db := "embcachebench"
	vec := make([]float32, 1024)
	for i := range vec {
		vec[i] = float32(i) / 1024
	}
	var keys []string
	for batch := 0; batch < 5; batch++ {
		var es []mongostore.CachedEmbedding
		for i := 0; i < 1000; i++ {
			k := mongostore.EmbeddingKey("m", "", 0, fmt.Sprint(batch, "/", i))
			es = append(es, mongostore.CachedEmbedding{Key: k, Model: "m", Vector: vec})
			if batch == 2 {
				keys = append(keys, k)
			}
		}
		require.NoError(b, s.PutEmbeddings(ctx, db, es))
	}
	for _, oneByID := range []bool{true, false} {
		name := "in"
		if oneByID {
			name = "each"
		}
		b.Run(name, func(b *testing.B) {
			mongostore.SetOneByID(s, oneByID)
			for b.Loop() {
				got, err := s.GetEmbeddings(ctx, db, keys)
				require.NoError(b, err)
				require.Len(b, got, len(keys))
			}
		})
	}
}
