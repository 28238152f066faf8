package activities

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/weftworks/weft/activities/mongostore"
)

// embedBatch is how many texts one embedding call and one upsert take.
const embedBatch = 64

// embedAndStore embeds texts in batches with model (when "", the model the collection's chunks
// were embedded with, else the default) and upserts one document per text: doc(i) gives text i's
// document (its id, stored text, source, metadata), to which the vector, the model and the times
// are added. It is how ingest and code_index store what they read. It returns the model that
// embedded and the tokens it took. (The activity adapter heartbeats while it runs.)
func (t *Tools) embedAndStore(ctx context.Context, store *mongostore.Store, db, coll, model string, texts []string, doc func(i int) mongostore.Chunk) (string, int64, error) {
	if model == "" {
		var err error
		if model, err = store.CollectionModel(ctx, db, coll); err != nil {
			return model, 0, err
		}
	}
	var tokens int64
	now := time.Now().UTC()
	for start := 0; start < len(texts); start += embedBatch {
		end := min(start+embedBatch, len(texts))
		emb, err := t.embedTexts(ctx, texts[start:end], "document", model, 0)
		if err != nil {
			return model, tokens, err
		}
		model = emb.Model
		tokens += emb.Tokens
		docs := make([]mongostore.Chunk, 0, end-start)
		for i := start; i < end; i++ {
			d := doc(i)
			d.Model, d.Embedding, d.CreatedAt, d.UpdatedAt = emb.Model, bson.NewVector(emb.Vectors[i-start]), now, now
			docs = append(docs, d)
		}
		if err := store.Upsert(ctx, db, coll, docs); err != nil {
			return model, tokens, err
		}
	}
	return model, tokens, nil
}

// embedded is what embedChunks gives: the model, one vector per text, the tokens it took.
type embedded struct {
	Model   string
	Vectors [][]float32
	Tokens  int64
	at      time.Time
}

// chunk is d with text c's vector, the model and the times added.
func (e *embedded) chunk(c int, d mongostore.Chunk) mongostore.Chunk {
	d.Model, d.Embedding, d.CreatedAt, d.UpdatedAt = e.Model, bson.NewVector(e.Vectors[c]), e.at, e.at
	return d
}

// embedChunks embeds texts as documents, embedBatch a request, with model (when "", the model
// the collection's chunks were embedded with, else the default), and stores nothing: a batch of
// ingests embeds all its chunks before it stores any (storeChunks).
func (t *Tools) embedChunks(ctx context.Context, store *mongostore.Store, db, coll, model string, texts []string) (*embedded, error) {
	if model == "" {
		var err error
		if model, err = store.CollectionModel(ctx, db, coll); err != nil {
			return nil, err
		}
	}
	out := &embedded{Model: model, Vectors: make([][]float32, 0, len(texts)), at: time.Now().UTC()}
	for start := 0; start < len(texts); start += embedBatch {
		emb, err := t.embedTexts(ctx, texts[start:min(start+embedBatch, len(texts))], "document", out.Model, 0)
		if err != nil {
			return nil, err
		}
		out.Model = emb.Model
		out.Tokens += emb.Tokens
		out.Vectors = append(out.Vectors, emb.Vectors...)
	}
	return out, nil
}

// storeChunks upserts docs, embedBatch at a time.
func storeChunks(ctx context.Context, store *mongostore.Store, db, coll string, docs []mongostore.Chunk) error {
	for start := 0; start < len(docs); start += embedBatch {
		if err := store.Upsert(ctx, db, coll, docs[start:min(start+embedBatch, len(docs))]); err != nil {
			return err
		}
	}
	return nil
}
