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
