package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/weftworks/weft/activities/mongostore"
	"github.com/weftworks/weft/activities/toolspec"
)

// MemoryCollection holds long-term memory (remember/recall), one document per fact.
const MemoryCollection = "weft_memory"

// memoryID is the same for the same text in the same scope: remembering twice stores once.
func memoryID(scope, text string) string {
	h := sha256.Sum256([]byte(scope + "\x00" + text))
	return hex.EncodeToString(h[:16])
}

func init() {
	bind(toolspec.Remember, (*Tools).remember)
	bind(toolspec.Recall, (*Tools).recall)
}

func (t *Tools) remember(ctx context.Context, in toolspec.RememberIn) (toolspec.RememberOut, *toolspec.Usage, error) {
	var none toolspec.RememberOut
	store, err := t.Store(ctx)
	if err != nil {
		return none, nil, err
	}
	db, scope, text := t.databaseNamed(in.DB), in.Scope, in.Text
	model, err := store.CollectionModel(ctx, db, MemoryCollection)
	if err != nil {
		return none, nil, err
	}
	if model == "" {
		model = t.defaultEmbeddingModel()
	}
	emb, err := t.embedTexts(ctx, []string{text}, "document", model, 0)
	if err != nil {
		return none, nil, err
	}
	id := memoryID(scope, text)
	existed, err := store.Has(ctx, db, MemoryCollection, id)
	if err != nil {
		return none, nil, err
	}
	now := time.Now().UTC()
	meta := map[string]any{}
	for k, v := range in.Metadata {
		meta[k] = v
	}
	meta["scope"] = scope
	if !existed {
		meta["rememberedAt"] = now.Format(time.RFC3339Nano)
	} else if prev, err := store.Metadata(ctx, db, MemoryCollection, id); err == nil && prev["rememberedAt"] != nil {
		meta["rememberedAt"] = prev["rememberedAt"] // the first time counts
	}
	doc := mongostore.Chunk{ID: id, Text: text, Source: "memory:" + scope, Metadata: meta, Model: emb.Model,
		Embedding: bson.NewVector(emb.Vectors[0]), CreatedAt: now, UpdatedAt: now}
	if err := store.Upsert(ctx, db, MemoryCollection, []mongostore.Chunk{doc}); err != nil {
		return none, nil, err
	}
	return toolspec.RememberOut{ID: id, Scope: scope, Stored: !existed, Duplicate: existed}, &toolspec.Usage{EmbeddingTokens: emb.Tokens}, nil
}

func (t *Tools) recall(ctx context.Context, in toolspec.RecallIn) (toolspec.RecallOut, *toolspec.Usage, error) {
	none := toolspec.RecallOut{}
	store, err := t.Store(ctx)
	if err != nil {
		return none, nil, err
	}
	db, scope := t.databaseNamed(in.DB), in.Scope
	model, err := store.CollectionModel(ctx, db, MemoryCollection)
	if err != nil {
		return none, nil, err
	}
	if model == "" {
		return toolspec.RecallOut{Scope: scope, Results: []toolspec.Memory{}}, nil, nil // nothing remembered yet
	}
	emb, err := t.embedTexts(ctx, []string{in.Query}, "query", model, 0)
	if err != nil {
		return none, nil, err
	}
	hits, _, err := store.Search(ctx, db, MemoryCollection, emb.Vectors[0], in.Limit, map[string]any{"metadata.scope": scope})
	if err != nil {
		return none, nil, err
	}
	when := func(h mongostore.Hit) string { s, _ := h.Metadata["rememberedAt"].(string); return s }
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return when(hits[i]) > when(hits[j])
	})
	out := make([]toolspec.Memory, len(hits))
	for i, h := range hits {
		out[i] = toolspec.Memory{ID: h.ID, Text: h.Content, Score: h.Score, RememberedAt: when(h)}
	}
	return toolspec.RecallOut{Scope: scope, Results: out}, &toolspec.Usage{EmbeddingTokens: emb.Tokens}, nil
}

// Memory is what `weft memory` lists.
type Memory struct {
	ID           string `json:"id"`
	Text         string `json:"text"`
	RememberedAt string `json:"rememberedAt"`
}

// Memories lists a scope's facts, newest first.
func (t *Tools) Memories(ctx context.Context, db, scope string) ([]Memory, error) {
	store, err := t.Store(ctx)
	if err != nil {
		return nil, err
	}
	docs, err := store.Find(ctx, db, MemoryCollection, map[string]any{"metadata.scope": scope}, 1000)
	if err != nil {
		return nil, err
	}
	out := make([]Memory, 0, len(docs))
	for _, d := range docs {
		at, _ := d.Metadata["rememberedAt"].(string)
		out = append(out, Memory{ID: d.ID, Text: d.Text, RememberedAt: at})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].RememberedAt > out[j].RememberedAt })
	return out, nil
}

// Forget deletes one fact of a scope (id) or all of them (id empty); it returns how many.
func (t *Tools) Forget(ctx context.Context, db, scope, id string) (int64, error) {
	store, err := t.Store(ctx)
	if err != nil {
		return 0, err
	}
	filter := map[string]any{"metadata.scope": scope}
	if id != "" {
		filter["_id"] = id
	}
	n, err := store.Delete(ctx, db, MemoryCollection, filter)
	if err != nil {
		return 0, err
	}
	if id != "" && n == 0 {
		return 0, &InputError{Msg: fmt.Sprintf("no memory %s in scope %s (weft memory list %s shows the ids)", id, scope, scope)}
	}
	return n, nil
}
