package mongostore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/drivertest"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/xoptions"

	"github.com/weftworks/weft/activities/mongostore"
)

// mockStore is a store on the driver's mock deployment: it answers commands with the replies
// given, the way Atlas would. (A mock, because no Atlas can run here.)
func mockStore(t *testing.T, replies ...bson.D) *mongostore.Store {
	md := drivertest.NewMockDeployment(replies...)
	opts := options.Client()
	require.NoError(t, xoptions.SetInternalClientOptions(opts, "deployment", md))
	c, err := mongo.Connect(opts)
	require.NoError(t, err)
	return mongostore.FromClient(c)
}

func cursor(ns string, docs ...bson.D) bson.D {
	batch := bson.A{}
	for _, d := range docs {
		batch = append(batch, d)
	}
	return bson.D{{Key: "ok", Value: 1}, {Key: "cursor", Value: bson.D{{Key: "id", Value: int64(0)}, {Key: "ns", Value: ns}, {Key: "firstBatch", Value: batch}}}}
}

func TestVectorSearchPathOnAtlas(t *testing.T) {
	s := mockStore(t, cursor("kb.docs",
		bson.D{{Key: "_id", Value: "a"}, {Key: "text", Value: "alpha"}, {Key: "source", Value: "a.md"}, {Key: "score", Value: 0.93}},
		bson.D{{Key: "_id", Value: "b"}, {Key: "text", Value: "beta"}, {Key: "source", Value: "b.md"}, {Key: "score", Value: 0.71}},
	))
	hits, path, err := s.Search(context.Background(), "kb", "docs", []float32{1, 0}, 2, map[string]any{"metadata.type": "api"})
	require.NoError(t, err)
	require.Equal(t, mongostore.PathVectorSearch, path)
	require.Equal(t, []mongostore.Hit{{ID: "a", Source: "a.md", Content: "alpha", Score: 0.93}, {ID: "b", Source: "b.md", Content: "beta", Score: 0.71}}, hits)
}

func TestUnknownStageFallsBackToExact(t *testing.T) {
	for _, code := range []int32{40324, 40234, 238, 59} {
		s := mockStore(t,
			bson.D{{Key: "ok", Value: 0}, {Key: "code", Value: code}, {Key: "errmsg", Value: "Unrecognized pipeline stage name: '$vectorSearch'"}},
			cursor("kb.weft_meta", bson.D{{Key: "_id", Value: "docs"}, {Key: "version", Value: int64(3)}}),
			cursor("kb.docs",
				bson.D{{Key: "_id", Value: "a"}, {Key: "text", Value: "alpha"}, {Key: "source", Value: "a.md"}, {Key: "embedding", Value: bson.NewVector([]float32{0, 1})}},
				bson.D{{Key: "_id", Value: "b"}, {Key: "text", Value: "beta"}, {Key: "source", Value: "b.md"}, {Key: "embedding", Value: bson.NewVector([]float32{1, 0})}},
			),
		)
		hits, path, err := s.Search(context.Background(), "kb", "docs", []float32{1, 0}, 1, nil)
		require.NoError(t, err, "code %d", code)
		require.Equal(t, mongostore.PathExact, path)
		require.Equal(t, "b.md", hits[0].Source)
	}
	// Any other failure is reported, not papered over.
	s := mockStore(t, bson.D{{Key: "ok", Value: 0}, {Key: "code", Value: 13}, {Key: "errmsg", Value: "not authorized"}})
	_, _, err := s.Search(context.Background(), "kb", "docs", []float32{1, 0}, 1, nil)
	require.ErrorContains(t, err, "not authorized")
}

func TestCreateAndListVectorIndex(t *testing.T) {
	s := mockStore(t,
		bson.D{{Key: "ok", Value: 1}, {Key: "indexesCreated", Value: bson.A{bson.D{{Key: "id", Value: "1"}, {Key: "name", Value: mongostore.IndexName}}}}},
		cursor("kb.docs", bson.D{{Key: "name", Value: mongostore.IndexName}, {Key: "status", Value: "READY"},
			{Key: "latestDefinition", Value: bson.D{{Key: "fields", Value: bson.A{
				bson.D{{Key: "type", Value: "vector"}, {Key: "path", Value: "embedding"}, {Key: "numDimensions", Value: int32(1024)}, {Key: "similarity", Value: "cosine"}},
				bson.D{{Key: "type", Value: "filter"}, {Key: "path", Value: "metadata.type"}},
			}}}}}),
	)
	name, err := s.CreateVectorIndex(context.Background(), "kb", "docs", 1024, []string{"metadata.type"})
	require.NoError(t, err)
	require.Equal(t, mongostore.IndexName, name)
	list, err := s.ListVectorIndexes(context.Background(), "kb", "docs")
	require.NoError(t, err)
	require.Equal(t, []mongostore.VectorIndex{{Name: mongostore.IndexName, Status: "READY", Dimensions: 1024, Filters: []string{"metadata.type"}}}, list)
}

func TestIndexOnFerretDBSaysWhatToUse(t *testing.T) {
	s := open(t)
	_, err := s.CreateVectorIndex(context.Background(), "t9", "docs", 100, nil)
	require.Error(t, err)
	t.Log(err)
}
