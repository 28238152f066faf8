package mongostore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/klauspost/compress/zstd"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// CollectionInfo describes a chunk collection.
type CollectionInfo struct {
	Name           string `json:"name"`
	DocumentCount  int64  `json:"documentCount"`
	HasVectorIndex bool   `json:"hasVectorIndex"`
	EmbeddingField string `json:"embeddingField"`
	Dimensions     int    `json:"dimensions"`
	Model          string `json:"model,omitempty"`
}

// Collections lists the database's collections (without weft's own bookkeeping).
func (s *Store) Collections(ctx context.Context, db string) ([]CollectionInfo, error) {
	names, err := s.client.Database(db).ListCollectionNames(ctx, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("listing collections of %s: %w", db, err)
	}
	sort.Strings(names)
	var out []CollectionInfo
	for _, n := range names {
		if n == MetaCollection || n == EmbeddingCacheCollection || n == MCPSessionCollection || strings.HasPrefix(n, "system.") {
			continue
		}
		c := s.client.Database(db).Collection(n)
		count, err := c.CountDocuments(ctx, bson.D{})
		if err != nil {
			return nil, fmt.Errorf("counting %s.%s: %w", db, n, err)
		}
		info := CollectionInfo{Name: n, DocumentCount: count, EmbeddingField: "embedding"}
		var one struct {
			Model     string      `bson:"model"`
			Embedding bson.Vector `bson:"embedding"`
		}
		if err := c.FindOne(ctx, bson.D{}, options.FindOne().SetProjection(bson.D{{Key: "model", Value: 1}, {Key: "embedding", Value: 1}})).Decode(&one); err == nil {
			if v, ok := one.Embedding.Float32OK(); ok {
				info.Dimensions = len(v)
			}
			info.Model = one.Model
		}
		info.HasVectorIndex = s.hasVectorIndex(ctx, c)
		out = append(out, info)
	}
	return out, nil
}

// hasVectorIndex reports whether the collection has weft's Atlas vector index (false where the
// server has no search indexes, such as FerretDB or plain MongoDB).
func (s *Store) hasVectorIndex(ctx context.Context, c *mongo.Collection) bool {
	cur, err := c.SearchIndexes().List(ctx, options.SearchIndexes().SetName(IndexName))
	if err != nil {
		return false
	}
	defer cur.Close(ctx)
	return cur.Next(ctx)
}

// WriteStages are refused by Aggregate.
var WriteStages = []string{"$out", "$merge"}

// Aggregate runs a read-only pipeline and returns at most limit documents as JSON-ready maps.
func (s *Store) Aggregate(ctx context.Context, db, coll string, pipeline []any, limit int) ([]any, error) {
	for i, st := range pipeline {
		m, _ := st.(map[string]any)
		for _, w := range WriteStages {
			if _, ok := m[w]; ok {
				return nil, fmt.Errorf("pipeline[%d]: %s writes data; aggregate is read-only", i, w)
			}
		}
	}
	p := append(append([]any{}, pipeline...), map[string]any{"$limit": limit})
	cur, err := s.client.Database(db).Collection(coll).Aggregate(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("aggregate on %s.%s: %w", db, coll, err)
	}
	defer cur.Close(ctx)
	var out []any
	for cur.Next(ctx) {
		var d bson.M
		if err := cur.Decode(&d); err != nil {
			return nil, err
		}
		delete(d, "embedding")
		out = append(out, jsonable(d))
	}
	return out, cur.Err()
}

// jsonable converts BSON values to what encoding/json and templates handle.
func jsonable(v any) any {
	switch x := v.(type) {
	case bson.M:
		out := map[string]any{}
		for k, e := range x {
			out[k] = jsonable(e)
		}
		return out
	case bson.D:
		out := map[string]any{}
		for _, e := range x {
			out[e.Key] = jsonable(e.Value)
		}
		return out
	case bson.A:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonable(e)
		}
		return out
	case bson.DateTime:
		return x.Time().UTC().Format("2006-01-02T15:04:05.000Z")
	case bson.ObjectID:
		return x.Hex()
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	case bson.Binary:
		return fmt.Sprintf("<binary %d bytes>", len(x.Data))
	}
	return v
}

// CollectionModel returns the embedding model recorded on the collection's chunks ("" when empty).
func (s *Store) CollectionModel(ctx context.Context, db, coll string) (string, error) {
	var one struct {
		Model string `bson:"model"`
	}
	err := s.client.Database(db).Collection(coll).FindOne(ctx, bson.D{}, options.FindOne().SetProjection(bson.D{{Key: "model", Value: 1}})).Decode(&one)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading %s.%s: %w", db, coll, err)
	}
	return one.Model, nil
}

// Count returns how many documents a collection holds (0 when it does not exist).
func (s *Store) Count(ctx context.Context, db, coll string) (int64, error) {
	n, err := s.client.Database(db).Collection(coll).CountDocuments(ctx, bson.D{})
	if err != nil {
		return 0, fmt.Errorf("counting %s.%s: %w", db, coll, err)
	}
	return n, nil
}

// NonEmpty lists "db.collection" for every collection that holds documents, across the
// server's databases (without system databases and weft's bookkeeping), at most limit.
func (s *Store) NonEmpty(ctx context.Context, limit int) ([]string, error) {
	dbs, err := s.client.ListDatabaseNames(ctx, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("listing databases: %w", err)
	}
	sort.Strings(dbs)
	var out []string
	for _, db := range dbs {
		if db == "admin" || db == "local" || db == "config" {
			continue
		}
		names, err := s.client.Database(db).ListCollectionNames(ctx, bson.D{})
		if err != nil {
			continue
		}
		sort.Strings(names)
		for _, n := range names {
			if n == MetaCollection || n == EmbeddingCacheCollection || n == MCPSessionCollection || strings.HasPrefix(n, "system.") {
				continue
			}
			if c, err := s.Count(ctx, db, n); err == nil && c > 0 {
				out = append(out, db+"."+n)
				if len(out) >= limit {
					return out, nil
				}
			}
		}
	}
	return out, nil
}

// Has reports whether a document with the id exists.
func (s *Store) Has(ctx context.Context, db, coll, id string) (bool, error) {
	n, err := s.client.Database(db).Collection(coll).CountDocuments(ctx, bson.D{{Key: "_id", Value: id}})
	if err != nil {
		return false, fmt.Errorf("looking up %s in %s.%s: %w", id, db, coll, err)
	}
	return n > 0, nil
}

// Metadata returns a document's metadata.
func (s *Store) Metadata(ctx context.Context, db, coll, id string) (map[string]any, error) {
	var d struct {
		Metadata map[string]any `bson:"metadata"`
	}
	err := s.client.Database(db).Collection(coll).FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d)
	return d.Metadata, err
}

// Doc is a stored chunk without its vector.
type Doc struct {
	ID       string         `bson:"_id"`
	Text     string         `bson:"text"`
	Source   string         `bson:"source"`
	Metadata map[string]any `bson:"metadata"`
}

// Find returns up to limit documents matching an equality filter (dotted paths allowed).
func (s *Store) Find(ctx context.Context, db, coll string, filter map[string]any, limit int) ([]Doc, error) {
	f := bson.D{}
	for k, v := range filter {
		f = append(f, bson.E{Key: k, Value: v})
	}
	cur, err := s.client.Database(db).Collection(coll).Find(ctx, f, options.Find().SetLimit(int64(limit)).SetProjection(bson.D{{Key: "embedding", Value: 0}}))
	if err != nil {
		return nil, fmt.Errorf("reading %s.%s: %w", db, coll, err)
	}
	var out []Doc
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("reading %s.%s: %w", db, coll, err)
	}
	return out, nil
}

// Delete removes the documents matching an equality filter and bumps the collection's version
// (so search caches in every process drop them).
func (s *Store) Delete(ctx context.Context, db, coll string, filter map[string]any) (int64, error) {
	f := bson.D{}
	for k, v := range filter {
		f = append(f, bson.E{Key: k, Value: v})
	}
	var deleted int64
	err := s.write(ctx, db, func() error {
		res, err := s.client.Database(db).Collection(coll).DeleteMany(ctx, f)
		if err != nil {
			return fmt.Errorf("deleting from %s.%s: %w", db, coll, err)
		}
		deleted = res.DeletedCount
		v, err := s.bump(ctx, db, coll)
		if err != nil {
			return err
		}
		if cacheFilter(filter) {
			s.patch(db, coll, v, func(c *cache) {
				c.remove(func(i int) bool {
					return Matches(filter, map[string]any{"_id": c.ids[i], "source": c.sources[i], "text": c.texts[i], "metadata": c.meta[i]})
				})
			})
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return deleted, nil
}

// cacheFilter reports whether a delete's filter names only what a search cache holds (_id,
// source, text, metadata.*), so the cache can drop the same chunks; a delete by another field
// leaves the cache to be reloaded.
func cacheFilter(filter map[string]any) bool {
	for k := range filter {
		if k != "_id" && k != "source" && k != "text" && !strings.HasPrefix(k, "metadata.") {
			return false
		}
	}
	return true
}

// BlobCollection holds large step outputs kept out of workflow history (claim checks).
const BlobCollection = "weft_blobs"

// blobPart is the most bytes one part of a blob holds: it stays far below MongoDB's 16 MB
// document limit. A var only so that tests store blobs of many parts in kilobytes (SetBlobPart in
// export_test.go); TestBlobPartFitsTheStore stores parts of this size.
var blobPart = 4 << 20

// PutBlob stores data under its content hash (idempotent: the same data is stored once) and
// returns the id. The parts go first and the head last, so a head names parts that are all there;
// the id is only handed out once both are. Inserts, not upserts: a key already stored is a
// duplicate that is ignored, and FerretDB finds an upsert's document by scanning the collection
// (its SQLite backend does not use the _id index for it), which made every write read every blob
// stored before it.
//
// Data that zstd shrinks by a tenth or more is stored compressed (the head says "encoding":
// "zstd"; its parts have ids of their own, id#z0, id#z1, ..., so a write cut off in one form never
// mixes its parts with the other's): a batch's vectors as JSON take a third of the space, and the
// embedded store's cost of an insert grows with its size.
func (s *Store) PutBlob(ctx context.Context, db string, data []byte) (string, error) {
	id := blobID(data)
	c := s.client.Database(db).Collection(BlobCollection)
	stored, encoding, partID := data, "", "%s#%d"
	if len(data) >= minCompressed {
		if z := blobEncoder.EncodeAll(data, make([]byte, 0, len(data)/2)); len(z) <= len(data)-len(data)/10 {
			stored, encoding, partID = z, "zstd", "%s#z%d"
		}
	}
	size := blobPart
	parts := (len(stored) + size - 1) / size
	docs := make([]any, parts)
	for i := range docs {
		end := min(len(stored), (i+1)*size)
		docs[i] = bson.D{{Key: "_id", Value: fmt.Sprintf(partID, id, i)}, {Key: "blob", Value: id}, {Key: "part", Value: i},
			{Key: "data", Value: bson.Binary{Data: stored[i*size : end]}}}
	}
	head := bson.D{{Key: "_id", Value: id}, {Key: "parts", Value: parts}, {Key: "size", Value: len(data)}}
	if encoding != "" {
		head = append(head, bson.E{Key: "encoding", Value: encoding}, bson.E{Key: "stored", Value: len(stored)})
	}
	err := s.write(ctx, db, func() error {
		if len(docs) > 0 {
			if _, err := c.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false)); err != nil && !onlyDuplicates(err) {
				return fmt.Errorf("storing a large output: %w", err)
			}
		}
		if _, err := c.InsertOne(ctx, head); err != nil && !mongo.IsDuplicateKeyError(err) {
			return fmt.Errorf("storing a large output: %w", err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return id, nil
}

// minCompressed is the size from which PutBlob tries compressing: below it the saving is not
// worth a second form.
const minCompressed = 4 << 10

// blobEncoder and blobDecoder compress and expand blobs; EncodeAll and DecodeAll are safe for
// concurrent use. The decoder refuses to expand past maxBlob.
var (
	blobEncoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	blobDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxBlob))
)

// maxBlob bounds what one stored blob may expand to.
const maxBlob = 4 << 30

// blobID is the id data is stored under: its content hash (the first 16 bytes of its sha256, hex).
func blobID(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

// GetBlob reads a blob PutBlob stored, in either form.
func (s *Store) GetBlob(ctx context.Context, db, id string) ([]byte, error) {
	c := s.client.Database(db).Collection(BlobCollection)
	var head struct {
		Parts    int    `bson:"parts"`
		Size     int    `bson:"size"`
		Encoding string `bson:"encoding"`
		Stored   int    `bson:"stored"`
	}
	if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&head); err != nil {
		return nil, fmt.Errorf("large output %s: %w", id, err)
	}
	partID, stored := "%s#%d", head.Size
	switch head.Encoding {
	case "":
	case "zstd":
		partID, stored = "%s#z%d", head.Stored
	default:
		return nil, fmt.Errorf("large output %s is stored with encoding %q, which this weft does not read: run the step on a worker of the weft version that stored it, or newer", id, head.Encoding)
	}
	if stored < 0 || head.Size < 0 || head.Size > maxBlob {
		return nil, fmt.Errorf("large output %s: its head says %d bytes (%d stored), which no write of weft's makes: delete the documents whose _id starts with %q from %s in that database, then run the step again", id, head.Size, stored, id, BlobCollection)
	}
	out := make([]byte, 0, stored)
	for i := 0; i < head.Parts; i++ {
		var part struct {
			Data bson.Binary `bson:"data"`
		}
		if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf(partID, id, i)}}).Decode(&part); err != nil {
			return nil, fmt.Errorf("large output %s, part %d: %w", id, i, err)
		}
		out = append(out, part.Data.Data...)
	}
	if len(out) != stored {
		return nil, fmt.Errorf("large output %s: %d of %d bytes", id, len(out), stored)
	}
	if head.Encoding == "zstd" {
		expanded, err := blobDecoder.DecodeAll(out, make([]byte, 0, head.Size))
		if err == nil && len(expanded) != head.Size {
			err = fmt.Errorf("%d bytes", len(expanded))
		}
		if err != nil {
			return nil, fmt.Errorf("large output %s: its compressed parts do not expand to the %d bytes stored (%v): delete the documents whose _id starts with %q from %s in that database, then run the step again (a write keeps the parts already stored)", id, head.Size, err, id, BlobCollection)
		}
		out = expanded
	}
	// the id is the data's hash: parts of another blob, or a part changed in the store, show here
	if blobID(out) != id {
		return nil, fmt.Errorf("large output %s: what the store holds is not the data stored under this id (a part was changed or replaced): delete the documents whose _id starts with %q from %s in that database, then run the step again (a write keeps the parts already stored)", id, id, BlobCollection)
	}
	return out, nil
}
