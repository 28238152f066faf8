package activities

import (
	"context"
	"fmt"
)

// What `weft ingest` reads and prunes of a collection, from the CLI process (or a Go program's):
// the documents stay written by the ingest tool in a run, and these read what the runs stored,
// so that an unchanged file is never sent again, and remove the documents whose files are gone.

// IngestedMarker is the metadata key `weft ingest` sets on the chunks it stores (true), so that
// IngestedDocuments and RemoveSources never touch chunks other writers stored.
const IngestedMarker = "weftIngest"

// IngestedDocuments returns, for each source `weft ingest` stored in db.coll, the metadata of its
// first chunk; a source with more than one (a replaced document whose run stopped before it
// removed the old chunks) has each.
func (t *Tools) IngestedDocuments(ctx context.Context, db, coll string) (map[string][]map[string]any, error) {
	store, err := t.Store(ctx)
	if err != nil {
		return nil, err
	}
	docs, err := store.Find(ctx, t.databaseNamed(db), coll, map[string]any{"chunkIndex": 0, "metadata." + IngestedMarker: true}, 10_000_000)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]map[string]any, len(docs))
	for _, d := range docs {
		out[d.Source] = append(out[d.Source], d.Metadata)
	}
	return out, nil
}

// RemoveSources removes every chunk `weft ingest` stored in db.coll under the sources and says
// how many went.
func (t *Tools) RemoveSources(ctx context.Context, db, coll string, sources []string) (int64, error) {
	if len(sources) == 0 {
		return 0, nil
	}
	store, err := t.Store(ctx)
	if err != nil {
		return 0, err
	}
	n, err := store.Delete(ctx, t.databaseNamed(db), coll, map[string]any{"source": map[string]any{"$in": sources}, "metadata." + IngestedMarker: true})
	if err != nil {
		return 0, fmt.Errorf("removing %d documents from %s: %w", len(sources), coll, err)
	}
	return n, nil
}

// EmbeddingModel is the model an ingest that names model embeds with: model, or the default of
// this configuration (WEFT_EMBEDDING_MODEL, voyage-4-large with a Voyage key, else the local one).
func (t *Tools) EmbeddingModel(model string) string {
	if model != "" {
		return model
	}
	return t.defaultEmbeddingModel()
}

// PricePerMillion is the catalog's list price of a model in USD per million tokens (false when
// the catalog does not know it).
func PricePerMillion(model string) (float64, bool) {
	for _, m := range Catalog {
		if m.Name == model {
			return m.PricePerM, true
		}
	}
	return 0, false
}

// CloseStore closes the knowledge store connection, if one was opened (a process that made
// Tools for a few reads, as `weft ingest` does; a worker's Tools live as long as it).
func (t *Tools) CloseStore(ctx context.Context) error {
	t.storeMu.Lock()
	defer t.storeMu.Unlock()
	if t.store == nil {
		return nil
	}
	err := t.store.Close(ctx)
	t.store = nil
	return err
}
