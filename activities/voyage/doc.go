// Package voyage is a client for Voyage AI's embeddings and rerank HTTP API.
//
// Entry points: New (key and base URL; "" means DefaultBaseURL), then Client's Embed (batches of
// BatchSize texts; provider.Embedder) and Rerank (provider.Reranker).
//
// It does not retry: Temporal owns retries, guided by the provider.Error it returns (with
// Retry-After). It must not import Temporal (go.temporal.io), workflows/ or the activities package,
// and it reads no environment: the worker passes the key.
package voyage
