// Package provider defines what weft asks of embedding, rerank and generation providers (the
// Embedder, Reranker, Generator and Chatter interfaces and their request and result types), and
// Error, the error every provider client returns, so that the activity adapter can tell Temporal
// whether to retry, and when (FromStatus, Network, RetryAfter), without the clients importing
// Temporal.
//
// It is plain types and small helpers: it must not import Temporal (go.temporal.io), any weft
// package or any provider's client library, so every client and the activities package can depend
// on it.
package provider
