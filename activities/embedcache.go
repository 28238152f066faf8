package activities

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/weftworks/weft/activities/embedder"
	"github.com/weftworks/weft/activities/mongostore"
	"github.com/weftworks/weft/activities/provider"
)

// The embedding cache keeps every vector a provider returned in the knowledge store
// (mongostore.EmbeddingCacheCollection in the configured database), keyed by model, input type,
// dimensions and text, so that embedding an unchanged corpus again (a re-ingest, a re-index, a
// retried batch) costs no provider call. embedTexts consults it for every tool. It is skipped for
// the local embedder (computing is cheaper than a lookup), without a store, and when the operator
// turns it off (WEFT_EMBED_CACHE=off). A cache that cannot be read or written never fails a call:
// the texts are embedded anyway and the step gets a warning.

// embedCacheTimeout bounds each cache read and write, so that a store that does not answer delays
// an embedding call by at most this much.
var embedCacheTimeout = 10 * time.Second

// embedCacheRetryAfter is how long the cache is left alone after it failed.
var embedCacheRetryAfter = 30 * time.Second

// embedCacheState remembers a failed cache, so that calls while the store is down do not each
// wait for it.
type embedCacheState struct {
	mu        sync.Mutex
	downUntil time.Time
	downErr   string
}

// embedCacheFor reports whether embedding with model goes through the cache.
func (t *Tools) embedCacheFor(model string) bool {
	return !t.cfg.NoEmbedCache && t.cfg.MongoDBURI != "" && model != embedder.Model
}

// cacheDown returns why the cache is being left alone, or "".
func (t *Tools) cacheDown() string {
	c := &t.embedCache
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Now().Before(c.downUntil) {
		return c.downErr
	}
	return ""
}

func (t *Tools) cacheFailed(err error) {
	c := &t.embedCache
	c.mu.Lock()
	defer c.mu.Unlock()
	c.downUntil, c.downErr = time.Now().Add(embedCacheRetryAfter), err.Error()
}

// embedCached embeds texts through the cache: one lookup of all of them, one provider request
// for the distinct texts not found (in input order), one write of what it returned. The vectors
// come back in input order; the tokens are those of the request alone.
func (t *Tools) embedCached(ctx context.Context, p provider.Embedder, texts []string, inputType, model string, dims int) (*provider.Embeddings, error) {
	keys := make([]string, len(texts))
	for i, s := range texts {
		keys[i] = mongostore.EmbeddingKey(model, inputType, dims, s)
	}
	db := t.databaseNamed("")
	var store *mongostore.Store
	var hits map[string]mongostore.CachedEmbedding
	if why := t.cacheDown(); why != "" {
		warn(ctx, fmt.Sprintf("embedding cache skipped, the knowledge store failed recently (%s): texts embedded without it", why))
	} else {
		err := withTimeout(ctx, func(ctx context.Context) error {
			var err error
			if store, err = t.Store(ctx); err == nil {
				hits, err = store.GetEmbeddings(ctx, db, keys)
			}
			return err
		})
		if err != nil {
			store = nil
			t.cacheFailed(err)
			warn(ctx, fmt.Sprintf("embedding cache unavailable (%v): texts embedded without it; check MONGODB_URI, or set WEFT_EMBED_CACHE=off", err))
		}
	}

	out := &provider.Embeddings{Model: model, Vectors: make([][]float32, len(texts))}
	var missTexts, missKeys []string
	missAt := map[string]int{} // key → index in missTexts: a text asked twice is embedded once
	for i, k := range keys {
		if h, ok := hits[k]; ok {
			out.Vectors[i] = h.Vector
			if h.Model != "" {
				out.Model = h.Model
			}
			continue
		}
		if _, ok := missAt[k]; !ok {
			missAt[k] = len(missTexts)
			missTexts = append(missTexts, texts[i])
			missKeys = append(missKeys, k)
		}
	}
	if len(missTexts) == 0 {
		countRequests(ctx, 0)
		return out, nil
	}
	countRequests(ctx, 1)
	emb, err := p.Embed(ctx, missTexts, inputType, model, dims)
	if err != nil {
		return nil, err
	}
	if len(emb.Vectors) != len(missTexts) {
		return nil, &provider.Error{Provider: model, Retryable: true, Msg: fmt.Sprintf("asked for %d embeddings, got %d", len(missTexts), len(emb.Vectors))}
	}
	if emb.Model != "" {
		out.Model = emb.Model
	}
	out.Tokens = emb.Tokens
	for i, k := range keys {
		if j, ok := missAt[k]; ok {
			out.Vectors[i] = emb.Vectors[j]
		}
	}
	if store == nil {
		return out, nil
	}
	put := make([]mongostore.CachedEmbedding, len(missKeys))
	for j, k := range missKeys {
		put[j] = mongostore.CachedEmbedding{Key: k, Model: out.Model, Vector: emb.Vectors[j]}
	}
	if err := withTimeout(ctx, func(ctx context.Context) error { return store.PutEmbeddings(ctx, db, put) }); err != nil {
		t.cacheFailed(err)
		warn(ctx, fmt.Sprintf("embedding cache not updated (%v): the next call embeds these texts again", err))
	}
	return out, nil
}

func withTimeout(ctx context.Context, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, embedCacheTimeout)
	defer cancel()
	return f(ctx)
}
