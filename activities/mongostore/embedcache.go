package mongostore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"golang.org/x/sync/errgroup"
)

// EmbeddingCacheCollection holds embedding vectors already paid for, one document per
// (model, input type, dimensions, text), under EmbeddingKey: an unchanged corpus embedded again
// costs no provider call. The text itself is not stored.
const EmbeddingCacheCollection = "weft_embeddings"

// EmbeddingKey is the cache key of text embedded by model with inputType and dimensions (0: the
// model's default): the sha256 of the four, hex.
func EmbeddingKey(model, inputType string, dimensions int, text string) string {
	h := sha256.New()
	// the text goes last and the others cannot hold a NUL: no two inputs share a key
	h.Write([]byte(model + "\x00" + inputType + "\x00" + strconv.Itoa(dimensions) + "\x00"))
	h.Write([]byte(text))
	return hex.EncodeToString(h.Sum(nil))
}

// CachedEmbedding is one cached vector: its EmbeddingKey, the model that produced it (as the
// provider named it) and the vector.
type CachedEmbedding struct {
	Key    string
	Model  string
	Vector []float32
}

// cachedDoc is how a CachedEmbedding is stored: the vector as a BSON float32 vector, as chunks
// store theirs (a tenth of the size of an array of doubles, and far cheaper for FerretDB to read).
type cachedDoc struct {
	Key    string      `bson:"_id"`
	Model  string      `bson:"model"`
	Vector bson.Vector `bson:"vector"`
}

// cachedFields is the projection of a cachedDoc that a read needs.
var cachedFields = bson.D{{Key: "model", Value: 1}, {Key: "vector", Value: 1}}

// embedding is d as a CachedEmbedding; false when its vector is not one this version wrote (a
// miss: embedded again and overwritten).
func (d cachedDoc) embedding() (CachedEmbedding, bool) {
	v, ok := d.Vector.Float32OK()
	return CachedEmbedding{Key: d.Key, Model: d.Model, Vector: v}, ok
}

// GetEmbeddings reads the cached vectors of keys in one query and returns those found, by key.
// Keys not cached are absent from the map. On FerretDB, whose $in reads the whole collection,
// it looks the keys up one by one instead, a few at a time.
func (s *Store) GetEmbeddings(ctx context.Context, db string, keys []string) (map[string]CachedEmbedding, error) {
	out := make(map[string]CachedEmbedding, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	c := s.client.Database(db).Collection(EmbeddingCacheCollection)
	if s.oneByID {
		return getEach(ctx, c, db, keys)
	}
	cur, err := c.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: keys}}}}, options.Find().SetProjection(cachedFields))
	if err != nil {
		return nil, fmt.Errorf("reading %d cached embeddings from %s.%s: %w", len(keys), db, EmbeddingCacheCollection, err)
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var d cachedDoc
		if err := cur.Decode(&d); err != nil {
			return nil, fmt.Errorf("decoding a cached embedding in %s.%s: %w", db, EmbeddingCacheCollection, err)
		}
		if e, ok := d.embedding(); ok {
			out[d.Key] = e
		}
	}
	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("reading %d cached embeddings from %s.%s: %w", len(keys), db, EmbeddingCacheCollection, err)
	}
	return out, nil
}

// getEachConcurrency is how many of getEach's lookups are in flight.
const getEachConcurrency = 8

// getEach reads the cached vectors of keys with one find by _id each.
func getEach(ctx context.Context, c *mongo.Collection, db string, keys []string) (map[string]CachedEmbedding, error) {
	found := make([]*CachedEmbedding, len(keys))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(getEachConcurrency)
	for i, k := range keys {
		g.Go(func() error {
			var d cachedDoc
			err := c.FindOne(gctx, bson.D{{Key: "_id", Value: k}}, options.FindOne().SetProjection(cachedFields)).Decode(&d)
			if errors.Is(err, mongo.ErrNoDocuments) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("reading a cached embedding from %s.%s: %w", db, EmbeddingCacheCollection, err)
			}
			if e, ok := d.embedding(); ok {
				found[i] = &e
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := make(map[string]CachedEmbedding, len(keys))
	for _, e := range found {
		if e != nil {
			out[e.Key] = *e
		}
	}
	return out, nil
}

// PutEmbeddings stores vectors under their keys in one unordered bulk insert that ignores keys
// already stored: safe to retry, and a key written twice (two workers embedding the same text)
// keeps one document. (An insert, not an upsert: FerretDB finds an upsert's document by scanning.)
func (s *Store) PutEmbeddings(ctx context.Context, db string, es []CachedEmbedding) error {
	if len(es) == 0 {
		return nil
	}
	now := time.Now().UTC()
	docs := make([]any, len(es))
	for i, e := range es {
		docs[i] = bson.D{{Key: "_id", Value: e.Key}, {Key: "model", Value: e.Model}, {Key: "vector", Value: bson.NewVector(e.Vector)},
			{Key: "dimensions", Value: len(e.Vector)}, {Key: "createdAt", Value: now}}
	}
	return s.write(ctx, db, func() error {
		_, err := s.client.Database(db).Collection(EmbeddingCacheCollection).InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
		if err != nil && !onlyDuplicates(err) {
			return fmt.Errorf("caching %d embeddings in %s.%s: %w", len(es), db, EmbeddingCacheCollection, err)
		}
		return nil
	})
}

// onlyDuplicates reports whether every error of a bulk write is a duplicate key.
func onlyDuplicates(err error) bool {
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) || bwe.WriteConcernError != nil || len(bwe.WriteErrors) == 0 {
		return false
	}
	for _, we := range bwe.WriteErrors {
		if !mongo.IsDuplicateKeyError(we.WriteError) {
			return false
		}
	}
	return true
}
