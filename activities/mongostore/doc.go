// Package mongostore is weft's knowledge store on MongoDB (go.mongodb.org/mongo-driver/v2): chunks
// with deterministic ids (ChunkID: collection, source, chunk index, content hash) upserted with
// their embeddings as BSON float32 vectors, so a retried or replayed ingest never duplicates;
// vector search with $vectorSearch where the server has it (Atlas, atlas-local) and otherwise an
// exact top-k in Go over a per-collection cache that stays correct after ingests by any weft
// process (a version document per collection in MetaCollection); and content-addressed blobs
// (BlobCollection) for step outputs too large for workflow history (claim checks); and the
// embedding cache (EmbeddingCacheCollection: vectors by EmbeddingKey, GetEmbeddings/PutEmbeddings);
// and the MCP gateway's sessions (MCPSessionCollection: PutMCPSession, GetMCPSession,
// DeleteMCPSession), so a restarted gateway resumes them.
//
// Entry points: Open (or FromClient), then Store's Upsert, Search, Find, Delete, Aggregate,
// Collections, the vector index helpers and PutBlob/GetBlob; Matches and ValidateFilter
// apply the metadata filters of the exact path.
//
// It uses only what FerretDB v1 implements correctly (no $lookup, no multi-accumulator $group, no
// "$field" projections, no transactions), because `weft dev` serves it from FerretDB. It must not
// import Temporal (go.temporal.io), workflows/ or the activities package.
package mongostore
