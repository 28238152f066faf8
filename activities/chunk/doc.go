// Package chunk splits text for ingestion, for the chunk and ingest tools: fixed, sentence,
// paragraph, recursive (the default) and markdown strategies, with a target size and an overlap
// counted in characters.
//
// Entry points: Split, and Strategies (the strategy names Split accepts).
//
// It holds pure functions on strings: no I/O, no weft imports, and nothing from Temporal
// (go.temporal.io); it must stay that way so that any process, and tests, can call it.
package chunk
