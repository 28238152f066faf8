package mongostore

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// FromClient wraps an existing client (tests use the driver's mock deployment).
func FromClient(c *mongo.Client) *Store {
	return &Store{client: c, caches: map[string]*cache{}, gates: map[string]chan struct{}{}}
}

// ErrNoSearchIndexes means the server has no Atlas search indexes (FerretDB, plain MongoDB);
// search uses the exact path there.
var ErrNoSearchIndexes = errors.New("this server has no vector search indexes (MongoDB Atlas or mongodb/mongodb-atlas-local has them); search uses exact top-k instead")

// VectorIndex describes a vector search index.
type VectorIndex struct {
	Name       string   `json:"name"`
	Status     string   `json:"status,omitempty"`
	Dimensions int      `json:"dimensions,omitempty"`
	Filters    []string `json:"filters,omitempty"`
}

// CreateVectorIndex creates weft's vector index on coll: cosine similarity over the embedding
// field, with the given metadata paths as pre-filter fields.
func (s *Store) CreateVectorIndex(ctx context.Context, db, coll string, dimensions int, filters []string) (string, error) {
	if dimensions <= 0 {
		return "", fmt.Errorf("dimensions must be positive (the collection's embedding size)")
	}
	fields := bson.A{bson.D{{Key: "type", Value: "vector"}, {Key: "path", Value: "embedding"},
		{Key: "numDimensions", Value: dimensions}, {Key: "similarity", Value: "cosine"}}}
	for _, f := range filters {
		fields = append(fields, bson.D{{Key: "type", Value: "filter"}, {Key: "path", Value: f}})
	}
	name, err := s.client.Database(db).Collection(coll).SearchIndexes().CreateOne(ctx, mongo.SearchIndexModel{
		Definition: bson.D{{Key: "fields", Value: fields}},
		Options:    options.SearchIndexes().SetName(IndexName).SetType("vectorSearch"),
	})
	if err != nil {
		if stageUnsupported(err) || searchIndexesUnsupported(err) {
			return "", ErrNoSearchIndexes
		}
		return "", fmt.Errorf("creating the vector index on %s.%s: %w", db, coll, err)
	}
	return name, nil
}

// ListVectorIndexes lists the collection's search indexes.
func (s *Store) ListVectorIndexes(ctx context.Context, db, coll string) ([]VectorIndex, error) {
	cur, err := s.client.Database(db).Collection(coll).SearchIndexes().List(ctx, nil)
	if err != nil {
		if stageUnsupported(err) || searchIndexesUnsupported(err) {
			return nil, ErrNoSearchIndexes
		}
		return nil, fmt.Errorf("listing search indexes of %s.%s: %w", db, coll, err)
	}
	defer cur.Close(ctx)
	var out []VectorIndex
	for cur.Next(ctx) {
		var d indexDoc
		if err := cur.Decode(&d); err != nil {
			return nil, err
		}
		vi := VectorIndex{Name: d.Name, Status: d.Status}
		for _, f := range d.LatestDefinition.Fields {
			switch f.Type {
			case "vector":
				vi.Dimensions = f.NumDimensions
			case "filter":
				vi.Filters = append(vi.Filters, f.Path)
			}
		}
		out = append(out, vi)
	}
	return out, cur.Err()
}

// searchIndexesUnsupported recognises servers without search index commands.
func searchIndexesUnsupported(err error) bool {
	var se mongo.ServerError
	if errors.As(err, &se) {
		for _, code := range []int{59, 115, 40324, 31082, 6047401} {
			if se.HasErrorCode(code) {
				return true
			}
		}
	}
	return false
}

type indexField struct {
	Type          string `bson:"type"`
	Path          string `bson:"path"`
	NumDimensions int    `bson:"numDimensions"`
}

type indexDoc struct {
	Name             string `bson:"name"`
	Status           string `bson:"status"`
	LatestDefinition struct {
		Fields []indexField `bson:"fields"`
	} `bson:"latestDefinition"`
}
